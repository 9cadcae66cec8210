// Thread-serial plus work-efficient (Blelloch) scan in shared memory: the
// whole block scans one channel at a time along a chunk of
// kThreads * kItems timesteps (up-sweep, then down-sweep to an exclusive
// scan of the per-thread maps), then each thread re-runs its items from its
// incoming state. The kDStep channels of the block are processed in turn and
// share the staged B/C chunk.
#pragma once

#include "ssm/fwd_scan_common.cuh"

namespace ssmtune_kernels {

template <typename Tr>
__global__ void __launch_bounds__(Tr::kThreads) ssm_fwd_blelloch(const SsmFwdParams p) {
  static_assert((Tr::kThreads & (Tr::kThreads - 1)) == 0, "blelloch: threads must be 2^k");
  static_assert(Tr::kChunk == Tr::kThreads * Tr::kItems, "blelloch: chunk must be threads * items");
  using AccT = typename Tr::AccT;
  constexpr int T = Tr::kThreads;
  constexpr ScanSmemLayout l = scan_smem_layout(Tr::kN, Tr::kChunk, Tr::kDStep, Tr::kThreads,
                                                sizeof(AccT), Tr::kVarB, Tr::kVarC, true);
  extern __shared__ float4 smem_raw[];
  char* smem = reinterpret_cast<char*>(smem_raw);
  float* s_b = reinterpret_cast<float*>(smem + l.b);
  float* s_c = reinterpret_cast<float*>(smem + l.c);
  AccT* s_h = reinterpret_cast<AccT*>(smem + l.h);
  AccT* s_a = reinterpret_cast<AccT*>(smem + l.a);  // scan arrays
  AccT* s_x = reinterpret_cast<AccT*>(smem + l.x);

  const Tile tile = make_tile<Tr>(p, blockIdx.x, blockIdx.y);
  const int tid = threadIdx.x;
  for (int i = tid; i < Tr::kDStep * Tr::kN; i += T) {
    const int c = i / Tr::kN, n = i % Tr::kN;
    s_h[i] = (Tr::kH0 && c < tile.nd)
                 ? static_cast<AccT>(
                       p.h0[tile.b * p.h0_batch_stride + (tile.d0 + c) * p.h0_dim_stride + n])
                 : AccT(0);
  }

  for (int t0 = 0; t0 < p.seqlen; t0 += Tr::kChunk) {
    const int len = min(Tr::kChunk, p.seqlen - t0);
    __syncthreads();
    stage_bc<Tr>(p, tile, t0, len, s_b, s_c);
    __syncthreads();
    for (int c = 0; c < tile.nd; ++c) {
      const int d = tile.d0 + c;
      ThreadItems<Tr> it;
      it.load(p, tile.b, d, t0 + tid * Tr::kItems, Tr::kHasBias ? p.delta_bias[d] : 0.0f);
      AccT y[Tr::kItems];
#pragma unroll
      for (int i = 0; i < Tr::kItems; ++i) y[i] = 0;
#pragma unroll 1
      for (int n = 0; n < Tr::kN; ++n) {
        const AccT a2 = static_cast<AccT>(p.A[d * p.A_dim_stride + n] * a_scale<Tr>());
        ItemMaps<Tr> maps;
        const Affine<AccT> agg =
            maps.build(p, it, a2, n, d, tid * Tr::kItems, len, s_b + n * Tr::kChunk);
        const AccT hprev = s_h[c * Tr::kN + n];
        __syncthreads();  // everyone has read s_h and finished with the scan arrays
        s_a[tid] = agg.a;
        s_x[tid] = agg.b;
        // Up-sweep: node idx accumulates its left sibling subtree.
        for (int stride = 1; stride < T; stride *= 2) {
          __syncthreads();
          const int idx = (tid + 1) * 2 * stride - 1;
          if (idx < T) {
            const Affine<AccT> r = compose(Affine<AccT>{s_a[idx - stride], s_x[idx - stride]},
                                           Affine<AccT>{s_a[idx], s_x[idx]});
            s_a[idx] = r.a;
            s_x[idx] = r.b;
          }
        }
        __syncthreads();
        const Affine<AccT> total{s_a[T - 1], s_x[T - 1]};
        __syncthreads();
        if (tid == 0) {
          s_a[T - 1] = 1;
          s_x[T - 1] = 0;
        }
        // Down-sweep: the left child gets the parent's prefix, the right
        // child the prefix followed by the left subtree.
        for (int stride = T / 2; stride >= 1; stride /= 2) {
          __syncthreads();
          const int idx = (tid + 1) * 2 * stride - 1;
          if (idx < T) {
            const Affine<AccT> left{s_a[idx - stride], s_x[idx - stride]};
            const Affine<AccT> prefix{s_a[idx], s_x[idx]};
            const Affine<AccT> right = compose(prefix, left);
            s_a[idx - stride] = prefix.a;
            s_x[idx - stride] = prefix.b;
            s_a[idx] = right.a;
            s_x[idx] = right.b;
          }
        }
        __syncthreads();
        const Affine<AccT> excl{s_a[tid], s_x[tid]};
        maps.rerun(p, excl.a * hprev + excl.b, n, d, tid * Tr::kItems, len, s_c + n * Tr::kChunk,
                   y);
        if (tid == 0) s_h[c * Tr::kN + n] = total.a * hprev + total.b;
      }
#pragma unroll
      for (int i = 0; i < Tr::kItems; ++i) {
        const int t = tid * Tr::kItems + i;
        if (t < len) write_output<Tr>(p, tile.b, d, t0 + t, y[i], it.u[i]);
      }
    }
  }
  if constexpr (Tr::kLastState) {
    __syncthreads();
    for (int i = tid; i < tile.nd * Tr::kN; i += T) {
      const int c = i / Tr::kN, n = i % Tr::kN;
      p.last_state[tile.b * p.last_state_batch_stride + (tile.d0 + c) * p.last_state_dim_stride +
                   n] = static_cast<float>(s_h[i]);
    }
  }
}

}  // namespace ssmtune_kernels
