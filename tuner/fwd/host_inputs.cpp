// Random inputs of a forward problem (tuner/random_fill.h draws them).
#include "tuner/fwd/host_inputs.h"

#include "tuner/random_fill.h"

namespace ssmtune {

FwdHostInputs make_inputs(const FwdProblem& p, uint64_t seed, InputDistribution dist,
                          unsigned threads) {
  FwdHostInputs in;
  in.problem = p;
  if (!p.validate().is_ok()) return in;  // sizes could be negative or overflow: no tensors
  const DType dt = p.dtype;
  const DType f32 = DType::kF32;
  const bool large = dist == InputDistribution::kLarge;
  const size_t bdl = static_cast<size_t>(p.batch * p.dim * p.seqlen);
  const size_t variable = static_cast<size_t>(p.batch * p.groups * p.dstate * p.seqlen);
  const size_t constant = static_cast<size_t>(p.dim * p.dstate);
  const size_t dim = static_cast<size_t>(p.dim);
  const size_t state = static_cast<size_t>(p.batch * p.dim * p.dstate);
  const double a_scale = dist == InputDistribution::kSlowDecay ? -1e-3 : -0.5;
  const double bc_scale = large ? 4.0 : 1.0;

  // Fixed order: a tensor's stream depends on its position here, not on the
  // flags, so turning on z does not change u.
  const std::vector<RandomTensor> tensors = {
      {&in.u, bdl, Sampler::kNormal, large ? 4.0 : 1.0, dt},
      {&in.delta, bdl, Sampler::kUniform, large ? 2.0 : 0.5, dt},
      {&in.A, constant, Sampler::kUniform, a_scale, f32},
      {&in.B, p.variable_b ? variable : constant, Sampler::kNormal, bc_scale,
       p.variable_b ? dt : f32},
      {&in.C, p.variable_c ? variable : constant, Sampler::kNormal, bc_scale,
       p.variable_c ? dt : f32},
      {&in.D, p.has_d ? dim : 0, Sampler::kNormal, 1.0, f32},
      {&in.z, p.has_z ? bdl : 0, Sampler::kNormal, 1.0, dt},
      {&in.delta_bias, p.has_delta_bias ? dim : 0, Sampler::kUniform, 0.5, f32},
      {&in.h0, p.has_initial_state ? state : 0, Sampler::kNormal, 1.0, f32},
  };
  fill_random(tensors, seed, threads);
  return in;
}

}  // namespace ssmtune
