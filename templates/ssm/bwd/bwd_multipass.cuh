// Multipass backward, for few channels and long sequences: the sequence is
// split into segments of seg_chunks chunks across blocks (grid z).
// A (ssm_bwd_multipass_local): per segment and state, the forward map
//   h_end = prod(a) h_start + h_from_0 and the reverse map r_out = prod(a)
//   r_in + q (the adjoint carry from 0 over the segment, from dy and C).
// B (ssm_bwd_multipass_combine): per (b, n, d), the segments in order for
//   the state at each segment's start (from h0), then in reverse for the
//   adjoint carry into each segment's end (from dlast).
// C (ssm_bwd_multipass_chunks): the sequential kernel's body per segment.
// With the checkpoints given (ckpt_ready: saved by the forward) the states
// at the segments' starts are among them: A skips the forward map (half
// its reads and exps) and B copies them instead of walking the maps.
// Then ssm_bwd_finalize sums the per-(b, segment) partials in order.
#pragma once

#include "ssm/bwd/bwd_sequential.cuh"

namespace ssmtune_kernels {

template <typename Tr>
__global__ void __launch_bounds__(Tr::kThreads, Tr::kMinBlocks)
    ssm_bwd_multipass_local(const SsmBwdParams p) {
  static_assert(ChunkLayoutChecks<Tr>::kOk, "");
  static_assert(Tr::kChan == 1, "multipass: one channel a thread");
  using AccT = typename Tr::AccT;
  using CS = ChannelStates<Tr>;
  constexpr int kPer = CS::kPerThread;
  constexpr BwdSmemLayout L = bwd_smem_layout(Tr::kN, Tr::kChunk, Tr::kDStep, Tr::kNSplit,
                                              Tr::kVarB, Tr::kVarC, static_cast<int>(sizeof(AccT)));
  extern __shared__ float4 smem_raw[];
  float* smem = reinterpret_cast<float*>(smem_raw);
  const SsmFwdParams& f = p.f;
  const Tile tile = make_tile<Tr>(f, blockIdx.x, blockIdx.y);
  const int c = ChunkLanes<Tr>::channel(), s = ChunkLanes<Tr>::split();
  const bool active = c < tile.nd;
  const long long d = tile.d0 + (active ? c : 0);
  const long long b = tile.b;
  const long long dim = f.dim;
  const int seg = blockIdx.z;
  const int j_begin = seg * p.seg_chunks;
  const int j_end = min(j_begin + p.seg_chunks, p.n_chunks);
  CS cs;
  cs.load(f, static_cast<int>(d), s, active);

  AccT h[kPer], aprod[kPer], r[kPer];
#pragma unroll
  for (int k = 0; k < kPer; ++k) h[k] = 0, aprod[k] = 1, r[k] = 0;
  for (int j = j_begin; p.ckpt_ready == 0 && j < j_end; ++j) {
    const int len = min(Tr::kChunk, f.seqlen - j * Tr::kChunk);
    __syncthreads();
    ChunkStage<BwdNoC<Tr>>::stream(f, tile, j * Tr::kChunk, len, smem, L.chunk_nc, threadIdx.x,
                                   blockDim.x);
    __syncthreads();
    bwd_forward_chunk<Tr>(&cs, h, c, s, 0, len, smem, L.chunk_nc, nullptr);
  }
  for (int j = j_end - 1; j >= j_begin; --j) {
    const int t0 = j * Tr::kChunk;
    const int len = min(Tr::kChunk, f.seqlen - t0);
    __syncthreads();
    ChunkStage<Tr>::stream(f, tile, t0, len, smem, L.chunk, threadIdx.x, blockDim.x);
    bwd_stage_dy<Tr, false>(p, tile, t0, len, smem + L.dy, L.chunk.row);
    __syncthreads();
    bwd_reverse_carry<Tr>(cs, r, aprod, c, s, len, smem, L);
  }
  AccT* carries = static_cast<AccT*>(p.carries);
  const long long kind = static_cast<long long>(f.batch) * p.segments * Tr::kN * dim;
  const long long row = b * p.segments + seg;
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int n = CS::state(s, k);
    if (!active || n >= Tr::kN) continue;
    const long long i = (row * Tr::kN + n) * dim + d;
    carries[i] = aprod[k];
    carries[kind + i] = h[k];
    carries[2 * kind + i] = r[k];
  }
}

