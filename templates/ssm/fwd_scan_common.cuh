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

// Where the state after `t` steps goes when t ends one of the backward's
// chunks before the sequence's end (the saving variant, kSaves; null
// otherwise): state n at [n * dim]. (The saving variant takes 145 registers
// to the plain kernel's 106 at (8, 1536, 2048, 16) bf16 with the flags.)
template <bool kSaves>
__device__ __forceinline__ float* checkpoint_row(const SsmFwdParams& p, int b, int d, bool active,
                                                 long long t) {
  if constexpr (kSaves) {
    if (p.states != nullptr && active && t > 0 && t < p.seqlen &&
        (t & ((1 << p.states_shift) - 1)) == 0) {
      const long long saved = (p.seqlen - 1) >> p.states_shift;  // chunks j >= 1
      const long long j = (t >> p.states_shift) - 1;
      return p.states + (b * saved + j) * p.dstate * p.dim + d;
    }
  }
  return nullptr;
}

// The warp's lanes' maps scanned in order (lane 0 first; kReverse: lane 31
// first, as the backward's adjoint runs), with the carried value `carry`
// (read from the first lane only) folded into the first lane's map:
// returns the value entering this lane's items, and `total` gets the value
// leaving the last lane (every lane). Kogge-Stone over shuffles; the last
// level needs no slope.
template <bool kReverse, typename AccT>
__device__ __forceinline__ AccT warp_scan_affine(Affine<AccT> incl, AccT carry, int lane,
                                                 AccT& total) {
  constexpr int kFirst = kReverse ? 31 : 0;
  if (lane == kFirst) incl.b = incl.a * carry + incl.b;
#pragma unroll
  for (int off = 1; off < 32; off *= 2) {
    const bool from = kReverse ? lane + off < 32 : lane >= off;
    const AccT prev_b = kReverse ? __shfl_down_sync(0xffffffffu, incl.b, off)
                                 : __shfl_up_sync(0xffffffffu, incl.b, off);
    if (off < 16) {
      const AccT prev_a = kReverse ? __shfl_down_sync(0xffffffffu, incl.a, off)
                                   : __shfl_up_sync(0xffffffffu, incl.a, off);
      if (from) incl = compose(Affine<AccT>{prev_a, prev_b}, incl);
    } else if (from) {
      incl.b = incl.a * prev_b + incl.b;
    }
  }
  AccT in =
      kReverse ? __shfl_down_sync(0xffffffffu, incl.b, 1) : __shfl_up_sync(0xffffffffu, incl.b, 1);
  if (lane == kFirst) in = carry;
  total = __shfl_sync(0xffffffffu, incl.b, 31 - kFirst);
  return in;
}

// The warp's lanes' maps scanned in order (kReverse: lane 31 first) with
// nothing carried in: `excl` gets the composition of the lanes before this
// one (the identity on the first lane), the return value the composition of
// all 32 (every lane). For a chunk scanned by several warps, whose incoming
// value is known only after the other warps have their totals.
template <bool kReverse = false, typename AccT>
__device__ __forceinline__ Affine<AccT> warp_scan_maps(Affine<AccT> incl, int lane,
                                                       Affine<AccT>& excl) {
  constexpr int kFirst = kReverse ? 31 : 0;
#pragma unroll
  for (int off = 1; off < 32; off *= 2) {
    const AccT prev_a = kReverse ? __shfl_down_sync(0xffffffffu, incl.a, off)
                                 : __shfl_up_sync(0xffffffffu, incl.a, off);
    const AccT prev_b = kReverse ? __shfl_down_sync(0xffffffffu, incl.b, off)
                                 : __shfl_up_sync(0xffffffffu, incl.b, off);
    if (kReverse ? lane + off < 32 : lane >= off)
      incl = compose(Affine<AccT>{prev_a, prev_b}, incl);
  }
  excl.a =
      kReverse ? __shfl_down_sync(0xffffffffu, incl.a, 1) : __shfl_up_sync(0xffffffffu, incl.a, 1);
  excl.b =
      kReverse ? __shfl_down_sync(0xffffffffu, incl.b, 1) : __shfl_up_sync(0xffffffffu, incl.b, 1);
  if (lane == kFirst) excl = Affine<AccT>{1, 0};
  return Affine<AccT>{__shfl_sync(0xffffffffu, incl.a, 31 - kFirst),
                      __shfl_sync(0xffffffffu, incl.b, 31 - kFirst)};
}

// One thread's kItems timesteps (a multiple of 4) of one channel's row as
// loaded, four per access, not yet converted: every read issued before any
// is used (converting each group as it lands waits a round trip per group).
template <typename Tr>
struct RawRow {
  using InT = typename Tr::InT;
  using Raw = typename Vec4Raw<InT>::type;
  static constexpr int kGroups = Tr::kItems / 4 > 0 ? Tr::kItems / 4 : 1;
  Raw v[kGroups];

