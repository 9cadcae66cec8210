// Pieces shared by the forward kernels: which channels a block owns, loading
// a chunk of inputs into shared memory, and writing a chunk of outputs
// (y + D*u, then y * silu(z)).
#pragma once

#include "ssm/fwd_vec.cuh"

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

// Staging of one chunk, timesteps [t0, t0 + len), into shared memory in
// two halves: load() issues the global reads, four timesteps per access,
// into registers (raw, so halves take half the registers), and commit()
// converts them and stores them. A kernel that loops over chunks loads the
// next chunk before it runs the current one, so the reads are in flight
// while it computes. Thread i takes elements i, i + kThreads, ...

// The variable B/C rows of the chunk, shared by all channels of the tile:
// s_b[n * row + t]. The group of 4 that holds the last timestep is padded
// with zeros; groups past it are not staged.
template <typename Tr>
struct BcStage {
  using InT = typename Tr::InT;
  using Raw = typename Vec4Raw<InT>::type;
  static_assert(Tr::kChunk % 4 == 0, "staged kernels: chunk must be a multiple of 4");
  static constexpr int kGroups = Tr::kChunk / 4;
  static constexpr int kTotal = Tr::kN * kGroups;
  static constexpr int kIters = (kTotal + Tr::kThreads - 1) / Tr::kThreads;
  Raw b[Tr::kVarB ? kIters : 1];
  Raw c[Tr::kVarC ? kIters : 1];

  // This thread's r-th group of 4: state n, chunk-local timestep t; false
  // when there is none or it lies past len.
  __device__ __forceinline__ static bool group(int r, int len, int& n, int& t) {
    const int i = threadIdx.x + r * Tr::kThreads;
    n = i / kGroups;
    t = (i % kGroups) * 4;
    return i < kTotal && t < len;
  }
  __device__ __forceinline__ static long long index_b(const SsmFwdParams& p, const Tile& tile,
                                                      int n, int t) {
    return bc_index(p.B_batch_stride, p.B_group_stride, p.B_dstate_stride, tile, n, t);
  }
  __device__ __forceinline__ static long long index_c(const SsmFwdParams& p, const Tile& tile,
                                                      int n, int t) {
    return bc_index(p.C_batch_stride, p.C_group_stride, p.C_dstate_stride, tile, n, t);
  }
  __device__ __forceinline__ static void store(const Raw& v, float* row) {
    float f[4];
    unpack4<InT>(v, f);
    sts4(row, f);
  }

