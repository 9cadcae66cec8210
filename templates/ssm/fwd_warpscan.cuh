// Thread-serial plus warp-shuffle scan: one warp per channel, each lane
// kItems consecutive timesteps (a chunk is 32 * kItems steps); per state the
// lane's items are reduced serially, the 32 maps are scanned with a
// Kogge-Stone shuffle scan, and each lane re-runs its items from its
// incoming state. The warp walks the sequence chunk by chunk, carrying the
// state in shared memory. B/C tiles are staged once per block for its
// kDStep channels (one warp each).
#pragma once

#include "ssm/fwd_scan_common.cuh"

namespace ssmtune_kernels {

template <typename Tr>
__global__ void __launch_bounds__(Tr::kThreads) ssm_fwd_warpscan(const SsmFwdParams p) {
  static_assert(Tr::kThreads == 32 * Tr::kDStep, "warpscan: one warp per channel");
  static_assert(Tr::kChunk == 32 * Tr::kItems, "warpscan: chunk must be 32 * items");
  using AccT = typename Tr::AccT;
  constexpr ScanSmemLayout l = scan_smem_layout(Tr::kN, Tr::kChunk, Tr::kDStep, Tr::kThreads,
                                                sizeof(AccT), Tr::kVarB, Tr::kVarC, false);
  extern __shared__ float4 smem_raw[];
  char* smem = reinterpret_cast<char*>(smem_raw);
  float* s_b = reinterpret_cast<float*>(smem + l.b);
  float* s_c = reinterpret_cast<float*>(smem + l.c);
  AccT* s_h = reinterpret_cast<AccT*>(smem + l.h);
  float* s_a = reinterpret_cast<float*>(smem + l.a);  // A, pre-scaled

  const Tile tile = make_tile<Tr>(p, blockIdx.x, blockIdx.y);
  const int c = threadIdx.x / 32, lane = threadIdx.x % 32;
  const bool active = c < tile.nd;
  const int d = tile.d0 + (active ? c : 0);
  const float bias = (Tr::kHasBias && active) ? p.delta_bias[d] : 0.0f;

  // Lane 0 of each channel's warp alone reads and writes its carried states.
  for (int n = lane; n < Tr::kN; n += 32) {
    s_h[c * Tr::kN + n] =
        (Tr::kH0 && active)
            ? static_cast<AccT>(p.h0[tile.b * p.h0_batch_stride + d * p.h0_dim_stride + n])
            : AccT(0);
    s_a[c * Tr::kN + n] = active ? p.A[d * p.A_dim_stride + n] * a_scale<Tr>() : 0.0f;
  }

  // This chunk's delta and u, and the next chunk's in flight while this one
  // runs (a register double buffer).
  ThreadItems<Tr> it, next;
  it.load(p, tile.b, d, lane * Tr::kItems, bias);
  for (int t0 = 0; t0 < p.seqlen; t0 += Tr::kChunk) {
    const int len = min(Tr::kChunk, p.seqlen - t0);
    if (t0 + Tr::kChunk < p.seqlen)
      next.load(p, tile.b, d, t0 + Tr::kChunk + lane * Tr::kItems, bias);
    __syncthreads();
    stage_bc<Tr>(p, tile, t0, len, s_b, s_c);
    __syncthreads();
    AccT y[Tr::kItems];
#pragma unroll
    for (int i = 0; i < Tr::kItems; ++i) y[i] = 0;

#pragma unroll 2
    for (int n = 0; n < Tr::kN; ++n) {
      const AccT a2 = static_cast<AccT>(s_a[c * Tr::kN + n]);
      ItemMaps<Tr> maps;
      Affine<AccT> incl = maps.build(p, it, a2, n, d, lane * Tr::kItems, len, s_b);
      // Lane 0 folds the carried state into its map, so the scanned b parts
      // are the states themselves.
      const AccT hprev = lane == 0 ? s_h[c * Tr::kN + n] : AccT(0);
      AccT total;
      const AccT hin = warp_scan_affine<false>(incl, hprev, lane, total);
      maps.rerun(p, hin, n, d, lane * Tr::kItems, len, s_c, y);
      if (lane == 0) s_h[c * Tr::kN + n] = total;
    }
    if (active)
      write_items<Tr>(p, tile.b, d, t0 + lane * Tr::kItems, len - lane * Tr::kItems, y, it.u);
    it = next;
  }
  if constexpr (Tr::kLastState) {
    __syncwarp();
    if (active)
      for (int n = lane; n < Tr::kN; n += 32)
        p.last_state[tile.b * p.last_state_batch_stride + d * p.last_state_dim_stride + n] =
            static_cast<float>(s_h[c * Tr::kN + n]);
  }
}

}  // namespace ssmtune_kernels