  __device__ __forceinline__ static int valid(const SsmFwdParams& p, long long t) {
    return static_cast<int>(min(4LL, max(0LL, p.seqlen - t)));
  }
  // The row's elements from t_first on: element t at base[row + t].
  __device__ __forceinline__ void load_row(const SsmFwdParams& p, const void* base, long long row,
                                           long long t_first) {
    const bool vec = p.vec4 != 0;
#pragma unroll
    for (int q = 0; q < kGroups; ++q) {
      const long long t = t_first + 4 * q;
      v[q] = load4_raw<InT>(base, row + t, valid(p, t), vec);
    }
  }
  __device__ __forceinline__ void load(const SsmFwdParams& p, const void* base,
                                       long long batch_stride, long long dim_stride, int b, int d,
                                       long long t_first) {
    load_row(p, base, b * batch_stride + d * dim_stride, t_first);
  }
};

// delta and u as loaded (RawRow), converted by ThreadItems::convert.
template <typename Tr>
struct RawItems {
  RawRow<Tr> dt, u;
  __device__ __forceinline__ void load(const SsmFwdParams& p, int b, int d, long long t_first) {
    dt.load(p, p.delta, p.delta_batch_stride, p.delta_dim_stride, b, d, t_first);
    u.load(p, p.u, p.u_batch_stride, p.u_dim_stride, b, d, t_first);
  }
};

// One thread's kItems timesteps of one channel: transformed delta and u.
template <typename Tr>
struct ThreadItems {
  float dt[Tr::kItems];
  float u[Tr::kItems];
  // From raw items loaded at t_first (RawItems): as load gives them.
  __device__ __forceinline__ void convert(const SsmFwdParams& p, const RawItems<Tr>& raw,
                                          long long t_first, float bias) {
    using InT = typename Tr::InT;
#pragma unroll
    for (int q = 0; q < Tr::kItems / 4; ++q) {
      const int valid = RawRow<Tr>::valid(p, t_first + 4 * q);
      float dv[4], uv[4];
      unpack4<InT>(raw.dt.v[q], dv);
      unpack4<InT>(raw.u.v[q], uv);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        dt[4 * q + j] =
            j < valid ? transform_delta<Tr>(dv[j], bias) : 0.0f;  // identity past the end
        u[4 * q + j] = uv[j];
      }
    }
  }
  __device__ __forceinline__ void load(const SsmFwdParams& p, int b, int d, long long t_first,
                                       float bias) {
    using InT = typename Tr::InT;
    if constexpr (Tr::kItems % 4 == 0) {
      // Four timesteps per access (t_first is a multiple of kItems), each
      // group converted as it lands. (Every read issued first, as RawItems
      // does, took 137 registers against 106 at 8 fp32 items a lane with the
      // flags, 110 against 89 plain.)
      const bool vec = p.vec4 != 0;
#pragma unroll
      for (int q = 0; q < Tr::kItems / 4; ++q) {
        const long long t = t_first + 4 * q;
        const int valid = static_cast<int>(min(4LL, max(0LL, p.seqlen - t)));
        float dv[4], uv[4];
        load4<InT>(p.delta, b * p.delta_batch_stride + d * p.delta_dim_stride + t, valid, vec, dv);
        load4<InT>(p.u, b * p.u_batch_stride + d * p.u_dim_stride + t, valid, vec, uv);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          // Past the end: dt = 0 gives a = 1 and b = 0, the identity map.
          dt[4 * q + j] = j < valid ? transform_delta<Tr>(dv[j], bias) : 0.0f;
          u[4 * q + j] = uv[j];
        }
      }
      return;
    }
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

// Writes one thread's kItems outputs from timestep t_first on (`valid` of
// them lie inside the chunk), four per access where kItems allows. z: the
// gate's row when the caller read it ahead (a multiple of 4 items); null
// reads it group by group here.
template <typename Tr>
__device__ __forceinline__ void write_items(const SsmFwdParams& p, int b, int d, long long t_first,
                                            int valid, const typename Tr::AccT (&y)[Tr::kItems],
                                            const float (&u)[Tr::kItems],
                                            const RawRow<Tr>* z = nullptr) {
  if constexpr (Tr::kItems % 4 == 0) {
    const bool vec = p.vec4 != 0;
    const float dd = Tr::kHasD ? p.D[d] : 0.0f;
#pragma unroll
    for (int q = 0; q < Tr::kItems / 4; ++q) {
      const int v = min(4, valid - 4 * q);
      if (v <= 0) break;
      const long long t = t_first + 4 * q;
      float o[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        o[j] = static_cast<float>(y[4 * q + j]);
        if constexpr (Tr::kHasD) o[j] = fmaf(dd, u[4 * q + j], o[j]);
      }
      float zv[4];
      if (z != nullptr) unpack4<typename Tr::InT>(z->v[q], zv);
      write_group4<Tr>(p, b, d, t, v, vec, o, z != nullptr ? zv : nullptr);
    }
  } else {
#pragma unroll
    for (int i = 0; i < Tr::kItems; ++i)
      if (i < valid) write_output<Tr>(p, b, d, t_first + i, y[i], u[i]);
  }
}

