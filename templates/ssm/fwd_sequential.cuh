// Sequential scan: each thread runs the recurrence along the whole sequence
// for its (channel, states); chunks of kChunk timesteps are staged in shared
// memory so B/C are read once per block and shared by its kDStep channels.
// With kItems 2 the next chunk's global reads are issued before the current
// chunk runs (held in registers until its smem is free). Parallelism comes
// only from batch x dim x n_split.
#pragma once

#include "ssm/fwd_chunk.cuh"

namespace ssmtune_kernels {

template <typename Tr>
__global__ void __launch_bounds__(Tr::kThreads) ssm_fwd_sequential(const SsmFwdParams p) {
  static_assert(ChunkLayoutChecks<Tr>::kOk, "");
  using AccT = typename Tr::AccT;
  constexpr int kPer = ChannelStates<Tr>::kPerThread;
  constexpr ChunkSmemLayout l =
      chunk_smem_layout(Tr::kN, Tr::kChunk, Tr::kDStep, Tr::kVarB, Tr::kVarC);
  extern __shared__ float4 smem_raw[];
  float* smem = reinterpret_cast<float*>(smem_raw);

  const Tile tile = make_tile<Tr>(p, blockIdx.x, blockIdx.y);
  const int c = ChunkLanes<Tr>::channel(), s = ChunkLanes<Tr>::split();
  const bool active = c < tile.nd;
  const int d = tile.d0 + (active ? c : 0);

  ChannelStates<Tr> cs;
  cs.load(p, d, s, active);
  AccT h[kPer], unused[kPer];
  ChannelStates<Tr>::init(p, tile.b, d, s, active, h, unused);
  auto sink = make_state_sink(p, tile.b, d, active);

  // kItems 2: the next chunk's reads are in flight while the current one
  // runs (registers); 1: each chunk is read and stored in one go.
  constexpr bool kPrefetch = Tr::kItems >= 2;
  ChunkStage<Tr> stage;
  if constexpr (kPrefetch) stage.load(p, tile, 0, min(Tr::kChunk, p.seqlen));
  for (int t0 = 0; t0 < p.seqlen; t0 += Tr::kChunk) {
    const int len = min(Tr::kChunk, p.seqlen - t0);
    __syncthreads();  // the previous chunk's smem is consumed
    if constexpr (kPrefetch)
      stage.commit(p, tile, len, smem, l);
    else
      stage_chunk<Tr>(p, tile, t0, len, smem, l);
    __syncthreads();
    if constexpr (kPrefetch) {
      const int t_next = t0 + Tr::kChunk;
      if (t_next < p.seqlen) stage.load(p, tile, t_next, min(Tr::kChunk, p.seqlen - t_next));
    }
    sink.t0 = t0;
    run_chunk<Tr, true>(cs, h, unused, c, s, len, smem, l, sink);
    __syncthreads();
    write_chunk<Tr>(p, tile, t0, len, smem, l);
  }

  ChannelStates<Tr>::store_last(p, tile.b, d, s, active, h);
}

}  // namespace ssmtune_kernels
