// The pipelined scan: the sequential scan with producer warps (two, four
// with z or softplus) that copy chunks (cp.async) into a ring of shared-
// memory stages, handed to the compute warps by named barriers
// (ssm/fwd_pipelined.cuh).
#include <algorithm>

#include "core/int_math.h"
#include "ssm/fwd_params.cuh"
#include "tuner/fwd/algos/common.h"
#include "tuner/fwd/plan.h"

namespace ssmtune {
namespace {

class Pipelined final : public FwdAlgorithm {
 public:
  ScanAlgo id() const override { return ScanAlgo::kPipelined; }
  const char* name() const override { return "pipelined"; }
  std::string check(const FwdProblem& p, const FwdConfig& c) const override {
    std::string why = split_layout_rules(p, c);
    if (!why.empty()) return why;
    if (c.threads + pipe_producers(p) > 1024)
      return "pipelined: threads + the producer warps exceed 1024";
    const int piece = 16 / static_cast<int>(dtype_bytes(p.dtype));
    if (c.chunk % piece != 0)
      return "pipelined: chunk must be a multiple of " + std::to_string(piece) +
             " (16-byte copies)";
    if (c.items < 2 || c.items > 4) return "pipelined: items (stages) must be 2, 3 or 4";
    return {};
  }
  size_t shared_bytes(const FwdProblem& p, const FwdConfig& c) const override {
    const int in_bytes = static_cast<int>(dtype_bytes(p.dtype));
    const bool converts =
        ssmtune_kernels::pipe_converts(in_bytes, p.has_delta_bias, p.delta_softplus);
    return static_cast<size_t>(ssmtune_kernels::pipe_smem_layout(
                                   static_cast<int>(p.dstate), c.chunk, c.d_step, p.variable_b,
                                   p.variable_c, p.has_z, c.items, in_bytes, converts)
                                   .bytes);
  }
  void plan(const FwdPlanContext& x, FwdPlan& plan) const override {
    // The compute warps, then the producer warps.
    plan.launches.push_back({x.add_kernel(plan, "ssm_fwd_pipelined"),
                             {x.tiles, x.batch},
                             jit::Dim3{static_cast<unsigned>(block_threads(x.p, x.c, {}))},
                             x.smem});
  }
  int block_threads(const FwdProblem& p, const FwdConfig& c, const std::string&) const override {
    return c.threads + pipe_producers(p);
  }
  void space(FwdSpaceBuilder& b) const override {
    // The sequential layouts with 2 to 8 lanes per channel, 32- or 64-step
    // chunks, double or triple buffered (triple once per fp32 exp mode).
    add_staged_space(b, id(), {32, 64}, {2, 4, 8}, {2, 3}, /*fp32_items=*/3);
  }
  void set_default(const FwdProblem& p, size_t max_shared_bytes, FwdConfig& c) const override {
    // Four states per thread (a 2-level y reduction at dstate 16, half the
    // sequential default's lanes per channel: fewer instructions per
    // state update; the compute warps do not wait on memory, so fewer
    // warps suffice); 128 compute threads; 32-step chunks in a ring of 3
    // stages keep a block's shared memory near 42-54 KB (4-5 blocks per
    // SM on the H200 at dstate 16). Past dstate 16, four lanes per channel
    // and up to 16 states per thread: at (8,1536,2048,64) bf16 with the
    // block's flags 0.703 ms with 4 lanes against 0.971 with 16 (H200).
    // From dstate 8 the same four lanes (2 to 4 states a thread); at 5 to 7
    // two lanes of up to 4 states in blocks of 32 channels, chunks in a ring
    // of 2. H100, bf16 with the flags, ms, against the rule before (one lane
    // at 5 to 7, two at 8 to 15): (16, 1536, 2048, 12) 0.382 / 0.657,
    // (16, 1536, 1024, 12) 0.196 / 0.335, (16, 1536, 2048, 8) 0.350 / 0.636,
    // (32, 1536, 2048, 6) 0.586 / 1.29; fp32 plain (16, 2048, 2048, 12)
    // 0.352 / 0.390.
    const bool two_lanes = p.dstate > 4 && p.dstate < 8;
    if (p.dstate <= 16) {
      c.n_split = p.dstate <= 4 ? 1 : two_lanes ? 2 : 4;
    } else {
      c.n_split = std::clamp(pow2_floor(p.dstate / 16), 4, 16);
    }
    c.d_step = two_lanes ? 32 : std::min(64, 128 / c.n_split);
    c.threads = c.d_step * c.n_split;
    c.chunk = 32;
    c.items = two_lanes ? 2 : 3;
    shrink_chunk_to_fit(p, max_shared_bytes, c);
  }
};

}  // namespace

const FwdAlgorithm& pipelined_algorithm() {
  static const Pipelined kAlgo;
  return kAlgo;
}

}  // namespace ssmtune
