// Pieces of the chunked backward (one block = batch b x a tile of channels
// of one B/C group; thread (c, s) owns states n = s + k * kNSplit of channel
// c): staging dy (and writing dz), the chunk's forward recompute, the
// reverse walk over one chunk, and the per-chunk writes of du and ddelta.
// Every cross-thread sum runs in a fixed order: results are bitwise
// reproducible.
#pragma once

#include "ssm/bwd/bwd_traits.cuh"
#include "ssm/fwd_chunk.cuh"

namespace ssmtune_kernels {

// dy = dout (times silu(z) with z, where dz = dout y sigmoid(z) (1 + z (1 -
// sigmoid(z))) is also formed) for one group of 4 timesteps.
template <typename Tr>
__device__ __forceinline__ void dy_group(float (&g)[4], const float (&z)[4], const float (&y)[4],
                                         float (&dz)[4]) {
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const float sg = sigmoid_fast(z[j]);
    dz[j] = g[j] * y[j] * sg * (1.0f + z[j] * (1.0f - sg));
    g[j] *= z[j] * sg;
  }
}

// The dy rows of a chunk (one per channel, zeros past len and for channels
// past the tile), read into registers ahead of time (load, while the block
// computes the previous chunk) and written to shared memory later (commit;
// kWriteDz: dz goes to global memory then). Thread groups as ChunkStage's.
template <typename Tr, bool kWriteDz = true>
struct DyStage {
  using InT = typename Tr::InT;
  using Raw = typename Vec4Raw<InT>::type;
  using Groups = ChunkStage<Tr>;
  static constexpr int kIters = Groups::kIters;
  Raw g[kIters];
  Raw z[Tr::kHasZ ? kIters : 1], y[Tr::kHasZ ? kIters : 1];

  __device__ __forceinline__ void load(const SsmBwdParams& p, const Tile& tile, int t0, int len) {
    const bool vec = p.f.vec4 != 0;
#pragma unroll
    for (int r = 0; r < kIters; ++r) {
      int c, t, valid;
      if (!Groups::group(tile, r, len, c, t, valid)) continue;
      const long long d = tile.d0 + (c < tile.nd ? c : 0);
      const long long b = tile.b;
      g[r] = load4_raw<InT>(p.dout, b * p.dout_batch_stride + d * p.dout_dim_stride + t0 + t, valid,
                            vec);
      if constexpr (Tr::kHasZ) {
        z[r] = load4_raw<InT>(p.f.z, b * p.f.z_batch_stride + d * p.f.z_dim_stride + t0 + t, valid,
                              vec);
        y[r] = load4_raw<InT>(p.f.out, b * p.f.out_batch_stride + d * p.f.out_dim_stride + t0 + t,
                              valid, vec);
      }
    }
  }
  __device__ __forceinline__ void commit(const SsmBwdParams& p, const Tile& tile, int t0, int len,
                                         float* s_dy, int row) const {
    const bool vec = p.f.vec4 != 0;
#pragma unroll
    for (int r = 0; r < kIters; ++r) {
      int c, t, valid;
      if (!Groups::group(tile, r, len, c, t, valid)) continue;
      float gv[4];
      unpack4<InT>(g[r], gv);
      if constexpr (Tr::kHasZ) {
        float zv[4], yv[4], dz[4];
        unpack4<InT>(z[r], zv);
        unpack4<InT>(y[r], yv);
        dy_group<Tr>(gv, zv, yv, dz);
        const long long d = tile.d0 + (c < tile.nd ? c : 0);
        if (kWriteDz && valid > 0)
          store4<InT>(p.dz, tile.b * p.dz_batch_stride + d * p.dz_dim_stride + t0 + t, valid, vec,
                      dz);
      }
      sts4(s_dy + c * row + t, gv);
    }
  }
};

