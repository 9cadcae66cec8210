// The split-sequence scan: the pipelined kernel over segments of the
// sequence across blocks (segment states, a scan of them, the segments
// again with outputs: ssm/fwd_split.cuh), for few channels and long
// sequences, where one block per channel tile cannot fill the GPU.
#include <algorithm>

#include "ssm/fwd_params.cuh"
#include "tuner/fwd/algos/common.h"
#include "tuner/fwd/plan.h"

namespace ssmtune {
namespace {

// The carry scan's block: one thread per (batch, channel, state) chain.
constexpr int kScanThreads = 256;
// Blocks the default aims at (see set_default).
constexpr int64_t kDefaultBlocks = 1024;
// The default's segments run at least this many chunks (the space's, 4).
constexpr int kDefaultMinChunks = 8;

int64_t chunks_of(const FwdProblem& p, const FwdConfig& c) {
  return (p.seqlen + c.chunk - 1) / c.chunk;
}

class Split final : public FwdAlgorithm {
 public:
  ScanAlgo id() const override { return ScanAlgo::kSplit; }
  const char* name() const override { return "split"; }
  std::string check(const FwdProblem& p, const FwdConfig& c) const override {
    FwdConfig whole = c;
    whole.algo = ScanAlgo::kPipelined;
    whole.segments = 1;
    std::string why = pipelined_algorithm().check(p, whole);
    if (!why.empty()) return why;
    if (c.segments < 2 || c.segments > 65535) return "split: segments must be in [2, 65535]";
    if (c.segments > chunks_of(p, c)) return "split: more segments than chunks";
    return {};
  }
  size_t shared_bytes(const FwdProblem& p, const FwdConfig& c) const override {
    return pipelined_algorithm().shared_bytes(p, c);
  }
  void plan(const FwdPlanContext& x, FwdPlan& plan) const override {
    // Equal segments of whole chunks; the count that covers the sequence.
    plan.seg_chunks = static_cast<int>((plan.n_chunks + x.c.segments - 1) / x.c.segments);
    plan.segments = (plan.n_chunks + plan.seg_chunks - 1) / plan.seg_chunks;
    const unsigned segments = static_cast<unsigned>(plan.segments);
    const jit::Dim3 block{static_cast<unsigned>(block_threads(x.p, x.c, {}))};
    const int states = x.add_kernel(plan, "ssm_fwd_split_states");
    const int scan = x.add_kernel(plan, "ssm_fwd_split_scan");
    const int outputs = x.add_kernel(plan, "ssm_fwd_split_outputs");
    const int64_t chains = x.p.batch * x.p.dim * x.p.dstate;
    plan.launches.push_back({states, {x.tiles, x.batch, segments}, block, x.smem});
    plan.launches.push_back({scan,
                             {static_cast<unsigned>((chains + kScanThreads - 1) / kScanThreads)},
                             jit::Dim3{static_cast<unsigned>(kScanThreads)},
                             0});
    plan.launches.push_back({outputs, {x.tiles, x.batch, segments}, block, x.smem});
    plan.carries_bytes = size_t(2) * chains * plan.segments * x.acc_bytes;
  }
  int block_threads(const FwdProblem& p, const FwdConfig& c,
                    const std::string& name_expression) const override {
    if (name_expression.find("split_scan") != std::string::npos) return kScanThreads;
    return c.threads + pipe_producers(p);
  }
  void space(FwdSpaceBuilder& b) const override {
    // The default, then the pipelined layouts with 2 or 4 lanes per
    // channel, 64 or 128 compute threads, 32-step chunks, 2 or 3 stages;
    // each with the segments that make about 512, 1024 and 2048 blocks
    // (where the sequence is long enough).
    const FwdProblem& p = b.problem();
    FwdConfig def;
    def.algo = id();
    set_default(p, 0, def);
    if (split_segments(p, def, kDefaultBlocks, kDefaultMinChunks) >= 2) b.add_fast(def);
    for (int n_split : {2, 4})
      for (int threads : {64, 128})
        for (int items : {2, 3}) {
          FwdConfig c;
          c.algo = id();
          c.n_split = n_split;
          c.threads = threads;
          c.d_step = threads / n_split;
          c.chunk = 32;
          c.items = items;
          int last = 0;
          for (int64_t blocks : {512, 1024, 2048}) {
            c.segments = split_segments(p, c, blocks);
            if (c.segments < 2 || c.segments == last) continue;
            last = c.segments;
            if (!(c == def)) b.add_fast(c);
          }
        }
  }
  void set_default(const FwdProblem& p, size_t max_shared_bytes, FwdConfig& c) const override {
    // The pipelined default layout with two stages (a smaller ring: more
    // blocks per SM). About 1024 blocks, each segment of 8 chunks at least;
    // where segments would still be 64 chunks or longer, about 2048 (their
    // start-up is paid once per segment). On the H200 with the block's
    // flags: (1, 2048, 2048, 16) bf16 took 0.084 ms at 8 segments (4: 0.092,
    // 16: 0.093); (1, 5120, 16384) 1.21 ms at 14 (4: 1.34); (1, 4096, 4096)
    // fp16 0.273 at 4 or 8, 0.308 at 16 (three stages).
    FwdConfig whole = c;
    whole.algo = ScanAlgo::kPipelined;
    whole.segments = 1;
    pipelined_algorithm().set_default(p, max_shared_bytes, whole);
    c = whole;
    c.algo = id();
    c.items = 2;
    c.segments = split_segments(p, c, kDefaultBlocks, kDefaultMinChunks);
    if (chunks_of(p, c) >= 64 * int64_t{c.segments})
      c.segments = split_segments(p, c, 2 * kDefaultBlocks, kDefaultMinChunks);
    c.segments = std::max(2, c.segments);
  }
};

}  // namespace

int split_segments(const FwdProblem& p, const FwdConfig& c, int64_t blocks, int min_chunks) {
  const int64_t tiles =
      p.groups * ssmtune_kernels::tiles_per_group(static_cast<int>(p.dim_per_group()), c.d_step);
  const int64_t grid = std::max<int64_t>(1, tiles * p.batch);
  int64_t s = (blocks + grid - 1) / grid;
  s = std::min({s, chunks_of(p, c) / std::max(1, min_chunks), int64_t{65535}});
  return static_cast<int>(std::max<int64_t>(1, s));
}

const FwdAlgorithm& split_algorithm() {
  static const Split kAlgo;
  return kAlgo;
}

}  // namespace ssmtune