  __device__ __forceinline__ void load(const SsmFwdParams& p, const Tile& tile, int t0, int len) {
#pragma unroll
    for (int r = 0; r < kIters; ++r) {
      int n, t;
      if (!group(r, len, n, t)) continue;
      const int valid = min(4, len - t);
      if constexpr (Tr::kVarB)
        b[r] = load4_raw<InT>(p.B, index_b(p, tile, n, t0 + t), valid, p.vec4 != 0);
      if constexpr (Tr::kVarC)
        c[r] = load4_raw<InT>(p.C, index_c(p, tile, n, t0 + t), valid, p.vec4 != 0);
    }
  }
  __device__ __forceinline__ void commit(int len, float* s_b, float* s_c, int row) const {
#pragma unroll
    for (int r = 0; r < kIters; ++r) {
      int n, t;
      if (!group(r, len, n, t)) continue;
      if constexpr (Tr::kVarB) store(b[r], s_b + n * row + t);
      if constexpr (Tr::kVarC) store(c[r], s_c + n * row + t);
    }
  }
  // Reads and stores kBatch groups at a time, as thread `tid` of
  // `nthreads`. kBatch 1 holds one group at a time (for kernels whose
  // registers are needed elsewhere; block-wide callers pass blockDim.x, not
  // kThreads, so the loop stays rolled: unrolled, its reads batch up and
  // take registers); there C is read after B is stored (B and C both read
  // first made it one round trip, not two, and timed no faster: H100, the
  // forward warp scan at dstate 4, 0.2266 -> 0.2276 ms at (4, 1536, 4096, 4)
  // bf16 with the flags, the same at two other shapes). A larger batch keeps
  // kBatch reads of B and of C in flight per round trip, for blocks alone on
  // their SM whose staging is a chain of round trips. kSlots rows: state
  // n_first + k * n_step goes to row k (states past dstate are skipped); by
  // default every state, row n.
  template <int kBatch = 1, int kSlots = Tr::kN>
  __device__ __forceinline__ static void stream(const SsmFwdParams& p, const Tile& tile, int t0,
                                                int len, float* s_b, float* s_c, int row, int tid,
                                                int nthreads, int n_first = 0, int n_step = 1) {
    constexpr int kAll = kSlots * kGroups;
    // Every state (n_first 0, n_step 1): row n, no state past dstate.
    constexpr bool kEvery = kSlots == Tr::kN;
    if constexpr (kBatch == 1) {
      for (int i = tid; i < kAll; i += nthreads) {
        const int k = i / kGroups, t = (i % kGroups) * 4;
        const int n = kEvery ? k : n_first + k * n_step;
        if (t >= len || (!kEvery && n >= Tr::kN)) continue;
        const int valid = min(4, len - t);
        float v[4];
        if constexpr (Tr::kVarB) {
          load4<InT>(p.B, index_b(p, tile, n, t0 + t), valid, p.vec4 != 0, v);
          sts4(s_b + k * row + t, v);
        }
        if constexpr (Tr::kVarC) {
          load4<InT>(p.C, index_c(p, tile, n, t0 + t), valid, p.vec4 != 0, v);
          sts4(s_c + k * row + t, v);
        }
      }
    } else {
#pragma unroll 1
      for (int i0 = tid; i0 < kAll; i0 += kBatch * nthreads) {
        float vb[kBatch][4], vc[kBatch][4];
#pragma unroll
        for (int j = 0; j < kBatch; ++j) {
          const int i = i0 + j * nthreads;
          const int k = i / kGroups, t = (i % kGroups) * 4;
          const int n = kEvery ? k : n_first + k * n_step;
          if (i >= kAll || t >= len || (!kEvery && n >= Tr::kN)) continue;
          const int valid = min(4, len - t);
          if constexpr (Tr::kVarB)
            load4<InT>(p.B, index_b(p, tile, n, t0 + t), valid, p.vec4 != 0, vb[j]);
          if constexpr (Tr::kVarC)
            load4<InT>(p.C, index_c(p, tile, n, t0 + t), valid, p.vec4 != 0, vc[j]);
        }
#pragma unroll
        for (int j = 0; j < kBatch; ++j) {
          const int i = i0 + j * nthreads;
          const int k = i / kGroups, t = (i % kGroups) * 4;
          if (i >= kAll || t >= len || (!kEvery && n_first + k * n_step >= Tr::kN)) continue;
          if constexpr (Tr::kVarB) sts4(s_b + k * row + t, vb[j]);
          if constexpr (Tr::kVarC) sts4(s_c + k * row + t, vc[j]);
        }
      }
    }
  }
};

// The whole chunk of the staged-chunk kernels: transformed delta and u per
// channel, and the B/C rows. Channels past the tile's end stage zeros; the
// padding of the last group of 4 is the identity step (delta = u = B = C =
// 0: a = 1, nothing added, nothing read out), so the recurrence always runs
// whole groups.
template <typename Tr>
struct ChunkStage {
  using InT = typename Tr::InT;
  using Raw = typename Vec4Raw<InT>::type;
  static constexpr int kGroups = Tr::kChunk / 4;
  static constexpr int kTotal = Tr::kDStep * kGroups;
  static constexpr int kIters = (kTotal + Tr::kThreads - 1) / Tr::kThreads;
  Raw dt[kIters], u[kIters];
  BcStage<Tr> bc;

