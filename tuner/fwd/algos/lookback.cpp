// The look-back scan: chunks across blocks in one pass, each block folding
// its predecessors' published carries (ssm/fwd_lookback.cuh).
#include "ssm/fwd_params.cuh"
#include "tuner/fwd/algos/common.h"

namespace ssmtune {
namespace {

class Lookback final : public FwdAlgorithm {
 public:
  ScanAlgo id() const override { return ScanAlgo::kLookback; }
  const char* name() const override { return "lookback"; }
  std::string check(const FwdProblem& p, const FwdConfig& c) const override {
    std::string why = staged_layout_rules(p, c);
    if (!why.empty()) return why;
    if (c.items != 1) return "items must be 1 (one chunk per block)";
    const int64_t n_chunks = (p.seqlen + c.chunk - 1) / c.chunk;
    if (n_chunks * p.batch * p.groups *
            ssmtune_kernels::tiles_per_group(static_cast<int>(p.dim_per_group()), c.d_step) >
        (int64_t{1} << 31) - 1)
      return "too many (chunk, tile) blocks for one grid";
    return {};
  }
  size_t shared_bytes(const FwdProblem& p, const FwdConfig& c) const override {
    return staged_shared_bytes(p, c);
  }
  void plan(const FwdPlanContext& x, FwdPlan& plan) const override {
    const int64_t blocks = int64_t{x.tiles} * x.batch * plan.n_chunks;
    plan.launches.push_back(
        {x.add_kernel(plan, "ssm_fwd_lookback"), {static_cast<unsigned>(blocks)}, x.block, x.smem});
    plan.carries_bytes = size_t(3) * blocks * x.c.d_step * x.p.dstate * x.acc_bytes;
    plan.flags_bytes = sizeof(unsigned) * (blocks + 1);  // flags, then the tile counter
  }
  void space(FwdSpaceBuilder& b) const override {
    add_staged_space(b, id(), {128, 256}, {1, 2, 4, 8}, {1});
  }
  void set_default(const FwdProblem& p, size_t max_shared_bytes, FwdConfig& c) const override {
    set_multichunk_default(p, max_shared_bytes, c);
  }
};

}  // namespace

const FwdAlgorithm& lookback_algorithm() {
  static const Lookback kAlgo;
  return kAlgo;
}

}  // namespace ssmtune