// Stages the chunk's variable B/C rows: s_b[n * kChunk + t]. Positions at or
// past len are not staged (readers mask them). kBatch reads of each in
// flight per thread (BcStage::stream).
template <typename Tr, int kBatch = 1>
__device__ __forceinline__ void stage_bc(const SsmFwdParams& p, const Tile& tile, int t0, int len,
                                         float* s_b, float* s_c) {
  BcStage<Tr>::template stream<kBatch>(p, tile, t0, len, s_b, s_c, Tr::kChunk, threadIdx.x,
                                       blockDim.x);
}

// The same for kSlots states n_first + k * n_step only (the others are
// another block's), state n_first + k * n_step in row k.
template <typename Tr, int kBatch, int kSlots>
__device__ __forceinline__ void stage_bc_states(const SsmFwdParams& p, const Tile& tile, int t0,
                                                int len, float* s_b, float* s_c, int n_first,
                                                int n_step) {
  BcStage<Tr>::template stream<kBatch, kSlots>(p, tile, t0, len, s_b, s_c, Tr::kChunk, threadIdx.x,
                                               blockDim.x, n_first, n_step);
}

// One thread's kItems B (or C) values of state n from chunk-local timestep
// `first` on: state n's staged row `staged` (kChunk floats; read four at a
// time where kItems allows) or the constant (dim, dstate) value; 0 at or
// past len.
template <typename Tr, bool kVar>
__device__ __forceinline__ void bc_items(const SsmFwdParams& p, const void* base,
                                         long long dim_stride, const float* staged, int d, int n,
                                         int first, int len, float (&v)[Tr::kItems]) {
  if constexpr (!kVar) {
    const float c = static_cast<const float*>(base)[d * dim_stride + n];
#pragma unroll
    for (int i = 0; i < Tr::kItems; ++i) v[i] = c;
  } else {
    const float* row = staged + first;
    if constexpr (Tr::kItems % 4 == 0) {
#pragma unroll
      for (int q = 0; q < Tr::kItems / 4; ++q) {
        float x[4];
        lds4(row + 4 * q, x);
#pragma unroll
        for (int j = 0; j < 4; ++j) v[4 * q + j] = x[j];
      }
    } else {
#pragma unroll
      for (int i = 0; i < Tr::kItems; ++i) v[i] = first + i < len ? row[i] : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < Tr::kItems; ++i) v[i] = first + i < len ? v[i] : 0.0f;
  }
}

// One thread's items for state n: the per-step maps a = exp(dt A),
// bx = dt u B (kept for the re-run) and their serial composition.
template <typename Tr>
struct ItemMaps {
  using AccT = typename Tr::AccT;
  AccT a[Tr::kItems];
  AccT bx[Tr::kItems];

  // `first`: chunk-local timestep of item 0; items at or past `len` are the
  // identity. b_row, c_row: state n's staged B (C) row.
  __device__ __forceinline__ Affine<AccT> build(const SsmFwdParams& p, const ThreadItems<Tr>& it,
                                                AccT a2, int n, int d, int first, int len,
                                                const float* b_row) {
    float bv[Tr::kItems];
    bc_items<Tr, Tr::kVarB>(p, p.B, p.B_batch_stride, b_row, d, n, first, len, bv);
    return build_from(it, a2, n, bv);
  }
  // The same from this lane's B values of state n (zero past the sequence).
  __device__ __forceinline__ Affine<AccT> build_from(const ThreadItems<Tr>& it, AccT a2, int n,
                                                     const float (&bv)[Tr::kItems]) {
    Affine<AccT> agg{1, 0};
#pragma unroll
    for (int i = 0; i < Tr::kItems; ++i) {
      a[i] = exp_state<Tr>(static_cast<AccT>(it.dt[i]) * a2, n);
      bx[i] = static_cast<AccT>(it.dt[i] * it.u[i]) * static_cast<AccT>(bv[i]);
      agg = compose(agg, Affine<AccT>{a[i], bx[i]});
    }
    return agg;
  }

  // Re-runs the items from the incoming state h, adding C h to y.
  __device__ __forceinline__ void rerun(const SsmFwdParams& p, AccT h, int n, int d, int first,
                                        int len, const float* c_row, AccT (&y)[Tr::kItems]) const {
    float cv[Tr::kItems];
    bc_items<Tr, Tr::kVarC>(p, p.C, p.C_batch_stride, c_row, d, n, first, len, cv);
    rerun_from(h, cv, y);
  }
  // The same from this lane's C values of state n.
  __device__ __forceinline__ void rerun_from(AccT h, const float (&cv)[Tr::kItems],
                                             AccT (&y)[Tr::kItems]) const {
#pragma unroll
    for (int i = 0; i < Tr::kItems; ++i) {
      h = a[i] * h + bx[i];
      y[i] += static_cast<AccT>(cv[i]) * h;
    }
  }
};

}  // namespace ssmtune_kernels