  // This thread's r-th group of 4: channel c, chunk-local timestep t, and
  // how many of its timesteps are real (0 for channels past the tile: they
  // read as zeros and no address is formed); false when there is none or it
  // lies past len.
  __device__ __forceinline__ static bool group(const Tile& tile, int r, int len, int& c, int& t,
                                               int& valid) {
    const int i = threadIdx.x + r * Tr::kThreads;
    c = i / kGroups;
    t = (i % kGroups) * 4;
    valid = c < tile.nd ? min(4, len - t) : 0;
    return i < kTotal && t < len;
  }
  __device__ __forceinline__ static void read(const SsmFwdParams& p, const Tile& tile, int c,
                                              int t0, int t, int valid, Raw& dv, Raw& uv) {
    const bool vec = p.vec4 != 0;
    const int d = tile.d0 + (c < tile.nd ? c : 0);
    dv = load4_raw<InT>(p.delta, tile.b * p.delta_batch_stride + d * p.delta_dim_stride + t0 + t,
                        valid, vec);
    uv = load4_raw<InT>(p.u, tile.b * p.u_batch_stride + d * p.u_dim_stride + t0 + t, valid, vec);
  }
  __device__ __forceinline__ static void store(const SsmFwdParams& p, const Tile& tile, int c,
                                               int t, int valid, const Raw& dv, const Raw& uv,
                                               float* smem, const ChunkSmemLayout& l) {
    float df[4], uf[4];
    unpack4<InT>(dv, df);
    unpack4<InT>(uv, uf);
    put(p, tile, c, t, valid, df, uf, smem, l);
  }
  // Transforms delta and stores the group.
  __device__ __forceinline__ static void put(const SsmFwdParams& p, const Tile& tile, int c, int t,
                                             int valid, float (&df)[4], const float (&uf)[4],
                                             float* smem, const ChunkSmemLayout& l) {
    const float bias = Tr::kHasBias && c < tile.nd ? p.delta_bias[tile.d0 + c] : 0.0f;
#pragma unroll
    for (int j = 0; j < 4; ++j) df[j] = j < valid ? transform_delta<Tr>(df[j], bias) : 0.0f;
    sts4(smem + l.dt + c * l.row + t, df);
    sts4(smem + l.u + c * l.row + t, uf);
  }

  __device__ __forceinline__ void load(const SsmFwdParams& p, const Tile& tile, int t0, int len) {
#pragma unroll
    for (int r = 0; r < kIters; ++r) {
      int c, t, valid;
      if (group(tile, r, len, c, t, valid)) read(p, tile, c, t0, t, valid, dt[r], u[r]);
    }
    if constexpr (Tr::kVarB || Tr::kVarC) bc.load(p, tile, t0, len);
  }
  __device__ __forceinline__ void commit(const SsmFwdParams& p, const Tile& tile, int len,
                                         float* smem, const ChunkSmemLayout& l) const {
#pragma unroll
    for (int r = 0; r < kIters; ++r) {
      int c, t, valid;
      if (group(tile, r, len, c, t, valid)) store(p, tile, c, t, valid, dt[r], u[r], smem, l);
    }
    if constexpr (Tr::kVarB || Tr::kVarC) bc.commit(len, smem + l.b, smem + l.c, l.bc_row);
  }
  // Reads and stores group by group, holding one group at a time, as
  // thread `tid` of `nthreads` (as BcStage::stream).
  __device__ __forceinline__ static void stream(const SsmFwdParams& p, const Tile& tile, int t0,
                                                int len, float* smem, const ChunkSmemLayout& l,
                                                int tid, int nthreads) {
    for (int i = tid; i < kTotal; i += nthreads) {
      const int c = i / kGroups, t = (i % kGroups) * 4;
      if (t >= len) continue;
      const int valid = c < tile.nd ? min(4, len - t) : 0;
      const int d = tile.d0 + (c < tile.nd ? c : 0);
      float df[4], uf[4];
      load4<InT>(p.delta, tile.b * p.delta_batch_stride + d * p.delta_dim_stride + t0 + t, valid,
                 p.vec4 != 0, df);
      load4<InT>(p.u, tile.b * p.u_batch_stride + d * p.u_dim_stride + t0 + t, valid, p.vec4 != 0,
                 uf);
      put(p, tile, c, t, valid, df, uf, smem, l);
    }
    if constexpr (Tr::kVarB || Tr::kVarC)
      BcStage<Tr>::stream(p, tile, t0, len, smem + l.b, smem + l.c, l.bc_row, tid, nthreads);
  }
};

