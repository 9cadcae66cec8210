// The block scan: one channel a block, threads / 32 warps sharing it, each
// lane `items` timesteps; a shuffle scan per warp and the warps' totals
// through shared memory, one state at a time; each lane reads its own B/C
// items from global memory (ssm/fwd_blockscan.cuh). For a few hundred to a
// few thousand channels, where one warp a channel leaves the SMs a few
// warps each.
#include <string>

#include "ssm/fwd_params.cuh"
#include "tuner/fwd/algos/common.h"

namespace ssmtune {
namespace {

constexpr int kMaxWarps = 16;
constexpr int kMaxItems = 16;

class BlockScan final : public FwdAlgorithm {
 public:
  ScanAlgo id() const override { return ScanAlgo::kBlockScan; }
  const char* name() const override { return "blockscan"; }
  std::string check(const FwdProblem&, const FwdConfig& c) const override {
    if (c.d_step != 1) return "blockscan: one channel a block (d_step 1)";
    if (c.n_split != 1) return "blockscan takes n_split 1";
    const int warps = c.threads / 32;
    if (warps > kMaxWarps || (warps & (warps - 1)) != 0)
      return "blockscan: threads must be 32 x a power of 2 up to 16 warps";
    if (c.items % 4 != 0 || c.items > kMaxItems)
      return "blockscan: items must be 4, 8, 12 or 16 (four timesteps per access)";
    if (c.chunk != c.threads * c.items) return "blockscan: chunk must be threads * items";
    return {};
  }
  size_t shared_bytes(const FwdProblem& p, const FwdConfig& c) const override {
    return static_cast<size_t>(
        ssmtune_kernels::blockscan_smem_layout(static_cast<int>(p.dstate), c.threads / 32,
                                               c.acc == AccType::kF64 ? 8 : 4)
            .bytes);
  }
  void plan(const FwdPlanContext& x, FwdPlan& plan) const override {
    plan.launches.push_back(
        {x.add_kernel(plan, "ssm_fwd_blockscan"), {x.tiles, x.batch}, x.block, x.smem});
  }
  void space(FwdSpaceBuilder& b) const override {
    for (int warps : {1, 2, 4, 8})
      for (int items : {4, 8, 16}) {
        if (warps * items > 64) continue;  // 16 items at 8 warps: registers
        FwdConfig c;
        c.algo = id();
        c.d_step = 1;
        c.threads = 32 * warps;
        c.items = items;
        c.chunk = c.threads * items;
        b.add_fast(c);
      }
  }
  // Checkpoints are the states entering lanes, as in the warp scan.
  int checkpoint_step(const FwdConfig& c) const override { return c.items; }
  void set_default(const FwdProblem& p, size_t, FwdConfig& c) const override {
    // 16 steps a lane (8 with fp64 sums: registers), and as many warps as
    // cover the sequence in one chunk, up to 4: a chunk of 2048.
    c.d_step = 1;
    c.items = c.acc == AccType::kF64 ? 8 : 16;
    c.threads = 32;
    while (c.threads < 128 && int64_t{c.threads} * c.items < p.seqlen) c.threads *= 2;
    if (p.seqlen <= 128)
      c.items = 4;
    else if (p.seqlen <= 256)
      c.items = 8;
    c.chunk = c.threads * c.items;
  }
};

}  // namespace

const FwdAlgorithm& blockscan_algorithm() {
  static const BlockScan kAlgo;
  return kAlgo;
}

}  // namespace ssmtune