// The same, group by group, holding one group at a time (kernels whose
// registers are needed elsewhere).
template <typename Tr, bool kWriteDz = true>
__device__ __forceinline__ void bwd_stage_dy(const SsmBwdParams& p, const Tile& tile, int t0,
                                             int len, float* s_dy, int row) {
  using InT = typename Tr::InT;
  constexpr int kGroups = Tr::kChunk / 4;
  const bool vec = p.f.vec4 != 0;
  for (int i = threadIdx.x; i < Tr::kDStep * kGroups; i += blockDim.x) {
    const int c = i / kGroups, t = (i % kGroups) * 4;
    if (t >= len) continue;
    const int valid = c < tile.nd ? min(4, len - t) : 0;
    const long long d = tile.d0 + (c < tile.nd ? c : 0);
    const long long b = tile.b;
    float g[4];
    load4<InT>(p.dout, b * p.dout_batch_stride + d * p.dout_dim_stride + t0 + t, valid, vec, g);
    if constexpr (Tr::kHasZ) {
      float z[4], y[4], dz[4];
      load4<InT>(p.f.z, b * p.f.z_batch_stride + d * p.f.z_dim_stride + t0 + t, valid, vec, z);
      load4<InT>(p.f.out, b * p.f.out_batch_stride + d * p.f.out_dim_stride + t0 + t, valid, vec,
                 y);
      dy_group<Tr>(g, z, y, dz);
      if (kWriteDz && valid > 0)
        store4<InT>(p.dz, b * p.dz_batch_stride + d * p.dz_dim_stride + t0 + t, valid, vec, dz);
    }
    sts4(s_dy + c * row + t, g);
  }
}

// The chains a thread of the chunked backward carries: kChan channels (c +
// i * kStride) x kPer states (s + k * kNSplit), chain q = i * kPer + k.
template <typename Tr>
struct ChunkChains {
  static constexpr int kPer = ChannelStates<Tr>::kPerThread;
  static constexpr int kChan = Tr::kChan;
  static constexpr int kCount = kPer * kChan;
  static constexpr int kStride = Tr::kDStep / Tr::kChan;
  __device__ __forceinline__ static int channel(int c, int i) { return c + i * kStride; }
};

// The history's layout: where AccT is float and a thread has more than 128
// registers (fewer than 4 blocks of 128 threads an SM, e.g. `.b3`) with at
// most 4 chains, a group of 4 steps of one chain is one 16-byte slot (one
// 128-bit store and load instead of four); else four slots kThreads apart.
// Either way each thread has its own column: no bank conflicts. H100, saved
// states, the block's flags, main against 16-byte slots: (8,1536,2048,16)
// bf16 at 3 blocks 0.946 -> 0.889 ms, (8,1024,1024,16) fp16 at 3 blocks
// 0.403 -> 0.377, fp32 plain at 3 blocks 0.780 -> 0.771; but
// (4,5120,8192,16) bf16 at 4 blocks (128 registers) 6.26 -> 6.44, and the
// multipass kernel at 128 registers spills: there the slots stay scalar.
template <typename Tr>
constexpr bool kHistWide = sizeof(typename Tr::AccT) == 4 && ChunkChains<Tr>::kCount <= 4 &&
                           (Tr::kMinBlocks * Tr::kThreads) < 512;
template <typename Tr>
constexpr int kHistVec = kHistWide<Tr> ? 4 : 1;  // AccT values a thread's column is wide

