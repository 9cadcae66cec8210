// Random inputs: a portable normal sampler over mt19937_64 (std::
// normal_distribution differs between standard libraries), per-chunk seeds
// so chunks can be generated in parallel, and dtype byte coding.
#include "tuner/fwd/host_inputs.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <future>
#include <random>

#include "core/half.h"
#include "core/thread_pool.h"

namespace ssmtune {
namespace {

constexpr size_t kChunk = size_t{1} << 16;  // elements per independently seeded chunk

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [0, 1) from the top 53 bits.
double uniform(std::mt19937_64& g) { return static_cast<double>(g() >> 11) * 0x1.0p-53; }

enum class Sampler { kNormal, kUniform };

// How one tensor is drawn: scale * randn or scale * rand, stored in dtype.
struct Spec {
  std::vector<double>* out;
  size_t count;
  Sampler sampler;
  double scale;
  DType dtype;
};

void fill_chunk(const Spec& s, uint64_t seed, size_t begin, size_t end) {
  std::mt19937_64 g(seed);
  double* out = s.out->data();
  if (s.sampler == Sampler::kUniform) {
    for (size_t i = begin; i < end; ++i) out[i] = round_to(s.scale * uniform(g), s.dtype);
    return;
  }
  // Marsaglia's polar method, both values used.
  for (size_t i = begin; i < end; i += 2) {
    double x, y, r2;
    do {
      x = 2.0 * uniform(g) - 1.0;
      y = 2.0 * uniform(g) - 1.0;
      r2 = x * x + y * y;
    } while (r2 >= 1.0 || r2 == 0.0);
    const double f = s.scale * std::sqrt(-2.0 * std::log(r2) / r2);
    out[i] = round_to(f * x, s.dtype);
    if (i + 1 < end) out[i + 1] = round_to(f * y, s.dtype);
  }
}

}  // namespace

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
  const Spec specs[] = {
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

  size_t total = 0;
  for (const Spec& s : specs) {
    s.out->resize(s.count);
    total += s.count;
  }
  auto chunk_seed = [seed](size_t tensor, size_t chunk) {
    return splitmix64(splitmix64(seed ^ splitmix64(tensor + 1)) + chunk);
  };
  auto run_all = [&](auto&& submit) {
    for (size_t t = 0; t < std::size(specs); ++t)
      for (size_t begin = 0, c = 0; begin < specs[t].count; begin += kChunk, ++c)
        submit(specs[t], chunk_seed(t, c), begin, std::min(begin + kChunk, specs[t].count));
  };
  if (threads == 1 || total <= 4 * kChunk) {
    run_all([](const Spec& s, uint64_t cs, size_t b, size_t e) { fill_chunk(s, cs, b, e); });
    return in;
  }
  ThreadPool pool(threads);
  std::vector<std::future<void>> done;
  run_all([&](const Spec& s, uint64_t cs, size_t b, size_t e) {
    done.push_back(pool.submit([&s, cs, b, e] { fill_chunk(s, cs, b, e); }));
  });
  for (auto& f : done) f.get();
  return in;
}

}  // namespace ssmtune
