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
  extern __shared__ float4 smem_raw[];
  float* s_b = reinterpret_cast<float*>(smem_raw);
  float* s_c = s_b + (Tr::kVarB ? Tr::kN * Tr::kChunk : 0);
  AccT* s_h = reinterpret_cast<AccT*>(s_c + (Tr::kVarC ? Tr::kN * Tr::kChunk : 0));

  const Tile tile = make_tile<Tr>(p, blockIdx.x, blockIdx.y);
  const int c = threadIdx.x / 32, lane = threadIdx.x % 32;
  const bool active = c < tile.nd;
  const int d = tile.d0 + (active ? c : 0);
  const float bias = (Tr::kHasBias && active) ? p.delta_bias[d] : 0.0f;

  for (int n = lane; n < Tr::kN; n += 32)
    s_h[c * Tr::kN + n] =
        (Tr::kH0 && active)
            ? static_cast<AccT>(p.h0[tile.b * p.h0_batch_stride + d * p.h0_dim_stride + n])
            : AccT(0);

  for (int t0 = 0; t0 < p.seqlen; t0 += Tr::kChunk) {
    const int len = min(Tr::kChunk, p.seqlen - t0);
    __syncthreads();
    stage_bc<Tr>(p, tile, t0, len, s_b, s_c);
    __syncthreads();
    ThreadItems<Tr> it;
    it.load(p, tile.b, d, t0 + lane * Tr::kItems, bias);
    AccT y[Tr::kItems];
#pragma unroll
    for (int i = 0; i < Tr::kItems; ++i) y[i] = 0;

#pragma unroll 1
    for (int n = 0; n < Tr::kN; ++n) {
      const AccT a2 = static_cast<AccT>(active ? p.A[d * p.A_dim_stride + n] * a_scale<Tr>() : 0.f);
      ItemMaps<Tr> maps;
      const Affine<AccT> agg = maps.build(p, it, a2, n, d, lane * Tr::kItems, len, s_b);
      // Inclusive Kogge-Stone scan over the warp.
      Affine<AccT> incl = agg;
#pragma unroll
      for (int off = 1; off < 32; off *= 2) {
        Affine<AccT> prev{__shfl_up_sync(0xffffffffu, incl.a, off),
                          __shfl_up_sync(0xffffffffu, incl.b, off)};
        if (lane >= off) incl = compose(prev, incl);
      }
      Affine<AccT> excl{__shfl_up_sync(0xffffffffu, incl.a, 1),
                        __shfl_up_sync(0xffffffffu, incl.b, 1)};
      if (lane == 0) excl = {1, 0};
      const AccT hprev = s_h[c * Tr::kN + n];
      maps.rerun(p, excl.a * hprev + excl.b, n, d, lane * Tr::kItems, len, s_c, y);
      const AccT total_a = __shfl_sync(0xffffffffu, incl.a, 31);
      const AccT total_b = __shfl_sync(0xffffffffu, incl.b, 31);
      __syncwarp();
      if (lane == 0) s_h[c * Tr::kN + n] = total_a * hprev + total_b;
      __syncwarp();
    }
    if (active) {
#pragma unroll
      for (int i = 0; i < Tr::kItems; ++i) {
        const int t = lane * Tr::kItems + i;
        if (t < len) write_output<Tr>(p, tile.b, d, t0 + t, y[i], it.u[i]);
      }
    }
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