// The recurrence over one staged chunk from h (carried in and out; cs: one
// ChannelStates per channel of the thread, slots permuted by x). With a history, a_t h_{t-1} of
// every step is kept (kHistWide: the layout). kAggregate: aprod accumulates prod a
// (the chunk's affine map is h -> aprod h + h_from_0). Whole groups of 4
// run (the staged padding is the identity step).
template <typename Tr, bool kAggregate = false>
__device__ __forceinline__ void bwd_forward_chunk(const ChannelStates<Tr>* cs,
                                                  typename Tr::AccT (&h)[ChunkChains<Tr>::kCount],
                                                  int c, int s, int x, int len, const float* smem,
                                                  const ChunkSmemLayout& l, typename Tr::AccT* hist,
                                                  typename Tr::AccT* aprod = nullptr) {
  using AccT = typename Tr::AccT;
  using Ch = ChunkChains<Tr>;
  constexpr int kPer = Ch::kPer, kChan = Ch::kChan, kCount = Ch::kCount;
  constexpr bool kAllStatesUsed = Tr::kN % Tr::kNSplit == 0;
  // This thread's history column: the group's slots sit at constant offsets
  // from one pointer (no per-store index arithmetic).
  AccT* hist_col = hist != nullptr ? hist + threadIdx.x * kHistVec<Tr> : nullptr;
  for (int t = 0; t < len; t += 4) {
    float dt[kChan][4], du[kChan][4];
#pragma unroll
    for (int i = 0; i < kChan; ++i) {
      lds4(smem + l.dt + Ch::channel(c, i) * l.row + t, dt[i]);
      lds4(smem + l.u + Ch::channel(c, i) * l.row + t, du[i]);
#pragma unroll
      for (int j = 0; j < 4; ++j) du[i][j] *= dt[i][j];
    }
    AccT* hist_group = hist_col != nullptr ? hist_col + t * kCount * Tr::kThreads : nullptr;
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const int n = ChannelStates<Tr>::state(s, k, x);
      if (kAllStatesUsed || n < Tr::kN) {
        float bv[4];
        if constexpr (Tr::kVarB) lds4(smem + l.b + n * l.bc_row + t, bv);  // one row, kChan uses
#pragma unroll
        for (int i = 0; i < kChan; ++i) {
          const int q = i * kPer + k;
          if constexpr (!Tr::kVarB) {
#pragma unroll
            for (int j = 0; j < 4; ++j) bv[j] = cs[i].bconst[k];
          }
          AccT ahs[4];
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const AccT a =
                exp_slot<Tr>(static_cast<AccT>(dt[i][j]) * static_cast<AccT>(cs[i].a2[k]), false);
            const AccT ah = a * h[q];
            ahs[j] = ah;
            if constexpr (!kHistWide<Tr>)
              if (hist_group != nullptr) hist_group[(j * kCount + q) * Tr::kThreads] = ah;
            h[q] = ah + static_cast<AccT>(du[i][j]) * static_cast<AccT>(bv[j]);
            if constexpr (kAggregate) aprod[q] *= a;
          }
          if constexpr (kHistWide<Tr>)
            if (hist_group != nullptr)
              *reinterpret_cast<float4*>(hist_group + q * Tr::kThreads * 4) =
                  make_float4(ahs[0], ahs[1], ahs[2], ahs[3]);
        }
      }
    }
  }
}

SSMTUNE_HD constexpr int bwd_log2(int x) { return x <= 1 ? 0 : 1 + bwd_log2(x / 2); }

// Sums kM values (a power of two) over the kL lanes of one warp that sit
// 1 apart (a channel's lanes of one split index), by recursive halving:
// each level sends half of what a lane holds and keeps the other half, so
// lane i ends with kKeep sums, of slots first(i) + j; levels past the
// values' count add the one value left (owner() lanes write). The first
// kFree levels keep the lower half in every lane, with no selects: there
// the partner lanes hold their values with those halves swapped
// (StateSlots). A fixed order: bitwise reproducible.
template <int kM, int kL, int kFree = 0>
struct LaneReduceScatter {
  static constexpr int kScatter = bwd_log2(kM) < bwd_log2(kL) ? bwd_log2(kM) : bwd_log2(kL);
  static constexpr int kKeep = kM >> kScatter;