// Stages a chunk in one go (kernels that stage a chunk once, or that keep
// no reads in flight).
template <typename Tr>
__device__ __forceinline__ void stage_chunk(const SsmFwdParams& p, const Tile& tile, int t0,
                                            int len, float* smem, const ChunkSmemLayout& l) {
  ChunkStage<Tr>::stream(p, tile, t0, len, smem, l, threadIdx.x, blockDim.x);
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

// The sum over kGroups state groups of one element, group 0 first: at[g *
// plane] is group g's value (the state sums' fixed order, so their bits do
// not depend on which group's block finished first).
template <int kGroups, typename AccT>
__device__ __forceinline__ AccT sum_over_groups(const AccT* at, long long plane) {
  AccT sum = 0;
  for (int g = 0; g < kGroups; ++g) sum += at[g * plane];
  return sum;
}

// Writes four outputs of channel d from timestep t (`valid` of them real):
// o (y + D u) to out and, with z, o silu(z) to out_z (o is gated in place).
// z: the gate's four values when the caller read them ahead; null reads
// them here.
template <typename Tr>
__device__ __forceinline__ void write_group4(const SsmFwdParams& p, long long b, long long d,
                                             long long t, int valid, bool vec, float (&o)[4],
                                             const float* z = nullptr) {
  using InT = typename Tr::InT;
  store4<InT>(p.out, b * p.out_batch_stride + d * p.out_dim_stride + t, valid, vec, o);
  if constexpr (Tr::kHasZ) {
    float zv[4];
    if (z == nullptr) {
      load4<InT>(p.z, b * p.z_batch_stride + d * p.z_dim_stride + t, valid, vec, zv);
      z = zv;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) o[j] *= silu(z[j]);
    store4<InT>(p.out_z, b * p.out_z_batch_stride + d * p.out_z_dim_stride + t, valid, vec, o);
  }
}

// Writes the staged chunk's outputs, four timesteps per access, from the y
// values that the recurrence left in the dt rows, as thread `tid` of
// `nthreads` (by default the whole block).
template <typename Tr>
__device__ __forceinline__ void write_chunk(const SsmFwdParams& p, const Tile& tile, int t0,
                                            int len, const float* smem, const ChunkSmemLayout& l,
                                            int tid = threadIdx.x, int nthreads = blockDim.x) {
  constexpr int kGroups = Tr::kChunk / 4;
  const bool vec = p.vec4 != 0;
  for (int i = tid; i < Tr::kDStep * kGroups; i += nthreads) {
    const int c = i / kGroups, t = (i % kGroups) * 4;
    if (c >= tile.nd || t >= len) continue;
    const int d = tile.d0 + c;
    const int valid = min(4, len - t);
    float y[4], u[4];
    lds4(smem + l.dt + c * l.row + t, y);
    if constexpr (Tr::kHasD) {
      lds4(smem + l.u + c * l.row + t, u);
      const float dd = p.D[d];
#pragma unroll
      for (int j = 0; j < 4; ++j) y[j] = fmaf(dd, u[j], y[j]);
    }
    write_group4<Tr>(p, tile.b, d, t0 + t, valid, vec, y);
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

  // Slot k of split index s holds state s + (k ^ x) * kNSplit: x = 0 but in
  // the chunked backward, whose lanes permute their slots (StateSlots).
  __device__ __forceinline__ static int state(int s, int k, int x = 0) {
    return s + (k ^ x) * Tr::kNSplit;
  }

  // h = h0 (or 0) for this thread's states of channel d in batch b, and
  // aprod = 1 (the multiplicative identity the aggregate passes start from).
  __device__ __forceinline__ static void init(const SsmFwdParams& p, int b, int d, int s,
                                              bool active, AccT (&h)[kPerThread],
                                              AccT (&aprod)[kPerThread], int x = 0) {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int n = state(s, k, x);
      h[k] = 0;
      if constexpr (Tr::kH0)
        if (active && n < Tr::kN) h[k] = p.h0[b * p.h0_batch_stride + d * p.h0_dim_stride + n];
      aprod[k] = 1;
    }
  }
  // Stores this thread's final states as the last state (when asked for).
  __device__ __forceinline__ static void store_last(const SsmFwdParams& p, int b, int d, int s,
                                                    bool active, const AccT (&h)[kPerThread]) {
    if constexpr (Tr::kLastState) {
      if (!active) return;
#pragma unroll
      for (int k = 0; k < kPerThread; ++k) {
        const int n = state(s, k);
        if (n < Tr::kN)
          p.last_state[b * p.last_state_batch_stride + d * p.last_state_dim_stride + n] =
              static_cast<float>(h[k]);
      }
    }
  }

  __device__ __forceinline__ void load(const SsmFwdParams& p, int d, int s, bool active,
                                       int x = 0) {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int n = state(s, k, x);
      const bool ok = active && n < Tr::kN;
      a2[k] = ok ? p.A[d * p.A_dim_stride + n] * a_scale<Tr>() : 0.0f;
      if constexpr (!Tr::kVarB)
        bconst[k] = ok ? static_cast<const float*>(p.B)[d * p.B_batch_stride + n] : 0.0f;
      if constexpr (!Tr::kVarC)
        cconst[k] = ok ? static_cast<const float*>(p.C)[d * p.C_batch_stride + n] : 0.0f;
    }
  }
};

