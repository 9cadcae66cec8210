// Single-pass chunked scan with decoupled look-back (after Merrill and
// Garland 2016), one launch. Each block takes the next (chunk, batch, tile)
// from a counter (so every chunk's predecessors were scheduled before it:
// forward progress), reduces its chunk to the affine map h -> A h + B per
// (channel, state) and publishes it, then folds its predecessors' maps back
// to the nearest anchor chunk (a multiple of kLookbackWindow) and applies
// them to the anchor's published inclusive state. Folding to a fixed anchor,
// rather than to whichever predecessor happens to be done, fixes the order
// of every rounding: two runs give the same bits. The block then publishes
// its own inclusive state and re-runs its chunk from the incoming state to
// write the outputs. Scratch per (batch, tile, chunk): a flag word
// (0 nothing, 1 aggregate, 2 inclusive) and 3 * d_step * dstate accumulators.
#pragma once

#include "ssm/fwd_chunk.cuh"

namespace ssmtune_kernels {

// Chunks between anchors: the longest chain of aggregates a block folds.
inline constexpr int kLookbackWindow = 16;

template <typename Tr>
__global__ void __launch_bounds__(Tr::kThreads) ssm_fwd_lookback(const SsmFwdParams p) {
  static_assert(ChunkLayoutChecks<Tr>::kOk, "");
  using AccT = typename Tr::AccT;
  constexpr int kPer = ChannelStates<Tr>::kPerThread;
  constexpr int kSlot = Tr::kDStep * Tr::kN;  // accumulators per slot
  constexpr ChunkSmemLayout l =
      chunk_smem_layout(Tr::kN, Tr::kChunk, Tr::kDStep, Tr::kVarB, Tr::kVarC);
  extern __shared__ float4 smem_raw[];
  float* smem = reinterpret_cast<float*>(smem_raw);
  __shared__ int s_id;

  if (threadIdx.x == 0) s_id = static_cast<int>(atomicAdd(p.tile_counter, 1u));
  __syncthreads();
  const int n_tiles = p.groups * tiles_per_group(p.dim_per_group, Tr::kDStep);
  const int per_chunk = p.batch * n_tiles;
  const int chunk = s_id / per_chunk;
  const int b = (s_id % per_chunk) / n_tiles;
  const int tile_index = s_id % n_tiles;
  const Tile tile = make_tile<Tr>(p, tile_index, b);
  const int t0 = chunk * Tr::kChunk;
  const int len = min(Tr::kChunk, p.seqlen - t0);
  const int c = ChunkLanes<Tr>::channel(), s = ChunkLanes<Tr>::split();
  const bool active = c < tile.nd;
  const int d = tile.d0 + (active ? c : 0);
  const long long tile_base = (static_cast<long long>(b) * n_tiles + tile_index) * p.n_chunks;
  AccT* vals = static_cast<AccT*>(p.carries);
  auto slot = [&](int ch, int which) { return vals + ((tile_base + ch) * 3 + which) * kSlot; };

  ChannelStates<Tr> cs;
  cs.load(p, d, s, active);
  AccT h[kPer], aprod[kPer], hin[kPer];
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    h[k] = 0;
    aprod[k] = 1;
  }
  stage_chunk<Tr>(p, tile, t0, len, smem, l);
  __syncthreads();
  run_chunk<Tr, false>(cs, h, aprod, c, s, len, smem, l);  // the chunk's map (aprod, h)

  if (chunk == 0) {
    AccT unused[kPer];
    ChannelStates<Tr>::init(p, b, d, s, active, hin, unused);
  } else {
    // Publish the aggregate, then look back.
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const int n = ChannelStates<Tr>::state(s, k);
      if (n < Tr::kN) {
        slot(chunk, 0)[c * Tr::kN + n] = aprod[k];
        slot(chunk, 1)[c * Tr::kN + n] = h[k];
      }
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) atomicExch(&p.flags[tile_base + chunk], 1u);

    AccT ra[kPer], rb[kPer];  // running map of the chunks walked so far
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      ra[k] = 1;
      rb[k] = 0;
    }
    const int anchor = ((chunk - 1) / kLookbackWindow) * kLookbackWindow;
    for (int j = chunk - 1; j >= anchor; --j) {
      // Predecessors after the anchor need their aggregate, the anchor its
      // inclusive state.
      const unsigned need = j == anchor ? 2u : 1u;
      if (threadIdx.x == 0) {
        while (*reinterpret_cast<volatile unsigned*>(&p.flags[tile_base + j]) < need) {
        }
        __threadfence();
      }
      __syncthreads();
      const AccT* incl = slot(j, 2);
      const AccT* agg_a = slot(j, 0);
      const AccT* agg_b = slot(j, 1);
#pragma unroll
      for (int k = 0; k < kPer; ++k) {
        const int n = ChannelStates<Tr>::state(s, k);
        if (n < Tr::kN) {
          const int i = c * Tr::kN + n;
          if (j == anchor) {
            hin[k] = ra[k] * __ldcg(incl + i) + rb[k];
          } else {
            const AccT aj = __ldcg(agg_a + i);
            rb[k] = ra[k] * __ldcg(agg_b + i) + rb[k];
            ra[k] = ra[k] * aj;
          }
        }
      }
    }
  }

  // Publish the inclusive state: the state after this chunk.
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int n = ChannelStates<Tr>::state(s, k);
    if (n < Tr::kN) slot(chunk, 2)[c * Tr::kN + n] = aprod[k] * hin[k] + h[k];
  }
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) atomicExch(&p.flags[tile_base + chunk], 2u);

  // Re-run the chunk from the incoming state and write the outputs.
  auto sink = make_state_sink(p, b, d, active);
  sink.t0 = t0;
  run_chunk<Tr, true>(cs, hin, aprod, c, s, len, smem, l, sink);
  __syncthreads();
  write_chunk<Tr>(p, tile, t0, len, smem, l);
  if (chunk == p.n_chunks - 1) ChannelStates<Tr>::store_last(p, b, d, s, active, hin);
}

}  // namespace ssmtune_kernels
