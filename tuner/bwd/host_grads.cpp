// Seeded normal draws: mt19937_64 per chunk of 2^16 elements (seeded from
// the seed, the tensor and the chunk) with Marsaglia's polar method, so the
// values are the same on every standard library.
#include "tuner/bwd/host_grads.h"

#include <cmath>
#include <random>

#include "tuner/fwd/host_inputs.h"

namespace ssmtune::bwd {
namespace {

constexpr size_t kChunk = size_t{1} << 16;

uint64_t mix(uint64_t x) {  // splitmix64's finalizer
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

double uniform(std::mt19937_64& g) { return static_cast<double>(g() >> 11) * 0x1.0p-53; }

// `tensor` separates dout's stream from dlast's for one seed.
std::vector<double> randn(size_t count, uint64_t seed, uint64_t tensor, DType dtype) {
  std::vector<double> v(count);
  for (size_t begin = 0, c = 0; begin < count; begin += kChunk, ++c) {
    std::mt19937_64 g(mix(mix(seed ^ mix(tensor)) + c));
    const size_t end = std::min(begin + kChunk, count);
    for (size_t i = begin; i < end; i += 2) {
      double x, y, r2;
      do {
        x = 2.0 * uniform(g) - 1.0;
        y = 2.0 * uniform(g) - 1.0;
        r2 = x * x + y * y;
      } while (r2 >= 1.0 || r2 == 0.0);
      const double f = std::sqrt(-2.0 * std::log(r2) / r2);
      v[i] = round_to(f * x, dtype);
      if (i + 1 < end) v[i + 1] = round_to(f * y, dtype);
    }
  }
  return v;
}

}  // namespace

std::vector<double> make_dout(const FwdProblem& p, uint64_t seed) {
  if (!p.validate().is_ok()) return {};
  return randn(static_cast<size_t>(p.batch * p.dim * p.seqlen), seed, 0xD0u, p.dtype);
}

std::vector<double> make_dlast(const FwdProblem& p, uint64_t seed) {
  if (!p.validate().is_ok() || !p.return_last_state) return {};
  return randn(static_cast<size_t>(p.batch * p.dim * p.dstate), seed, 0xD1u, DType::kF32);
}

}  // namespace ssmtune::bwd