  __device__ __forceinline__ static void run(float (&v)[kM], int lane) {
    int cnt = kM, level = 0;
#pragma unroll
    for (int m = kL / 2; m >= 1; m /= 2, ++level) {
      if (cnt > 1) {
        const int half = cnt / 2;
        const bool upper = (lane & m) != 0;
#pragma unroll
        for (int j = 0; j < kM / 2; ++j) {
          if (j < half) {
            if (level < kFree) {
              v[j] += __shfl_xor_sync(0xffffffffu, v[j + half], m);
            } else {
              const float send = upper ? v[j] : v[j + half];
              const float keep = upper ? v[j + half] : v[j];
              v[j] = keep + __shfl_xor_sync(0xffffffffu, send, m);
            }
          }
        }
        cnt = half;
      } else {
        v[0] += __shfl_xor_sync(0xffffffffu, v[0], m);
      }
    }
  }
  __device__ __forceinline__ static int first(int lane) {
    int offset = 0, cnt = kM, level = 0;
#pragma unroll
    for (int m = kL / 2; m >= 1; m /= 2, ++level) {
      if (cnt > 1) {
        cnt /= 2;
        if (level >= kFree && (lane & m)) offset += cnt;
      }
    }
    return offset;
  }
  __device__ __forceinline__ static bool owner(int lane) {
    return (lane & ((kL >> kScatter) - 1)) == 0;
  }
};

// The chunked backward's state slots and its per-group dB/dC values, which
// the lanes of a warp's channels sum (LaneReduceScatter). Where kFree > 0,
// value (k * kBC + kind) * 4 + j is the contribution of state s + k *
// kNSplit (kind: dB, then dC where both vary; j: the step in the group of
// 4), and slot k of lane c holds state s + (k ^ x(c)) * kNSplit, x(c)
// flipping the state's top bits with c's: at each of the reduce-scatter's
// first kFree levels what a lane keeps (its lower half) is what its partner
// sends (its upper half), with no selects (sm_90, seq.K16.D32.t128.s4.b3 at
// dstate 16, bf16 with the flags: FSEL 68 -> 20 and the reverse walk's loop
// 487 -> 320 SASS instructions a group of 4 steps, with Out below).
template <typename Tr>
struct StateSlots {
  static constexpr int kPer = ChannelStates<Tr>::kPerThread;
  static constexpr int kLanes = ChunkLanes<Tr>::kLaneStride;
  static constexpr bool kRed = Tr::kVarB || Tr::kVarC;
  static constexpr int kBC = (Tr::kVarB ? 1 : 0) + (Tr::kVarC ? 1 : 0);
  static constexpr int kVals = kRed ? bwd_red_values(Tr::kN, Tr::kNSplit, Tr::kVarB, Tr::kVarC) : 1;
  static constexpr bool kPow2 = (kPer & (kPer - 1)) == 0;
  // Not at 128 registers (4 blocks of 128 threads): the permutation's few
  // registers spilled there (seq.K16.D32.t128.s4 at dstate 16: fp32 rows, or
  // 16-bit ones with h0 and the last state, 8 bytes). Only 16-bit rows and
  // up to 4 states a thread: H100, saved states, the default config, ms,
  // main / permuted, bf16 with the flags unless said: (8,1536,2048,16)
  // 0.893 / 0.880, (8,1024,1024,16) fp16 0.376 / 0.363, (8,1024,2048,16)
  // 0.730 / 0.713, (8,1536,2048,8) 0.606 / 0.570, (8,2048,1024,8) 0.505 /
  // 0.470; but fp32 (8,1536,2048,16) plain 0.772 / 0.790 and at 8 states
  // a thread (8,512,1024,64) fp16 1.11 / 1.45.
  static constexpr bool kTight = Tr::kMinBlocks * Tr::kThreads >= 512;
  static constexpr bool kWorth = sizeof(typename Tr::InT) == 2 && kPer <= 4;
  static constexpr int kFree =
      kRed && kPow2 && !kTight && kWorth
          ? (bwd_log2(kPer) < bwd_log2(kLanes) ? bwd_log2(kPer) : bwd_log2(kLanes))
          : 0;
  using Scatter = LaneReduceScatter<kVals, kLanes, kFree>;
  // The slot permutation of the lane of channel c.
  __device__ __forceinline__ static int perm(int c) {
    const int lane = c % kLanes;
    int x = 0;
#pragma unroll
    for (int l = 0; l < kFree; ++l)
      if (lane & ((kLanes / 2) >> l)) x |= (kPer / 2) >> l;
    return x;
  }
  // Where no level is free the dB values come first, then the dC values
  // (the order that compiles without spills at 128 registers), and the
  // kernels' code is the one before the permutation, instruction for
  // instruction (scripts/sass_loops.py --against).
  static constexpr int kStrideK = kFree > 0 ? kBC * 4 : 4;  // value index step per slot
  static constexpr int kFirstC = !Tr::kVarB ? 0 : (kFree > 0 ? 4 : kPer * 4);  // first dC value
  SSMTUNE_HD static constexpr int value_b(int k, int j) { return k * kStrideK + j; }
  SSMTUNE_HD static constexpr int value_c(int k, int j) { return kFirstC + k * kStrideK + j; }
  // The value index of state n's dB (or dC) at step j, within its split
  // index's run of kVals (the reduce-scatter's results in shared memory).
  SSMTUNE_HD static constexpr int index(int n, bool is_c, int j) {
    return (n % Tr::kNSplit) * kVals + (is_c ? kFirstC : 0) + (n / Tr::kNSplit) * kStrideK + j;
  }
  // The value index of a lane's first sum after the reduce-scatter.
  __device__ __forceinline__ static int first(int lane, int x) {
    return Scatter::first(lane) + x * kBC * 4;
  }
};

