// Segmented sequential scan, for problems whose batch x dim gives too few
// chains to fill the GPU (short and wide, or one long sequence). The
// sequence runs in rounds of kChunk timesteps; a round is cut into kItems
// segments, each run by its own threads. Pass 1: every (channel, split,
// segment) thread runs its segment from zero, giving the segment's map
// h -> P h + H for each of its states. The block combines the maps in shared
// memory into each segment's incoming state; pass 2 re-runs the segment from
// it and writes y. Inputs are read straight from global memory (each channel
// row by its split lanes, each B/C row by the channels of the block: the
// cache serves the repeats). Every exp is computed twice; in exchange one
// launch puts kItems threads on each chain and needs no scratch.
#pragma once

#include "ssm/fwd_chunk.cuh"

namespace ssmtune_kernels {

// Thread (segment, channel, split): kTeam = kDStep x kNSplit threads per
// segment; a channel's split lanes sit kStride apart within one warp.
template <typename Tr>
struct SegLanes {
  static constexpr int kSegs = Tr::kItems;
  static constexpr int kSegLen = Tr::kChunk / kSegs;
  static constexpr int kTeam = Tr::kDStep * Tr::kNSplit;
  static constexpr int kStride = Tr::kDStep < 32 / Tr::kNSplit ? Tr::kDStep : 32 / Tr::kNSplit;
  static_assert(kTeam * kSegs == Tr::kThreads, "segmented: threads = d_step x n_split x items");
  static_assert(kTeam % 32 == 0 || 32 % kTeam == 0, "segmented: d_step x n_split must be 2^k");
  static_assert(kSegLen * kSegs == Tr::kChunk && kSegLen % 4 == 0,
                "segmented: chunk / items must be a multiple of 4");
  static_assert(Tr::kNSplit >= 1 && Tr::kNSplit <= 32 && (Tr::kNSplit & (Tr::kNSplit - 1)) == 0,
                "n_split must be a power of two <= 32");

  __device__ __forceinline__ static int segment() { return threadIdx.x / kTeam; }
  __device__ __forceinline__ static int channel() {
    const int r = threadIdx.x % kTeam;
    return (r / (kStride * Tr::kNSplit)) * kStride + r % kStride;
  }
  __device__ __forceinline__ static int split() {
    return (threadIdx.x % kTeam) / kStride % Tr::kNSplit;
  }
};

// Four timesteps of one thread's inputs, read from global memory.
template <typename Tr>
struct SegGroup {
  static constexpr int kPer = ChannelStates<Tr>::kPerThread;
  float dt[4], u[4];
  float b[kPer][4], c[kPer][4];

  template <bool kWithC>
  __device__ __forceinline__ void load(const SsmFwdParams& p, const Tile& tile, int d, int s,
                                       const ChannelStates<Tr>& cs, float bias, int t, int valid) {
    using InT = typename Tr::InT;
    const bool vec = p.vec4 != 0;
    float dv[4];
    load4<InT>(p.delta, tile.b * p.delta_batch_stride + d * p.delta_dim_stride + t, valid, vec, dv);
    load4<InT>(p.u, tile.b * p.u_batch_stride + d * p.u_dim_stride + t, valid, vec, u);
#pragma unroll
    for (int j = 0; j < 4; ++j) dt[j] = j < valid ? transform_delta<Tr>(dv[j], bias) : 0.0f;
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const int n = min(ChannelStates<Tr>::state(s, k), Tr::kN - 1);
      if constexpr (Tr::kVarB) {
        load4<InT>(p.B, bc_index(p.B_batch_stride, p.B_group_stride, p.B_dstate_stride, tile, n, t),
                   valid, vec, b[k]);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) b[k][j] = cs.bconst[k];
      }
      if constexpr (kWithC) {
        if constexpr (Tr::kVarC) {
          load4<InT>(p.C,
                     bc_index(p.C_batch_stride, p.C_group_stride, p.C_dstate_stride, tile, n, t),
                     valid, vec, c[k]);
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j) c[k][j] = cs.cconst[k];
        }
      }
    }
  }
};

