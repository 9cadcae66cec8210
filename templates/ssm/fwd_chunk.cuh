// The recurrence over one staged chunk for one thread's states: the inner
// loop of the sequential, multipass and lookback kernels.
#pragma once

#include "ssm/fwd_tile.cuh"

namespace ssmtune_kernels {

// kOutput: h carries in and out, and y = sum_n C h goes to the smem y row.
// Otherwise (aggregate): h starts where the caller set it (zero) and aprod
// accumulates prod(a), so (aprod, h) is the chunk's affine map h -> a*h + b.
template <typename Tr, bool kOutput>
__device__ __forceinline__ void run_chunk(const ChannelStates<Tr>& cs,
                                          typename Tr::AccT (&h)[ChannelStates<Tr>::kPerThread],
                                          typename Tr::AccT (&aprod)[ChannelStates<Tr>::kPerThread],
                                          int c, int s, int len, float* smem,
                                          const ChunkSmemLayout& l) {
  using AccT = typename Tr::AccT;
  constexpr int kPer = ChannelStates<Tr>::kPerThread;
  constexpr bool kAllStatesUsed = Tr::kN % Tr::kNSplit == 0;
#pragma unroll 2
  for (int t = 0; t < len; ++t) {
    const float dt = smem[l.dt + c * l.row + t];
    const float du = dt * smem[l.u + c * l.row + t];
    AccT y = 0;
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const int n = ChannelStates<Tr>::state(s, k);
      if (kAllStatesUsed || n < Tr::kN) {
        const float bv = Tr::kVarB ? smem[l.b + n * Tr::kChunk + t] : cs.bconst[k];
        const AccT a = exp_state<Tr>(static_cast<AccT>(dt) * static_cast<AccT>(cs.a2[k]), n);
        h[k] = a * h[k] + static_cast<AccT>(du) * static_cast<AccT>(bv);
        if constexpr (kOutput) {
          const float cv = Tr::kVarC ? smem[l.c + n * Tr::kChunk + t] : cs.cconst[k];
          y += static_cast<AccT>(cv) * h[k];
        } else {
          aprod[k] *= a;
        }
      }
    }
    if constexpr (kOutput) {
      y = reduce_split<Tr>(y);
      if (s == 0) smem[l.y + c * l.row + t] = static_cast<float>(y);
    }
  }
}

// Common checks of the staged-chunk kernels' thread layout.
template <typename Tr>
struct ChunkLayoutChecks {
  static_assert(Tr::kThreads == Tr::kDStep * Tr::kNSplit,
                "chunk kernels: threads must equal d_step * n_split");
  static_assert(Tr::kNSplit >= 1 && Tr::kNSplit <= 32 && (Tr::kNSplit & (Tr::kNSplit - 1)) == 0,
                "n_split must be a power of two <= 32 (a channel's threads share a warp)");
  static_assert(Tr::kNSplit <= Tr::kN, "n_split must not exceed dstate");
  static constexpr bool kOk = true;
};

}  // namespace ssmtune_kernels
