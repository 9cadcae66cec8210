// Decode-step inputs and the fp64 reference.
#include "tuner/step/host_inputs.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "tuner/random_fill.h"

namespace ssmtune::step {

StepHostInputs make_step_inputs(const StepProblem& p, uint64_t seed, InputDistribution dist) {
  StepHostInputs in;
  in.problem = p;
  if (!p.validate().is_ok()) return in;
  const DType dt = p.dtype, f32 = DType::kF32;
  const bool large = dist == InputDistribution::kLarge;
  in.rows = p.has_indices ? 2 * p.batch : p.batch;
  const auto bhp = static_cast<size_t>(p.batch * p.dim());
  const auto hpn = static_cast<size_t>(p.dim() * p.dstate);
  const auto bgn = static_cast<size_t>(p.batch * p.groups * p.dstate);
  const auto hp = static_cast<size_t>(p.dim());
  const bool slow = dist == InputDistribution::kSlowDecay;
  // Fixed order: a tensor's stream depends on its position, not on the flags.
  const std::vector<RandomTensor> tensors = {
      {&in.state, static_cast<size_t>(in.rows) * hpn, Sampler::kNormal, 1.0, p.state_dtype},
      {&in.x, bhp, Sampler::kNormal, large ? 4.0 : 1.0, dt},
      {&in.dt, bhp, p.softplus ? Sampler::kNormal : Sampler::kUniform, p.softplus ? 1.0 : 0.5, dt},
      {&in.A, hpn, Sampler::kUniform, slow ? -1e-3 : -1.0, f32, slow ? 0.0 : -1.0},
      {&in.B, bgn, Sampler::kNormal, large ? 4.0 : 1.0, dt},
      {&in.C, bgn, Sampler::kNormal, large ? 4.0 : 1.0, dt},
      {&in.D, p.has_d ? hp : 0, Sampler::kNormal, 1.0, f32},
      {&in.z, p.has_z ? bhp : 0, Sampler::kNormal, 1.0, dt},
      {&in.dt_bias, p.has_dt_bias ? hp : 0, Sampler::kUniform, p.softplus ? 1.0 : 0.5, f32,
       p.softplus ? -4.0 : 0.0},
  };
  fill_random(tensors, seed);
  if (p.has_indices) {
    std::vector<int64_t> rows(static_cast<size_t>(in.rows));
    std::iota(rows.begin(), rows.end(), 0);
    std::mt19937_64 g(seed ^ 0x5eedf00dull);
    // Fisher-Yates with the top bits (portable, unlike std::shuffle).
    for (size_t i = rows.size() - 1; i > 0; --i) {
      const auto j = static_cast<size_t>((g() >> 11) % (i + 1));
      std::swap(rows[i], rows[j]);
    }
    in.indices.assign(rows.begin(), rows.begin() + p.batch);
    if (p.batch >= 4) in.indices.back() = -1;
  }
  return in;
}

StepHostOutputs reference_step(const StepHostInputs& in) {
  const StepProblem& p = in.problem;
  StepHostOutputs o;
  o.state = in.state;
  o.out.assign(static_cast<size_t>(p.batch * p.dim()), 0.0);
  const int64_t P = p.headdim, N = p.dstate, per_group = p.heads / p.groups;
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t row = p.has_indices ? in.indices[static_cast<size_t>(b)] : b;
    if (row < 0) continue;  // padding: out stays 0
    for (int64_t h = 0; h < p.heads; ++h) {
      const int64_t g = h / per_group;
      for (int64_t q = 0; q < P; ++q) {
        const int64_t ch = h * P + q;
        const auto bi = static_cast<size_t>(b * p.dim() + ch);
        double dt = in.dt[bi];
        if (p.has_dt_bias) dt += in.dt_bias[static_cast<size_t>(ch)];
        if (p.softplus) dt = dt <= 20.0 ? std::log1p(std::exp(dt)) : dt;
        const double x = in.x[bi];
        double y = 0;
        for (int64_t n = 0; n < N; ++n) {
          const auto si = static_cast<size_t>((row * p.dim() + ch) * N + n);
          const auto gi = static_cast<size_t>((b * p.groups + g) * N + n);
          const double a = std::exp(dt * in.A[static_cast<size_t>(ch * N + n)]);
          const double s = in.state[si] * a + in.B[gi] * dt * x;
          o.state[si] = s;
          y += s * in.C[gi];
        }
        if (p.has_d) y += in.D[static_cast<size_t>(ch)] * x;
        if (p.has_z) {
          const double z = in.z[bi];
          y *= z / (1.0 + std::exp(-z));
        }
        o.out[bi] = y;
      }
    }
  }
  return o;
}

}  // namespace ssmtune::step