// The adjoint carry alone over one staged chunk (dt, C and dy rows), from
// its last group to its first: g = r + C dy, r = a g; aprod accumulates
// prod(a). Starting from r = 0, aprod = 1 over a segment it gives the
// segment's reverse map r -> prod(a) r + q (prod(a) is also the forward
// map's slope).
template <typename Tr>
__device__ __forceinline__ void bwd_reverse_carry(
    const ChannelStates<Tr>& cs, typename Tr::AccT (&r)[ChannelStates<Tr>::kPerThread],
    typename Tr::AccT (&aprod)[ChannelStates<Tr>::kPerThread], int c, int s, int len,
    const float* smem, const BwdSmemLayout& L) {
  using AccT = typename Tr::AccT;
  constexpr int kPer = ChannelStates<Tr>::kPerThread;
  constexpr bool kAllStatesUsed = Tr::kN % Tr::kNSplit == 0;
  const ChunkSmemLayout& l = L.chunk;
  for (int t = ((len + 3) / 4 - 1) * 4; t >= 0; t -= 4) {
    float dt[4], dy[4];
    lds4(smem + l.dt + c * l.row + t, dt);
    lds4(smem + L.dy + c * l.row + t, dy);
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const int n = ChannelStates<Tr>::state(s, k);
      if (kAllStatesUsed || n < Tr::kN) {
        float cv[4];
        if constexpr (Tr::kVarC) {
          lds4(smem + l.c + n * l.bc_row + t, cv);
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j) cv[j] = cs.cconst[k];
        }
#pragma unroll
        for (int j = 3; j >= 0; --j) {
          const AccT g = r[k] + static_cast<AccT>(cv[j]) * static_cast<AccT>(dy[j]);
          const AccT a =
              exp_slot<Tr>(static_cast<AccT>(dt[j]) * static_cast<AccT>(cs.a2[k]), false);
          r[k] = a * g;
          aprod[k] *= a;
        }
      }
    }
  }
}

// Per-thread accumulators of the reverse walk, carried across chunks (one
// per chain q of ChunkChains).
template <typename Tr>
struct BwdAcc {
  static constexpr int kCount = ChunkChains<Tr>::kCount;
  using AccT = typename Tr::AccT;
  AccT r[kCount];                   // a_{t+1} g_{t+1}: the adjoint flowing back into step t
  AccT dA[kCount];                  // sum_t g dt a h_{t-1}
  AccT dB[Tr::kVarB ? 1 : kCount];  // constant B: sum_t g dt u
  AccT dC[Tr::kVarC ? 1 : kCount];  // constant C: sum_t dy h
  float a_true[kCount];             // A (unscaled)
};