// One thread per (b, n, d) chain; segments in a fixed order.
template <typename Tr>
__global__ void __launch_bounds__(kBwdCombineThreads)
    ssm_bwd_multipass_combine(const SsmBwdParams p) {
  using AccT = typename Tr::AccT;
  const long long dim = p.f.dim, batch = p.f.batch, S = p.segments;
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= batch * Tr::kN * dim) return;
  const long long d = i % dim, n = (i / dim) % Tr::kN, b = i / (dim * Tr::kN);
  AccT* carries = static_cast<AccT*>(p.carries);
  const long long kind = batch * S * Tr::kN * dim;
  auto at = [&](long long seg) { return ((b * S + seg) * Tr::kN + n) * dim + d; };
  // kGroup segments' maps are read before their results are written: the
  // writes go to other parts of the same buffer, which the compiler cannot
  // tell, so one segment at a time would pay a memory latency per segment.
  constexpr int kGroup = 8;
  AccT h = 0;
  if constexpr (Tr::kH0) h = p.f.h0[b * p.f.h0_batch_stride + d * p.f.h0_dim_stride + n];
  // The states at the segments' starts: copied from the checkpoints when
  // they are given (segment s starts chunk s * seg_chunks), else walked and
  // checkpointed too (C checkpoints the other chunks: the buffer is whole).
  AccT* ckpt = static_cast<AccT*>(p.ckpt);
  auto ckpt_at = [&](long long seg) {
    return bwd_ckpt_index(b, seg * p.seg_chunks, n, d, p.n_chunks, Tr::kN, dim);
  };
  if (p.ckpt_ready != 0) {
    // kGroup checkpoints read before their copies are written (as the walk
    // below): one memory latency per group, not per segment.
    for (long long s0 = 0; s0 < S; s0 += kGroup) {
      AccT v[kGroup];
#pragma unroll
      for (int j = 0; j < kGroup; ++j)
        if (s0 + j < S) v[j] = s0 + j == 0 ? h : ckpt[ckpt_at(s0 + j)];
#pragma unroll
      for (int j = 0; j < kGroup; ++j)
        if (s0 + j < S) carries[3 * kind + at(s0 + j)] = v[j];
    }
  }
  for (long long s0 = 0; p.ckpt_ready == 0 && s0 < S; s0 += kGroup) {
    AccT a[kGroup], c[kGroup];
#pragma unroll
    for (int j = 0; j < kGroup; ++j)
      if (s0 + j < S) a[j] = carries[at(s0 + j)], c[j] = carries[kind + at(s0 + j)];
#pragma unroll
    for (int j = 0; j < kGroup; ++j)
      if (s0 + j < S) {
        carries[3 * kind + at(s0 + j)] = h;
        if (s0 + j > 0) ckpt[ckpt_at(s0 + j)] = h;
        h = a[j] * h + c[j];
      }
  }
  AccT r = 0;
  if constexpr (Tr::kDLast) r = p.dlast[b * p.dlast_batch_stride + d * p.dlast_dim_stride + n];
  for (long long s1 = S - 1; s1 >= 0; s1 -= kGroup) {
    AccT a[kGroup], q[kGroup];
#pragma unroll
    for (int j = 0; j < kGroup; ++j)
      if (s1 - j >= 0) a[j] = carries[at(s1 - j)], q[j] = carries[2 * kind + at(s1 - j)];
#pragma unroll
    for (int j = 0; j < kGroup; ++j)
      if (s1 - j >= 0) {
        carries[4 * kind + at(s1 - j)] = r;
        r = a[j] * r + q[j];
      }
  }
}

template <typename Tr>
__global__ void __launch_bounds__(Tr::kThreads, Tr::kMinBlocks)
    ssm_bwd_multipass_chunks(const SsmBwdParams p) {
  bwd_chunks<Tr, true>(p);
}

}  // namespace ssmtune_kernels
