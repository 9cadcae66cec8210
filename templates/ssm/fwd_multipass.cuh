// Chunked multi-pass scan across blocks (three launches): (1) each block
// reduces one chunk of one tile to the affine map h -> A h + B per
// (channel, state); (2) one thread per (batch, channel, state) scans those
// maps along the chunks, leaving each chunk's incoming state; (3) each block
// re-runs its chunk from that state and writes the outputs. Scratch:
// 2 * batch * dim * dstate * n_chunks accumulators (A parts, then B parts).
#pragma once

#include "ssm/fwd_chunk.cuh"

namespace ssmtune_kernels {

__device__ __forceinline__ long long carry_index(const SsmFwdParams& p, int kN, int b, int d, int n,
                                                 int chunk) {
  return ((static_cast<long long>(b) * p.dim + d) * kN + n) * p.n_chunks + chunk;
}

// Passes 1 and 3 share this body. grid (tiles, batch, n_chunks).
template <typename Tr, bool kOutputPass>
__device__ __forceinline__ void multipass_chunk(const SsmFwdParams& p) {
  static_assert(ChunkLayoutChecks<Tr>::kOk, "");
  using AccT = typename Tr::AccT;
  constexpr int kPer = ChannelStates<Tr>::kPerThread;
  constexpr ChunkSmemLayout l =
      chunk_smem_layout(Tr::kN, Tr::kChunk, Tr::kDStep, Tr::kVarB, Tr::kVarC);
  extern __shared__ float4 smem_raw[];
  float* smem = reinterpret_cast<float*>(smem_raw);

  const Tile tile = make_tile<Tr>(p, blockIdx.x, blockIdx.y);
  const int chunk = blockIdx.z;
  const int t0 = chunk * Tr::kChunk;
  const int len = min(Tr::kChunk, p.seqlen - t0);
  const int c = ChunkLanes<Tr>::channel(), s = ChunkLanes<Tr>::split();
  const bool active = c < tile.nd;
  const int d = tile.d0 + (active ? c : 0);
  const long long count = static_cast<long long>(p.batch) * p.dim * Tr::kN * p.n_chunks;
  AccT* carry_a = static_cast<AccT*>(p.carries);
  AccT* carry_b = carry_a + count;

  ChannelStates<Tr> cs;
  cs.load(p, d, s, active);
  AccT h[kPer], aprod[kPer];
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int n = ChannelStates<Tr>::state(s, k);
    h[k] = 0;
    aprod[k] = 1;
    if (kOutputPass && active && n < Tr::kN)
      h[k] = carry_b[carry_index(p, Tr::kN, tile.b, d, n, chunk)];
  }
  stage_chunk<Tr>(p, tile, t0, len, smem, l);
  __syncthreads();
  auto sink = make_state_sink(p, tile.b, d, active);
  sink.t0 = t0;
  run_chunk<Tr, kOutputPass>(cs, h, aprod, c, s, len, smem, l, sink);
  if constexpr (kOutputPass) {
    __syncthreads();
    write_chunk<Tr>(p, tile, t0, len, smem, l);
  } else if (active) {
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const int n = ChannelStates<Tr>::state(s, k);
      if (n < Tr::kN) {
        const long long i = carry_index(p, Tr::kN, tile.b, d, n, chunk);
        carry_a[i] = aprod[k];
        carry_b[i] = h[k];
      }
    }
  }
}

template <typename Tr>
__global__ void __launch_bounds__(Tr::kThreads) ssm_fwd_multipass_reduce(const SsmFwdParams p) {
  multipass_chunk<Tr, false>(p);
}

template <typename Tr>
__global__ void __launch_bounds__(Tr::kThreads) ssm_fwd_multipass_output(const SsmFwdParams p) {
  multipass_chunk<Tr, true>(p);
}

// One thread per (batch, channel, state) chain, any block size: the chain's
// `steps` carries [((b, d, n), step)] hold each step's decay product (A
// parts) and its end state from 0 (B parts); replaces each B part by the
// state entering that step, from h0 (or 0), and stores the final state as
// the last state (when asked for). Multipass scans its chunks with it, the
// split-sequence kernel its segments.
template <typename Tr>
__device__ __forceinline__ void scan_carries(const SsmFwdParams& p, int steps) {
  using AccT = typename Tr::AccT;
  const long long chains = static_cast<long long>(p.batch) * p.dim * Tr::kN;
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= chains) return;
  const int n = static_cast<int>(i % Tr::kN);
  const int d = static_cast<int>((i / Tr::kN) % p.dim);
  const int b = static_cast<int>(i / (static_cast<long long>(Tr::kN) * p.dim));
  const long long count = chains * steps;
  AccT* carry_a = static_cast<AccT*>(p.carries);
  AccT* carry_b = carry_a + count;
  AccT hstate = 0;
  if constexpr (Tr::kH0) hstate = p.h0[b * p.h0_batch_stride + d * p.h0_dim_stride + n];
  const long long base = i * steps;
  for (int step = 0; step < steps; ++step) {
    const AccT a = carry_a[base + step], bb = carry_b[base + step];
    carry_b[base + step] = hstate;
    hstate = a * hstate + bb;
  }
  if constexpr (Tr::kLastState)
    p.last_state[b * p.last_state_batch_stride + d * p.last_state_dim_stride + n] =
        static_cast<float>(hstate);
}

// Pass 2: replaces each chunk's B part by the state entering that chunk.
template <typename Tr>
__global__ void ssm_fwd_multipass_scan(const SsmFwdParams p) {
  scan_carries<Tr>(p, p.n_chunks);
}

}  // namespace ssmtune_kernels
