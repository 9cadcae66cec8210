// Pieces shared by the forward kernels: which channels a block owns, loading
// a chunk of inputs into shared memory, and writing a chunk of outputs
// (y + D*u, then y * silu(z)).
#pragma once

#include "ssm/fwd_math.cuh"

namespace ssmtune_kernels {

// The channels [d0, d0 + nd) of one block, all in B/C group g, of batch b.
struct Tile {
  int b;
  int g;
  int d0;
  int nd;
};

template <typename Tr>
__device__ __forceinline__ Tile make_tile(const SsmFwdParams& p, int tile_index, int b) {
  const int tpg = tiles_per_group(p.dim_per_group, Tr::kDStep);
  Tile t;
  t.b = b;
  t.g = tile_index / tpg;
  const int j = tile_index % tpg;
  t.d0 = t.g * p.dim_per_group + j * Tr::kDStep;
  t.nd = min(Tr::kDStep, p.dim_per_group - j * Tr::kDStep);
  return t;
}

// Variable B/C element (n, t) of the tile's group.
__device__ __forceinline__ long long bc_index(long long batch_stride, long long group_stride,
                                              long long dstate_stride, const Tile& tile, int n,
                                              long long t) {
  return tile.b * batch_stride + tile.g * group_stride + n * dstate_stride + t;
}

// Stages timesteps [t0, t0 + len) of the tile into shared memory: transformed
// delta and u per channel, and the variable B/C rows shared by all channels.
template <typename Tr>
__device__ __forceinline__ void stage_chunk(const SsmFwdParams& p, const Tile& tile, int t0,
                                            int len, float* smem, const ChunkSmemLayout& l) {
  using InT = typename Tr::InT;
  for (int i = threadIdx.x; i < Tr::kDStep * Tr::kChunk; i += blockDim.x) {
    const int c = i / Tr::kChunk, t = i % Tr::kChunk;
    if (c < tile.nd && t < len) {
      const int d = tile.d0 + c;
      const long long tt = t0 + t;
      const float bias = Tr::kHasBias ? p.delta_bias[d] : 0.0f;
      smem[l.dt + c * l.row + t] = transform_delta<Tr>(
          load_in<InT>(p.delta, tile.b * p.delta_batch_stride + d * p.delta_dim_stride + tt), bias);
      smem[l.u + c * l.row + t] =
          load_in<InT>(p.u, tile.b * p.u_batch_stride + d * p.u_dim_stride + tt);
    }
  }
  if constexpr (Tr::kVarB || Tr::kVarC) {
    for (int i = threadIdx.x; i < Tr::kN * Tr::kChunk; i += blockDim.x) {
      const int n = i / Tr::kChunk, t = i % Tr::kChunk;
      if (t < len) {
        if constexpr (Tr::kVarB)
          smem[l.b + i] = load_in<InT>(p.B, bc_index(p.B_batch_stride, p.B_group_stride,
                                                     p.B_dstate_stride, tile, n, t0 + t));
        if constexpr (Tr::kVarC)
          smem[l.c + i] = load_in<InT>(p.C, bc_index(p.C_batch_stride, p.C_group_stride,
                                                     p.C_dstate_stride, tile, n, t0 + t));
      }
    }
  }
}

// Writes out (and out_z) for one channel and timestep from y = sum_n C h.
template <typename Tr>
__device__ __forceinline__ void write_output(const SsmFwdParams& p, int b, int d, long long t,
                                             typename Tr::AccT y, float u) {
  using InT = typename Tr::InT;
  using AccT = typename Tr::AccT;
  if constexpr (Tr::kHasD) y += static_cast<AccT>(p.D[d]) * static_cast<AccT>(u);
  const float yf = static_cast<float>(y);
  static_cast<InT*>(p.out)[b * p.out_batch_stride + d * p.out_dim_stride + t] = from_float<InT>(yf);
  if constexpr (Tr::kHasZ) {
    const float z = load_in<InT>(p.z, b * p.z_batch_stride + d * p.z_dim_stride + t);
    static_cast<InT*>(p.out_z)[b * p.out_z_batch_stride + d * p.out_z_dim_stride + t] =
        from_float<InT>(yf * silu(z));
  }
}

// Writes the staged chunk's outputs from the per-channel y rows in smem.
template <typename Tr>
__device__ __forceinline__ void write_chunk(const SsmFwdParams& p, const Tile& tile, int t0,
                                            int len, const float* smem, const ChunkSmemLayout& l) {
  for (int i = threadIdx.x; i < Tr::kDStep * Tr::kChunk; i += blockDim.x) {
    const int c = i / Tr::kChunk, t = i % Tr::kChunk;
    if (c < tile.nd && t < len)
      write_output<Tr>(p, tile.b, tile.d0 + c, t0 + t, smem[l.y + c * l.row + t],
                       smem[l.u + c * l.row + t]);
  }
}

// Per-thread constants of the chunk kernels: thread (c, s) owns states
// n = s + k * kNSplit of channel c.
template <typename Tr>
struct ChannelStates {
  static constexpr int kPerThread = (Tr::kN + Tr::kNSplit - 1) / Tr::kNSplit;
  using AccT = typename Tr::AccT;
  float a2[kPerThread];  // A, pre-scaled for the fast exps
  float bconst[Tr::kVarB ? 1 : kPerThread];
  float cconst[Tr::kVarC ? 1 : kPerThread];

  __device__ __forceinline__ static int state(int s, int k) { return s + k * Tr::kNSplit; }

  __device__ __forceinline__ void load(const SsmFwdParams& p, int d, int s, bool active) {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int n = state(s, k);
      const bool ok = active && n < Tr::kN;
      a2[k] = ok ? p.A[d * p.A_dim_stride + n] * a_scale<Tr>() : 0.0f;
      if constexpr (!Tr::kVarB)
        bconst[k] = ok ? static_cast<const float*>(p.B)[d * p.B_batch_stride + n] : 0.0f;
      if constexpr (!Tr::kVarC)
        cconst[k] = ok ? static_cast<const float*>(p.C)[d * p.C_batch_stride + n] : 0.0f;
    }
  }
};

// Reduces a value over the kNSplit adjacent lanes that share one channel.
template <typename Tr, typename T>
__device__ __forceinline__ T reduce_split(T v) {
#pragma unroll
  for (int off = Tr::kNSplit / 2; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

}  // namespace ssmtune_kernels