template <typename Tr>
__global__ void __launch_bounds__(Tr::kThreads) ssm_fwd_segmented(const SsmFwdParams p) {
  using Lanes = SegLanes<Tr>;
  using AccT = typename Tr::AccT;
  using Group = SegGroup<Tr>;
  using Reduce = SplitReduce4<Tr>;
  constexpr int kPer = ChannelStates<Tr>::kPerThread;
  constexpr int kSegs = Lanes::kSegs;
  constexpr int kMap = Tr::kDStep * Tr::kN;  // maps per segment
  extern __shared__ float4 smem_raw[];
  AccT* seg_p = reinterpret_cast<AccT*>(smem_raw);  // [segment][channel][state]
  AccT* seg_h = seg_p + kSegs * kMap;
  AccT* carry = seg_h + kSegs * kMap;  // [channel][state]

  const Tile tile = make_tile<Tr>(p, blockIdx.x, blockIdx.y);
  const int g = Lanes::segment(), c = Lanes::channel(), s = Lanes::split();
  const bool active = c < tile.nd;
  const int d = tile.d0 + (active ? c : 0);
  const float bias = Tr::kHasBias ? p.delta_bias[d] : 0.0f;
  ChannelStates<Tr> cs;
  cs.load(p, d, s, active);
  auto slot = [&](int k) { return c * Tr::kN + ChannelStates<Tr>::state(s, k); };
  auto used = [&](int k) { return ChannelStates<Tr>::state(s, k) < Tr::kN; };

  if (g == 0) {
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      if (!used(k)) continue;
      AccT h0 = 0;
      if constexpr (Tr::kH0)
        if (active)
          h0 = p.h0[tile.b * p.h0_batch_stride + d * p.h0_dim_stride +
                    ChannelStates<Tr>::state(s, k)];
      carry[slot(k)] = h0;
    }
  }

  AccT h[kPer];
  for (int r0 = 0; r0 < p.seqlen; r0 += Tr::kChunk) {
    const int t_begin = r0 + g * Lanes::kSegLen;
    const int t_end = min(t_begin + Lanes::kSegLen, p.seqlen);
    // Pass 1: the segment's map from a zero state; its decay from the sum
    // of its deltas (one exp per state, not one per step).
    AccT sum_dt = 0;
#pragma unroll
    for (int k = 0; k < kPer; ++k) h[k] = 0;
#pragma unroll 2
    for (int t = t_begin; t < t_end; t += 4) {
      Group x;
      x.template load<false>(p, tile, d, s, cs, bias, t, min(4, t_end - t));
#pragma unroll
      for (int k = 0; k < kPer; ++k) {
        const bool poly = Tr::kExp == ExpKind::kPoly && (k * 8) / kPer < Tr::kPolyShare;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const AccT a =
              exp_slot<Tr>(static_cast<AccT>(x.dt[j]) * static_cast<AccT>(cs.a2[k]), poly);
          h[k] = a * h[k] + static_cast<AccT>(x.dt[j] * x.u[j]) * static_cast<AccT>(x.b[k][j]);
        }
      }
#pragma unroll
      for (int j = 0; j < 4; ++j) sum_dt += static_cast<AccT>(x.dt[j]);
    }
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      if (!used(k)) continue;
      seg_p[g * kMap + slot(k)] = exp_slot<Tr>(sum_dt * static_cast<AccT>(cs.a2[k]), false);
      seg_h[g * kMap + slot(k)] = h[k];
    }
    __syncthreads();
    // The segment's incoming state: the round's carry through the maps of
    // the segments before it.
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      if (!used(k)) continue;
      AccT hin = carry[slot(k)];
      for (int q = 0; q < g; ++q) hin = seg_p[q * kMap + slot(k)] * hin + seg_h[q * kMap + slot(k)];
      h[k] = hin;
    }
    // Pass 2: from the incoming state, with the outputs.
#pragma unroll 2
    for (int t = t_begin; t < t_end; t += 4) {
      const int valid = min(4, t_end - t);
      Group x;
      x.template load<true>(p, tile, d, s, cs, bias, t, valid);
      AccT y[4] = {0, 0, 0, 0};
#pragma unroll
      for (int k = 0; k < kPer; ++k) {
        const bool poly = Tr::kExp == ExpKind::kPoly && (k * 8) / kPer < Tr::kPolyShare;
        if (!used(k)) continue;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const AccT a =
              exp_slot<Tr>(static_cast<AccT>(x.dt[j]) * static_cast<AccT>(cs.a2[k]), poly);
          h[k] = a * h[k] + static_cast<AccT>(x.dt[j] * x.u[j]) * static_cast<AccT>(x.b[k][j]);
          y[j] += static_cast<AccT>(x.c[k][j]) * h[k];
        }
      }
      Reduce::run(y, s, Lanes::kStride);
      if (active && Reduce::owner(s)) {
        const int first = Reduce::first(s);
#pragma unroll
        for (int j = 0; j < Reduce::kKeep; ++j)
          if (first + j < valid)
            write_output<Tr>(p, tile.b, d, t + first + j, y[j], x.u[first + j]);
      }
    }
    // The last segment's end state carries into the next round.
    if (g == kSegs - 1) {
#pragma unroll
      for (int k = 0; k < kPer; ++k)
        if (used(k)) carry[slot(k)] = h[k];
    }
    __syncthreads();
  }

  if constexpr (Tr::kLastState) {
    if (g == kSegs - 1 && active) {
#pragma unroll
      for (int k = 0; k < kPer; ++k)
        if (used(k))
          p.last_state[tile.b * p.last_state_batch_stride + d * p.last_state_dim_stride +
                       ChannelStates<Tr>::state(s, k)] = static_cast<float>(h[k]);
    }
  }
}

}  // namespace ssmtune_kernels
