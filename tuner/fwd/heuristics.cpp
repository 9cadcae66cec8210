// Default configs.
#include "tuner/fwd/heuristics.h"

#include <algorithm>

#include "tuner/fwd/plan.h"

namespace ssmtune {
namespace {

int pow2_floor(int64_t x) {
  int p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

}  // namespace

FwdConfig default_config(const FwdProblem& p, ScanAlgo algo, AccType acc, size_t max_shared_bytes) {
  FwdConfig c;
  c.algo = algo;
  c.acc = acc;
  // fp64 has no fast exp; fp32 uses the MUFU ex2 (2 ulp, far inside the budget).
  c.exp_mode = acc == AccType::kF64 ? ExpMode::kAccurate : ExpMode::kFast;
  switch (algo) {
    case ScanAlgo::kSequential:
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
      break;
    case ScanAlgo::kPipelined:
      // Four states per thread (a 2-level y reduction at dstate 16, half the
      // sequential default's lanes per channel: fewer instructions per
      // state update; the compute warps do not wait on memory, so fewer
      // warps suffice); 128 compute threads; 32-step chunks in a ring of 3
      // stages keep a block's shared memory near 42-54 KB (4-5 blocks per
      // SM on the H200 at dstate 16).
      c.n_split = std::clamp(pow2_floor(std::max<int64_t>(1, p.dstate / 4)), 1, 16);
      c.d_step = std::min(64, 128 / c.n_split);
      c.threads = c.d_step * c.n_split;
      c.chunk = 32;
      c.items = 3;
      break;
    case ScanAlgo::kMultiPass:
    case ScanAlgo::kLookback:
      // At most 8 states per thread keeps h and A in registers at any dstate;
      // 64 threads per block: d_step = 64 / n_split channels share B/C.
      c.n_split = std::clamp(pow2_floor(std::max<int64_t>(1, p.dstate / 8)), 1, 32);
      c.threads = 64;
      c.d_step = c.threads / c.n_split;
      // Multi-chunk algorithms want several chunks per sequence.
      c.chunk = 128;
      c.items = 1;
      break;
    case ScanAlgo::kWarpScan:
      // One warp per channel, 8 channels per block sharing B/C; 8 items per
      // lane amortize the 5 shuffle steps (4 for fp64: registers).
      c.d_step = 8;
      c.threads = 256;
      c.items = acc == AccType::kF64 ? 4 : 8;
      c.chunk = 32 * c.items;
      // Large dstate: the staged B/C tile (2 x dstate x chunk floats) must fit.
      while (max_shared_bytes != 0 && c.items > 1 && !check_config(p, c, max_shared_bytes)) {
        c.items /= 2;
        c.chunk = 32 * c.items;
      }
      break;
    case ScanAlgo::kBlelloch:
      c.d_step = 4;
      c.threads = 128;
      c.items = 4;
      c.chunk = c.threads * c.items;
      while (max_shared_bytes != 0 && !check_config(p, c, max_shared_bytes) &&
             (c.items > 1 || c.threads > 32)) {
        if (c.items > 1) {
          c.items /= 2;
        } else {
          c.threads /= 2;  // dstate 256: 2 x 256 x chunk floats of B/C need a short chunk
        }
        c.chunk = c.threads * c.items;
      }
      break;
  }
  if (algo == ScanAlgo::kSequential || algo == ScanAlgo::kMultiPass ||
      algo == ScanAlgo::kLookback || algo == ScanAlgo::kPipelined) {
    while (max_shared_bytes != 0 && c.chunk > 16 && !check_config(p, c, max_shared_bytes))
      c.chunk /= 2;
  }
  return c;
}

FwdDefaultChoice heuristic_default(const FwdProblem& p, int sm_count, size_t max_shared_bytes) {
  const int64_t chains = p.batch * p.dim;
  FwdConfig c = default_config(p, ScanAlgo::kSequential, AccType::kF32, max_shared_bytes);
  // With at least 16 warps per SM of (channel, split) threads, the
  // sequential scan has no combine overhead and enough parallelism
  // ((8, 1536, 2048, 16): 23 warps per SM on the H200; (1, 2048, 65536, 16)
  // would have 3.9).
  if (chains * c.n_split >= int64_t{sm_count} * 512) {
    // Long enough for the ring to fill (16 chunks or more): the pipelined
    // kernel, whose compute warps never wait on memory. On the H200 at
    // dstate 16, side by side, its default took 0.212 ms to the sequential
    // default's 0.227 at (8, 1536, 2048) bf16 and 1.40 ms to 1.45 at
    // (4, 5120, 8192) bf16 (0.200 to 0.198 at the fp32 mid shape); later
    // changes (bench/NOTES.md, versions 4c and 5) took it to 0.172 and
    // 1.12 ms. At seqlen 64 the sequential kernel was faster.
    const FwdConfig pipe = default_config(p, ScanAlgo::kPipelined, AccType::kF32, max_shared_bytes);
    if (p.seqlen >= 16 * pipe.chunk)
      return {pipe, "pipelined: batch x dim = " + std::to_string(chains) +
                        " channels fill the GPU and " + std::to_string(p.seqlen) +
                        " steps fill the ring of " + std::to_string(pipe.items) + " stages"};
    // Reads in flight cost registers, hence resident blocks: worth it only
    // while the grid leaves room on each SM (on the H200 at dstate 16: 1.2x
    // faster at 2.9 blocks per SM, 1.08x slower at 4.8).
    const int64_t blocks = p.batch * p.groups * ((p.dim_per_group() + c.d_step - 1) / c.d_step);
    const bool crowded = blocks >= int64_t{sm_count} * 4;
    if (crowded) c.items = 1;
    return {c, "sequential: batch x dim = " + std::to_string(chains) +
                   " channels fill the GPU without splitting the sequence; " +
                   std::to_string(blocks) + " blocks, " +
                   (crowded ? "no reads in flight (registers for resident blocks)"
                            : "the next chunk's reads in flight")};
  }
  // Few chains: time-parallel inside a warp, one exp per element. (The
  // look-back splits the sequence across blocks but computes each exp twice;
  // at (1, 2048, 65536, 16) bf16 on the H200 it took 3.08 ms to warpscan's 2.47.)
  return {default_config(p, ScanAlgo::kWarpScan, AccType::kF32, max_shared_bytes),
          "warpscan: only " + std::to_string(chains) +
              " channels; time-parallel inside a warp, each channel's chunk on 32 lanes"};
}

}  // namespace ssmtune