// The reverse walk over one staged chunk (its history recomputed), from its
// last group of 4 to its first. Per group: the per-step sums over this
// thread's states (sb, sa, one set per channel) are summed over the
// channel's split lanes and left in the sb/sa rows; variable dB/dC
// contributions are summed over the thread's channels (in registers, channel
// order), over the warp's channels (lane reduce-scatter), then over the
// block's warps in warp order (shared memory), and written as this tile's
// partial (b, tile, n, t0 + t).
template <typename Tr>
__device__ __forceinline__ void bwd_reverse_chunk(const SsmBwdParams& p, const Tile& tile,
                                                  const ChannelStates<Tr>* cs, BwdAcc<Tr>& acc,
                                                  int c, int s, int x, int t0, int len, float* smem,
                                                  const BwdSmemLayout& L,
                                                  const typename Tr::AccT* hist) {
  using AccT = typename Tr::AccT;
  using Reduce = SplitReduce4<Tr>;
  using Ch = ChunkChains<Tr>;
  constexpr int kPer = Ch::kPer, kChan = Ch::kChan, kCount = Ch::kCount;
  constexpr bool kAllStatesUsed = Tr::kN % Tr::kNSplit == 0;
  using Slots = StateSlots<Tr>;
  constexpr bool kRed = Slots::kRed;
  constexpr int kOffC = Tr::kVarB ? 4 * Tr::kN : 0;
  constexpr int kOuts = (Tr::kVarB ? 4 * Tr::kN : 0) + (Tr::kVarC ? 4 * Tr::kN : 0);
  constexpr int kVals = Slots::kVals;
  constexpr int kLanes = ChunkLanes<Tr>::kLaneStride;
  constexpr int kWarps = Tr::kThreads / 32;
  using Scatter = typename Slots::Scatter;
  const int lane_c = threadIdx.x % kLanes;
  const int warp = threadIdx.x / 32;
  const ChunkSmemLayout& l = L.chunk;
  const bool owner = Reduce::owner(s);
  const long long part_base =
      (static_cast<long long>(tile.b) * gridDim.x + blockIdx.x) * Tr::kN * p.f.seqlen + t0;
  const AccT* hist_col = hist + threadIdx.x * kHistVec<Tr>;  // as bwd_forward_chunk wrote it
  // A dB/dC output o (o < kOuts) that a thread sums over the warps after a
  // group's barrier: its buffer index, step in the group and partial.
  struct Out {
    int idx, j;
    float* part;
  };
  auto output = [&](int o) {
    const bool is_c = o >= kOffC && Tr::kVarC;
    const int n = (is_c ? o - kOffC : o) >> 2, j = o & 3;
    return Out{
        Slots::index(n, is_c, j), j,
        (is_c ? p.part_c : p.part_b) + part_base + static_cast<long long>(n) * p.f.seqlen + j};
  };
  // Where the slots are permuted and each thread has one output at most
  // (dstate <= 16 at 128 threads) it is formed once, not per group: the
  // loop's index arithmetic was ~25 of ~360 SASS instructions a group
  // issued at dstate 16. With more outputs the registers they would hold
  // cost more (dstate 32 and 64: +50 to +70), and at 128 registers (4
  // blocks of 128 threads) the kernel spilled.
  constexpr bool kOneOut = Slots::kFree > 0 && kOuts <= Tr::kThreads;
  const bool has_out = static_cast<int>(threadIdx.x) < kOuts;
  Out mine{};
  if constexpr (kOneOut) mine = output(has_out ? static_cast<int>(threadIdx.x) : 0);
  for (int t = ((len + 3) / 4 - 1) * 4; t >= 0; t -= 4) {
    const AccT* hist_group = hist_col + t * kCount * Tr::kThreads;
    float vals[kVals];
#pragma unroll
    for (int v = 0; v < kVals; ++v) vals[v] = 0.0f;
    float dt[kChan][4], dy[kChan][4], du[kChan][4];
    AccT sb[kChan][4], sa[kChan][4];
#pragma unroll
    for (int i = 0; i < kChan; ++i) {
      const int ci = Ch::channel(c, i);
      float u[4];
      lds4(smem + l.dt + ci * l.row + t, dt[i]);
      lds4(smem + l.u + ci * l.row + t, u);
      lds4(smem + L.dy + ci * l.row + t, dy[i]);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        du[i][j] = dt[i][j] * u[j];
        sb[i][j] = 0;
        sa[i][j] = 0;
      }
    }
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const int n = ChannelStates<Tr>::state(s, k, x);
      if (kAllStatesUsed || n < Tr::kN) {
        float bv[4], cv[4];  // variable B/C: one row, kChan uses
        if constexpr (Tr::kVarB) lds4(smem + l.b + n * l.bc_row + t, bv);
        if constexpr (Tr::kVarC) lds4(smem + l.c + n * l.bc_row + t, cv);
#pragma unroll
        for (int i = 0; i < kChan; ++i) {
          const int q = i * kPer + k;
          if constexpr (!Tr::kVarB) {
#pragma unroll
            for (int j = 0; j < 4; ++j) bv[j] = cs[i].bconst[k];
          }
          if constexpr (!Tr::kVarC) {
#pragma unroll
            for (int j = 0; j < 4; ++j) cv[j] = cs[i].cconst[k];
          }
          const AccT a_k = acc.a_true[q];
          float4 wide;
          if constexpr (kHistWide<Tr>)
            wide = *reinterpret_cast<const float4*>(hist_group + q * Tr::kThreads * 4);
#pragma unroll
          for (int j = 3; j >= 0; --j) {
            const AccT g = acc.r[q] + static_cast<AccT>(cv[j]) * static_cast<AccT>(dy[i][j]);
            AccT ah;
            if constexpr (kHistWide<Tr>) {
              ah = j == 0 ? wide.x : j == 1 ? wide.y : j == 2 ? wide.z : wide.w;
            } else {
              ah = hist_group[(j * kCount + q) * Tr::kThreads];
            }
            // g a h_{t-1}: dA gathers it times dt, ddelta's state sum times A.
            const AccT gah = g * ah;
            sb[i][j] += g * static_cast<AccT>(bv[j]);
            sa[i][j] += a_k * gah;
            acc.dA[q] += gah * static_cast<AccT>(dt[i][j]);
            const AccT dbv = g * static_cast<AccT>(du[i][j]);
            const AccT ht = ah + static_cast<AccT>(du[i][j]) * static_cast<AccT>(bv[j]);
            const AccT dcv = static_cast<AccT>(dy[i][j]) * ht;
            // The thread's channels in order (the first one assigns).
            if constexpr (Tr::kVarB) {
              float& vb = vals[Slots::value_b(k, j)];
              vb = i == 0 ? static_cast<float>(dbv) : vb + static_cast<float>(dbv);
            } else {
              acc.dB[q] += dbv;
            }
            if constexpr (Tr::kVarC) {
              float& vc = vals[Slots::value_c(k, j)];
              vc = i == 0 ? static_cast<float>(dcv) : vc + static_cast<float>(dcv);
            } else {
              acc.dC[q] += dcv;
            }
            const AccT a =
                exp_slot<Tr>(static_cast<AccT>(dt[i][j]) * static_cast<AccT>(cs[i].a2[k]), false);
            acc.r[q] = a * g;
          }
        }
      }
    }