// Sums four timesteps' partial y over the kNSplit lanes of one channel by
// recursive halving: each level sends half of what a lane holds
// and keeps the other half, so the first two levels split the 4 sums among
// the lanes (lane s ends with kKeep sums, of timesteps first(s) + j) and any
// further level adds the one value left. 3 shuffles per 4 timesteps at
// n_split 4, where a plain butterfly per timestep takes 8.
template <typename Tr>
struct SplitReduce4 {
  static constexpr int kS = Tr::kNSplit;
  static constexpr int kScatter = kS >= 4 ? 2 : (kS == 2 ? 1 : 0);  // levels that split
  static constexpr int kKeep = 4 >> kScatter;                       // sums a lane ends with

  // The lanes of one channel sit `stride` apart in the warp.
  template <typename T>
  __device__ __forceinline__ static void run(T (&y)[4], int s, int stride) {
    int cnt = 4;
#pragma unroll
    for (int m = kS / 2; m >= 1; m /= 2) {
      if (cnt > 1) {
        const int half = cnt / 2;
        const bool upper = (s & m) != 0;
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          if (j < half) {
            const T send = upper ? y[j] : y[j + half];
            const T keep = upper ? y[j + half] : y[j];
            y[j] = keep + __shfl_xor_sync(0xffffffffu, send, m * stride);
          }
        }
        cnt = half;
      } else {
        y[0] += __shfl_xor_sync(0xffffffffu, y[0], m * stride);
      }
    }
  }
  // The timestep offset (within the group of 4) of a lane's first sum.
  __device__ __forceinline__ static int first(int s) {
    if constexpr (kScatter == 0) return 0;
    if constexpr (kScatter == 1) return (s & 1) ? 2 : 0;
    return ((s & (kS / 2)) ? 2 : 0) + ((s & (kS / 4)) ? 1 : 0);
  }
  // Whether lane s writes its sums (lanes past the split levels hold copies).
  __device__ __forceinline__ static bool owner(int s) { return (s & ((kS >> kScatter) - 1)) == 0; }
};

}  // namespace ssmtune_kernels
