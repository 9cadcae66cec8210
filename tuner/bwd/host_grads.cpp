// The incoming gradients: seeded normal draws (tuner/random_fill.h), each
// from its own stream of the seed.
#include "tuner/bwd/host_grads.h"

#include "tuner/fwd/host_inputs.h"
#include "tuner/random_fill.h"

namespace ssmtune::bwd {
namespace {

// dout's and dlast's streams of the seed (apart from the inputs' 1, 2, ...).
constexpr uint64_t kDoutStream = 0xD0u;
constexpr uint64_t kDlastStream = 0xD1u;

std::vector<double> randn(size_t count, uint64_t seed, uint64_t stream, DType dtype) {
  std::vector<double> v;
  fill_random_stream({&v, count, Sampler::kNormal, 1.0, dtype}, seed, stream);
  return v;
}

}  // namespace

std::vector<double> make_dout(const FwdProblem& p, uint64_t seed) {
  if (!p.validate().is_ok()) return {};
  return randn(static_cast<size_t>(p.batch * p.dim * p.seqlen), seed, kDoutStream, p.dtype);
}

std::vector<double> make_dlast(const FwdProblem& p, uint64_t seed) {
  if (!p.validate().is_ok() || !p.return_last_state) return {};
  return randn(static_cast<size_t>(p.batch * p.dim * p.dstate), seed, kDlastStream, DType::kF32);
}

}  // namespace ssmtune::bwd