#pragma unroll
    for (int i = 0; i < kChan; ++i) {
      Reduce::run(sb[i], s, ChunkLanes<Tr>::kLaneStride);
      Reduce::run(sa[i], s, ChunkLanes<Tr>::kLaneStride);
      if (owner) {
        const int row = Ch::channel(c, i) * l.row + Reduce::first(s) + t;
#pragma unroll
        for (int j = 0; j < Reduce::kKeep; ++j) {
          smem[L.sb + row + j] = static_cast<float>(sb[i][j]);
          smem[L.sa + row + j] = static_cast<float>(sa[i][j]);
        }
      }
    }
    if constexpr (kRed) {
      // Channels of the warp, then warps in order. One barrier per group:
      // the other buffer was last read before it.
      Scatter::run(vals, lane_c);
      float* buf = smem + L.red + ((t / 4) & 1) * L.red_buf;
      if (Scatter::owner(lane_c)) {
        float* slot = buf + (warp * Tr::kNSplit + s) * kVals + Slots::first(lane_c, x);
#pragma unroll
        for (int v = 0; v < Scatter::kKeep; ++v) slot[v] = vals[v];
      }
      __syncthreads();
      if constexpr (kOneOut) {
        if (has_out && t + mine.j < len) {
          float sum = 0.0f;
#pragma unroll
          for (int w = 0; w < kWarps; ++w) sum += buf[w * Tr::kNSplit * kVals + mine.idx];
          mine.part[t] = sum;
        }
      } else {
        for (int o = threadIdx.x; o < kOuts; o += Tr::kThreads) {
          const int j = o & 3;
          if (t + j >= len) continue;
          const bool is_c = o >= kOffC && Tr::kVarC;
          const int n = (is_c ? o - kOffC : o) >> 2;
          const int idx = Slots::index(n, is_c, j);
          float sum = 0.0f;
#pragma unroll
          for (int w = 0; w < kWarps; ++w) sum += buf[w * Tr::kNSplit * kVals + idx];
          float* part = is_c ? p.part_c : p.part_b;
          part[part_base + static_cast<long long>(n) * p.f.seqlen + t + j] = sum;
        }
      }
    }
  }
}

