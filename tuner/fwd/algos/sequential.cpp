// The sequential scan: each thread runs the recurrence along time for its
// (channel, states), chunks staged in shared memory (ssm/fwd_sequential.cuh).
#include <algorithm>

#include "core/int_math.h"
#include "tuner/fwd/algos/common.h"

namespace ssmtune {
namespace {

class Sequential final : public FwdAlgorithm {
 public:
  ScanAlgo id() const override { return ScanAlgo::kSequential; }
  const char* name() const override { return "sequential"; }
  std::string check(const FwdProblem& p, const FwdConfig& c) const override {
    std::string why = staged_layout_rules(p, c);
    if (!why.empty()) return why;
    if (c.items > 2) return "sequential: items (chunks in flight) must be 1 or 2";
    return {};
  }
  size_t shared_bytes(const FwdProblem& p, const FwdConfig& c) const override {
    return staged_shared_bytes(p, c);
  }
  void plan(const FwdPlanContext& x, FwdPlan& plan) const override {
    plan.launches.push_back(
        {x.add_kernel(plan, "ssm_fwd_sequential"), {x.tiles, x.batch}, x.block, x.smem});
  }
  void space(FwdSpaceBuilder& b) const override {
    // Also with the next chunk's reads in flight (items 2), which costs
    // registers: it wins where occupancy is capped by the grid.
    add_staged_space(b, id(), {64, 128}, {1, 2, 4, 8, 16}, {1, 2});
  }
  void set_default(const FwdProblem& p, size_t max_shared_bytes, FwdConfig& c) const override {
    // Two states per thread (at most 16 lanes per channel): the most
    // chains, with a 3-level y reduction at dstate 16; 256 threads share
    // B/C; 64-step chunks keep smem small; the next chunk's reads in
    // flight. On the H200 at dstate 16 this was within 3% of the fastest
    // layout at (8, 1536, 2048) fp32 and bf16 and 8% at (4, 5120, 8192)
    // bf16, where (K64, D32, 2 states, 64 threads) took 1.2-1.5x longer.
    c.n_split = std::clamp(pow2_floor(std::max<int64_t>(1, p.dstate / 2)), 1, 16);
    c.d_step = std::min(64, 256 / c.n_split);
    c.threads = c.d_step * c.n_split;
    c.chunk = 64;
    c.items = 2;
    shrink_chunk_to_fit(p, max_shared_bytes, c);
  }
};

}  // namespace

const FwdAlgorithm& sequential_algorithm() {
  static const Sequential kAlgo;
  return kAlgo;
}

}  // namespace ssmtune
