// The warp scan: one or more warps per channel (threads / (32 d_step)),
// each lane `items` timesteps reduced serially, then a Kogge-Stone shuffle
// scan over each warp and, with several warps, their totals through shared
// memory (ssm/fwd_warpscan.cuh); n_split > 1 splits a channel's states over
// that many blocks, whose y a second kernel adds (ssm/fwd_state_sum.cuh).
#include <string>

#include "ssm/fwd_params.cuh"
#include "tuner/fwd/algos/common.h"
#include "tuner/state_groups.h"

namespace ssmtune {
namespace {

class WarpScan final : public FwdAlgorithm {
 public:
  ScanAlgo id() const override { return ScanAlgo::kWarpScan; }
  const char* name() const override { return "warpscan"; }
  std::string check(const FwdProblem& p, const FwdConfig& c) const override {
    if (c.n_split < 1 || c.n_split > 32 || (c.n_split & (c.n_split - 1)) != 0)
      return "warpscan: n_split (blocks sharing a channel's states) must be a power of 2 <= 32";
    if (c.n_split > p.dstate) return "warpscan: n_split exceeds dstate";
    if (c.n_split > 1 && ssmtune_kernels::fwd_state_sum_slices(p.seqlen) > 65535)
      return "warpscan over state groups: seqlen past 65535 time slices (the state sum's grid z)";
    if (c.threads % (32 * c.d_step) != 0)
      return "warpscan: threads must be 32 * d_step * warps per channel";
    const int warps = c.threads / (32 * c.d_step);
    if ((warps & (warps - 1)) != 0) return "warpscan: warps per channel must be a power of 2";
    if (c.chunk != 32 * warps * c.items)
      return "warpscan: chunk must be 32 * warps per channel * items";
    return {};
  }
  size_t shared_bytes(const FwdProblem& p, const FwdConfig& c) const override {
    return scan_shared_bytes(p, c, /*blelloch=*/false);
  }
  void plan(const FwdPlanContext& x, FwdPlan& plan) const override {
    // A channel's states over n_split blocks (grid z), then the sum of
    // their y, a block per (channel, batch, time slice); the groups' y in
    // the carries.
    const unsigned groups = static_cast<unsigned>(x.c.n_split);
    plan.launches.push_back(
        {x.add_kernel(plan, "ssm_fwd_warpscan"), {x.tiles, x.batch, groups}, x.block, x.smem});
    if (groups > 1) {
      const long long slices = ssmtune_kernels::fwd_state_sum_slices(x.p.seqlen);
      plan.launches.push_back(
          {x.add_kernel(plan, "ssm_fwd_state_sum"),
           {static_cast<unsigned>(x.p.dim), x.batch, static_cast<unsigned>(slices)},
           jit::Dim3{static_cast<unsigned>(block_threads(x.p, x.c, "state_sum"))},
           0});
      plan.carries_bytes = size_t(groups) * x.p.batch * x.p.dim * x.p.seqlen * x.acc_bytes;
    }
  }
  int block_threads(const FwdProblem& p, const FwdConfig& c,
                    const std::string& name_expression) const override {
    if (name_expression.find("state_sum") != std::string::npos)
      return ssmtune_kernels::kFwdStateSumThreads;
    return FwdAlgorithm::block_threads(p, c, name_expression);
  }
  void space(FwdSpaceBuilder& b) const override {
    for (int d_step : {2, 4, 8})
      for (int items : {2, 4, 8, 16}) {
        FwdConfig c;
        c.algo = id();
        c.d_step = d_step;
        c.threads = 32 * d_step;
        c.items = items;
        c.chunk = 32 * items;
        b.add_fp32(c);
      }
    // Several warps a channel (for few channels: fewer chunks one after
    // another), up to 512 threads a block; 16 warps of 4 steps (the default
    // past 1024 steps at very few channels: 8 steps would spill).
    for (int d_step : {1, 2, 4})
      for (int warps : {2, 4, 8, 16})
        for (int items : {4, 8}) {
          if (32 * warps * d_step > 512 || (warps == 16 && items != 4)) continue;
          FwdConfig c;
          c.algo = id();
          c.d_step = d_step;
          c.threads = 32 * warps * d_step;
          c.items = items;
          c.chunk = 32 * warps * items;
          b.add_fast(c);
        }
    // Few channels: a channel's states over 2 to 8 blocks (state groups) at
    // 8 and 16 warps of 4 steps, the per-state chains on that many more SMs
    // (each block stages only its states' B/C rows), then a pass adding the
    // groups' y.
    const FwdProblem& p = b.problem();
    if (p.batch * p.dim < kFewChannels)
      for (int warps : {8, 16})
        for (int groups : {2, 4, 8}) {
          if (groups > p.dstate) continue;
          FwdConfig c;
          c.algo = id();
          c.d_step = 1;
          c.threads = 32 * warps;
          c.items = 4;
          c.chunk = 32 * warps * 4;
          c.n_split = groups;
          b.add_fast(c);
        }
  }
  bool prunes_long_chunks() const override { return false; }
  // Checkpoints are the states entering lanes (ssm/fwd_warpscan.cuh).
  int checkpoint_step(const FwdConfig& c) const override { return c.items; }
  void set_default(const FwdProblem& p, size_t max_shared_bytes, FwdConfig& c) const override {
    // One warp per channel, 8 channels per block sharing B/C; 8 items per
    // lane amortize the 5 shuffle steps (4 for fp64: registers).
    c.d_step = 8;
    c.threads = 256;
    c.items = c.acc == AccType::kF64 ? 4 : 8;
    c.chunk = 32 * c.items;
    // Large dstate: the staged B/C tile (2 x dstate x chunk floats) must fit.
    while (max_shared_bytes != 0 && c.items > 1 && !check_config(p, c, max_shared_bytes)) {
      c.items /= 2;
      c.chunk = 32 * c.items;
    }
  }
};

}  // namespace

const FwdAlgorithm& warpscan_algorithm() {
  static const WarpScan kAlgo;
  return kAlgo;
}

}  // namespace ssmtune