// du and ddelta of the chunk from the staged rows and the sb/sa sums, as
// the whole block; per (channel, group of 4) the partial sums of dD (dy u)
// and ddelta_bias (ddelta) go to the chan area, for the caller to add up in
// order.
template <typename Tr>
__device__ __forceinline__ void bwd_write_chunk(const SsmBwdParams& p, const Tile& tile, int t0,
                                                int len, float* smem, const BwdSmemLayout& L) {
  using InT = typename Tr::InT;
  constexpr int kGroups = Tr::kChunk / 4;
  const ChunkSmemLayout& l = L.chunk;
  const bool vec = p.f.vec4 != 0;
  for (int i = threadIdx.x; i < Tr::kDStep * kGroups; i += blockDim.x) {
    const int c = i / kGroups, t = (i % kGroups) * 4;
    if (c >= tile.nd || t >= len) continue;
    const long long d = tile.d0 + c;
    const long long b = tile.b;
    const int valid = min(4, len - t);
    float dt[4], u[4], dy[4], sb[4], sa[4], du[4], dd[4];
    lds4(smem + l.dt + c * l.row + t, dt);
    lds4(smem + l.u + c * l.row + t, u);
    lds4(smem + L.dy + c * l.row + t, dy);
    lds4(smem + L.sb + c * l.row + t, sb);
    lds4(smem + L.sa + c * l.row + t, sa);
    const float dd_w = Tr::kHasD ? p.f.D[d] : 0.0f;
    float part_d = 0.0f, part_bias = 0.0f;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      du[j] = dt[j] * sb[j];
      if constexpr (Tr::kHasD) du[j] = fmaf(dd_w, dy[j], du[j]);
      dd[j] = fmaf(u[j], sb[j], sa[j]);
      // softplus'(x) = sigmoid(x) = 1 - exp(-softplus(x)); 1 above 20.
      if constexpr (Tr::kSoftplus) dd[j] *= softplus_grad(dt[j]);
      if (j < valid) {
        part_d = fmaf(dy[j], u[j], part_d);
        part_bias += dd[j];
      }
    }
    store4<InT>(p.du, b * p.du_batch_stride + d * p.du_dim_stride + t0 + t, valid, vec, du);
    store4<InT>(p.ddelta, b * p.ddelta_batch_stride + d * p.ddelta_dim_stride + t0 + t, valid, vec,
                dd);
    smem[L.chan + c * kGroups + t / 4] = part_d;
    smem[L.chan + (Tr::kDStep + c) * kGroups + t / 4] = part_bias;
  }
}

}  // namespace ssmtune_kernels
