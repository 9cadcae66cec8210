// Pieces of the two time-parallel scan kernels (warpscan, blelloch): each
// thread holds kItems consecutive timesteps, reduces them serially to an
// affine map, the maps are scanned across threads, and each thread re-runs
// its items from the incoming state. B/C are staged per chunk in shared
// memory; the carried state of each (channel, state) lives there too.
#pragma once

#include "ssm/fwd_tile.cuh"

namespace ssmtune_kernels {

// Affine map h -> a h + b. compose(first, second) applies first, then second.
template <typename AccT>
struct Affine {
  AccT a, b;
};
template <typename AccT>
__device__ __forceinline__ Affine<AccT> compose(const Affine<AccT>& first,
                                                const Affine<AccT>& second) {
  return {second.a * first.a, second.a * first.b + second.b};
}

// One thread's kItems timesteps of one channel: transformed delta and u.
template <typename Tr>
struct ThreadItems {
  float dt[Tr::kItems];
  float u[Tr::kItems];
  __device__ __forceinline__ void load(const SsmFwdParams& p, int b, int d, long long t_first,
                                       float bias) {
    using InT = typename Tr::InT;
#pragma unroll
    for (int i = 0; i < Tr::kItems; ++i) {
      const long long t = t_first + i;
      if (t < p.seqlen) {
        dt[i] = transform_delta<Tr>(
            load_in<InT>(p.delta, b * p.delta_batch_stride + d * p.delta_dim_stride + t), bias);
        u[i] = load_in<InT>(p.u, b * p.u_batch_stride + d * p.u_dim_stride + t);
      } else {
        dt[i] = 0.0f;  // a = exp(0) = 1 and b = 0: the identity map
        u[i] = 0.0f;
      }
    }
  }
};

// Stages the chunk's variable B/C rows: s_b[n * kChunk + t].
template <typename Tr>
__device__ __forceinline__ void stage_bc(const SsmFwdParams& p, const Tile& tile, int t0, int len,
                                         float* s_b, float* s_c) {
  using InT = typename Tr::InT;
  for (int i = threadIdx.x; i < Tr::kN * Tr::kChunk; i += blockDim.x) {
    const int n = i / Tr::kChunk, t = i % Tr::kChunk;
    if (t < len) {
      if constexpr (Tr::kVarB)
        s_b[i] = load_in<InT>(
            p.B, bc_index(p.B_batch_stride, p.B_group_stride, p.B_dstate_stride, tile, n, t0 + t));
      if constexpr (Tr::kVarC)
        s_c[i] = load_in<InT>(
            p.C, bc_index(p.C_batch_stride, p.C_group_stride, p.C_dstate_stride, tile, n, t0 + t));
    }
  }
}

// B or C of state n at chunk-local timestep t.
template <bool kVar>
__device__ __forceinline__ float bc_value(const SsmFwdParams& p, const void* base,
                                          long long dim_stride, const float* staged, int d, int n,
                                          int t, int chunk) {
  if constexpr (kVar) return staged[n * chunk + t];
  return static_cast<const float*>(base)[d * dim_stride + n];
}

// One thread's items for state n: the per-step maps a = exp(dt A),
// bx = dt u B (kept for the re-run) and their serial composition.
template <typename Tr>
struct ItemMaps {
  using AccT = typename Tr::AccT;
  AccT a[Tr::kItems];
  AccT bx[Tr::kItems];

  // `first`: chunk-local timestep of item 0; items at or past `len` are the identity.
  __device__ __forceinline__ Affine<AccT> build(const SsmFwdParams& p, const ThreadItems<Tr>& it,
                                                AccT a2, int n, int d, int first, int len,
                                                const float* s_b) {
    Affine<AccT> agg{1, 0};
#pragma unroll
    for (int i = 0; i < Tr::kItems; ++i) {
      const int t = first + i;
      a[i] = exp_state<Tr>(static_cast<AccT>(it.dt[i]) * a2, n);
      const float bv =
          t < len ? bc_value<Tr::kVarB>(p, p.B, p.B_batch_stride, s_b, d, n, t, Tr::kChunk) : 0.0f;
      bx[i] = static_cast<AccT>(it.dt[i] * it.u[i]) * static_cast<AccT>(bv);
      agg = compose(agg, Affine<AccT>{a[i], bx[i]});
    }
    return agg;
  }

  // Re-runs the items from the incoming state h, adding C h to y.
  __device__ __forceinline__ void rerun(const SsmFwdParams& p, AccT h, int n, int d, int first,
                                        int len, const float* s_c, AccT (&y)[Tr::kItems]) const {
#pragma unroll
    for (int i = 0; i < Tr::kItems; ++i) {
      const int t = first + i;
      h = a[i] * h + bx[i];
      const float cv =
          t < len ? bc_value<Tr::kVarC>(p, p.C, p.C_batch_stride, s_c, d, n, t, Tr::kChunk) : 0.0f;
      y[i] += static_cast<AccT>(cv) * h;
    }
  }
};

}  // namespace ssmtune_kernels
