// Block-wide scan, one channel a block: kW = kThreads / 32 warps share the
// channel, each lane kItems consecutive timesteps (a chunk is 32 kW kItems
// steps). Per state the lane's items are reduced serially, each warp's 32
// maps are scanned with shuffles, the warps' totals meet in shared memory
// (one barrier a state) and each lane folds those before it into the
// carried state, then re-runs its items adding C h to y. Unlike the warp
// scan, nothing is staged: each lane reads its own items of the state's B
// and C rows straight from global memory (the rows are the block's alone,
// so staging would only cost shared memory, hence resident blocks), the
// next state's B row in flight while this state runs. The layout is for
// a few hundred to a few thousand channels: several warps a channel fill
// the SMs where one warp a channel leaves them a few warps each.
#pragma once

#include "ssm/fwd_chunk.cuh"
#include "ssm/fwd_scan_common.cuh"

namespace ssmtune_kernels {

// One lane's kItems values of state n of a B/C row from timestep t on
// (valid of them inside the sequence, zero past it), as loaded; the
// constant (dim, dstate) form is one value.
template <typename Tr, bool kVar>
struct BcLaneRow {
  RawRow<Tr> raw;
  float constant;

  __device__ __forceinline__ void load(const SsmFwdParams& p, const void* base,
                                       long long batch_stride, long long group_stride,
                                       long long dstate_stride, long long dim_stride,
                                       const Tile& tile, int d, int n, long long t) {
    if constexpr (kVar)
      raw.load_row(p, base, bc_index(batch_stride, group_stride, dstate_stride, tile, n, 0), t);
    else
      constant = static_cast<const float*>(base)[d * dim_stride + n];
  }
  __device__ __forceinline__ void unpack(float (&out)[Tr::kItems]) const {
    if constexpr (kVar) {
#pragma unroll
      for (int q = 0; q < RawRow<Tr>::kGroups; ++q) {
        float x[4];
        unpack4<typename Tr::InT>(raw.v[q], x);
#pragma unroll
        for (int j = 0; j < 4; ++j) out[4 * q + j] = x[j];
      }
    } else {
#pragma unroll
      for (int i = 0; i < Tr::kItems; ++i) out[i] = constant;
    }
  }
};

// State n's B (C) row for this lane from timestep t. (Constant B/C: the
// batch stride field holds the dim stride, the last stride argument.)
template <typename Tr>
__device__ __forceinline__ void load_b_row(BcLaneRow<Tr, Tr::kVarB>& r, const SsmFwdParams& p,
                                           const Tile& tile, int d, int n, long long t) {
  r.load(p, p.B, p.B_batch_stride, p.B_group_stride, p.B_dstate_stride, p.B_batch_stride, tile, d,
         n, t);
}
template <typename Tr>
__device__ __forceinline__ void load_c_row(BcLaneRow<Tr, Tr::kVarC>& r, const SsmFwdParams& p,
                                           const Tile& tile, int d, int n, long long t) {
  r.load(p, p.C, p.C_batch_stride, p.C_group_stride, p.C_dstate_stride, p.C_batch_stride, tile, d,
         n, t);
}

// Blocks an SM the kernel is built for: at 16 half-precision steps a lane,
// 16 warps an SM (128 registers a thread, none spilled), where the compiler
// would otherwise take about 160 and leave 12; otherwise no bound. (fp32
// rows at 16 steps spill at 128.) The next chunk's reads are in flight
// only up to 8 steps a lane, for the same registers.
template <typename Tr>
constexpr int kBlockScanMinBlocks = Tr::kItems >= 16 && sizeof(typename Tr::InT) == 2
                                        ? 512 / Tr::kThreads
                                        : 0;

// At dstate 4 or less, where a lane's rows are small (2-byte rows up to 8
// steps a lane, fp32 up to 4, or dstate 2 or less at 8): every state's B and
// C rows of the next chunk are in flight while this chunk runs, each issued
// once this chunk's row in its slot is unpacked. With so few states a chunk,
// rows read one state ahead would wait out most of a round trip each.
template <typename Tr>
constexpr bool kBlockScanRowsAhead = Tr::kN <= 4 && (Tr::kVarB || Tr::kVarC) && Tr::kItems <= 8 &&
                                     sizeof(typename Tr::InT) * (2 * Tr::kN * Tr::kItems) <= 128;

template <typename Tr>
__global__ void __launch_bounds__(Tr::kThreads, kBlockScanMinBlocks<Tr>)
    ssm_fwd_blockscan(const SsmFwdParams p) {
  constexpr int kW = Tr::kThreads / 32;  // warps of the channel
  static_assert(Tr::kDStep == 1, "blockscan: one channel a block");
  static_assert(Tr::kNSplit == 1, "blockscan: every state in one block");
  static_assert(Tr::kItems % 4 == 0, "blockscan: items a multiple of 4");
  static_assert(Tr::kChunk == 32 * kW * Tr::kItems, "blockscan: chunk must be 32 * warps * items");
  using AccT = typename Tr::AccT;
  constexpr BlockScanSmemLayout l = blockscan_smem_layout(Tr::kN, kW, sizeof(AccT));
  extern __shared__ float4 smem_raw[];
  char* smem = reinterpret_cast<char*>(smem_raw);
  AccT* s_h = reinterpret_cast<AccT*>(smem + l.h);    // carried state per n
  float* s_a = reinterpret_cast<float*>(smem + l.a);  // A, pre-scaled
  AccT* s_w = reinterpret_cast<AccT*>(smem + l.w);    // [buffer][warp] totals, a then b

  const Tile tile = make_tile<Tr>(p, blockIdx.x, blockIdx.y);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int first = threadIdx.x * Tr::kItems;  // chunk-local timestep of item 0
  const int d = tile.d0;                       // tile.nd == 1: every block has its channel
  const float bias = Tr::kHasBias ? p.delta_bias[d] : 0.0f;
  for (int n = threadIdx.x; n < Tr::kN; n += Tr::kThreads) {
    s_h[n] = Tr::kH0 ? static_cast<AccT>(p.h0[tile.b * p.h0_batch_stride + d * p.h0_dim_stride + n])
                     : AccT(0);
    s_a[n] = p.A[d * p.A_dim_stride + n] * a_scale<Tr>();
  }

  constexpr bool kSaves = decltype(make_state_sink(p, 0, 0, false))::kEnabled;
  ThreadItems<Tr> it;
  RawItems<Tr> raw;
  if constexpr (Tr::kItems <= 8) raw.load(p, tile.b, d, first);
  int buf = 0;
  // Not in the saving variant (the training forward): with the checkpoint
  // stores the rows ahead take it past 128 registers (153 at fp32 dstate 2),
  // hence fewer than 16 warps an SM.
  constexpr bool kAhead = kBlockScanRowsAhead<Tr> && !kSaves;
  // Otherwise, at 8 steps a lane, state 0's B row of the next chunk is in
  // flight during the chunk's last state (at 4 it would spill the 64
  // registers that keep 8 blocks resident; 16 keep no reads across chunks).
  constexpr bool kB0Ahead = !kAhead && Tr::kItems == 8;
  BcLaneRow<Tr, Tr::kVarB> brows[kAhead ? Tr::kN : 1];  // else the next state's B row
  BcLaneRow<Tr, Tr::kVarC> crows[kAhead ? Tr::kN : 1];
  if constexpr (kAhead) {
#pragma unroll
    for (int n = 0; n < Tr::kN; ++n) {
      load_b_row<Tr>(brows[n], p, tile, d, n, first);
      load_c_row<Tr>(crows[n], p, tile, d, n, first);
    }
  }
  for (int t0 = 0; t0 < p.seqlen; t0 += Tr::kChunk) {
    const int len = min(Tr::kChunk, p.seqlen - t0);
    float* const ckpt = checkpoint_row<kSaves>(p, tile.b, d, true, t0 + first);
    if constexpr (Tr::kItems <= 8) {
      it.convert(p, raw, t0 + first, bias);
      if (t0 + Tr::kChunk < p.seqlen) raw.load(p, tile.b, d, t0 + Tr::kChunk + first);
    } else {
      it.load(p, tile.b, d, t0 + first, bias);
    }
    AccT y[Tr::kItems];
#pragma unroll
    for (int i = 0; i < Tr::kItems; ++i) y[i] = 0;
    const long long next = t0 + Tr::kChunk < p.seqlen ? t0 + Tr::kChunk + first : -1;
    if (!kAhead && (t0 == 0 || !kB0Ahead)) load_b_row<Tr>(brows[0], p, tile, d, 0, t0 + first);
    __syncthreads();  // s_h and s_a set (first chunk); the last chunk's s_h written
    constexpr int kUnroll = kAhead ? Tr::kN : 1;
#pragma unroll kUnroll
    for (int n = 0; n < Tr::kN; ++n, buf ^= 1) {
      BcLaneRow<Tr, Tr::kVarC>& crow = crows[kAhead ? n : 0];
      BcLaneRow<Tr, Tr::kVarB>& brow = brows[kAhead ? n : 0];
      if constexpr (!kAhead) load_c_row<Tr>(crow, p, tile, d, n, t0 + first);
      float bv[Tr::kItems];
      brow.unpack(bv);
      // The slot's next row: this state's of the next chunk (rows ahead), the
      // next state's, or state 0's of the next chunk (state 0 ahead).
      if constexpr (kAhead) {
        if (next >= 0) load_b_row<Tr>(brow, p, tile, d, n, next);
      } else if (n + 1 < Tr::kN) {
        load_b_row<Tr>(brow, p, tile, d, n + 1, t0 + first);
      } else if (kB0Ahead && next >= 0) {
        load_b_row<Tr>(brow, p, tile, d, 0, next);
      }
      const AccT a2 = static_cast<AccT>(s_a[n]);
      ItemMaps<Tr> maps;
      const Affine<AccT> incl = maps.build_from(it, a2, n, bv);
      Affine<AccT> excl;
      const Affine<AccT> total = warp_scan_maps(incl, lane, excl);
      AccT* w = s_w + 2 * kW * buf;
      if (lane == 0) {
        w[2 * warp] = total.a;
        w[2 * warp + 1] = total.b;
      }
      AccT h = s_h[n];
      __syncthreads();
      // The state entering this warp: the carried one through the totals of
      // the warps before it. (Buffer buf is written again two states later,
      // after every thread has passed the next state's barrier.)
      for (int j = 0; j < warp; ++j) h = w[2 * j] * h + w[2 * j + 1];
      const AccT hin = excl.a * h + excl.b;
      if (ckpt != nullptr) ckpt[static_cast<long long>(n) * p.dim] = static_cast<float>(hin);
      float cv[Tr::kItems];
      crow.unpack(cv);
      if (kAhead && next >= 0) load_c_row<Tr>(crow, p, tile, d, n, next);
      maps.rerun_from(hin, cv, y);
      if (warp == kW - 1 && lane == 0) s_h[n] = total.a * h + total.b;
    }
    write_items<Tr>(p, tile.b, d, t0 + first, len - first, y, it.u);
  }
  if constexpr (Tr::kLastState) {
    __syncthreads();  // the last warp wrote the final states
    for (int n = threadIdx.x; n < Tr::kN; n += Tr::kThreads)
      p.last_state[tile.b * p.last_state_batch_stride + d * p.last_state_dim_stride + n] =
          static_cast<float>(s_h[n]);
  }
}

}  // namespace ssmtune_kernels
