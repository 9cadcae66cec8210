// The recurrence over one staged chunk for one thread's states: the inner
// loop of the sequential, multipass and lookback kernels.
#pragma once

#include "ssm/fwd_tile.cuh"

namespace ssmtune_kernels {

// Which (channel, split) a thread of the chunk kernels owns. Channels run
// fastest within a warp: the 32 / kNSplit lanes that share a split index
// read the same B/C address (one broadcast), and a channel's kNSplit lanes
// sit kLaneStride apart.
template <typename Tr>
struct ChunkLanes {
  static constexpr int kLaneStride = 32 / Tr::kNSplit;  // channels per warp
  __device__ __forceinline__ static int channel() {
    return (threadIdx.x / 32) * kLaneStride + threadIdx.x % kLaneStride;
  }
  __device__ __forceinline__ static int split() { return (threadIdx.x % 32) / kLaneStride; }
};

// Where run_chunk's output passes save the states at the backward's
// checkpoints (SsmFwdParams::states): at the end of each span of timesteps
// that ends a backward chunk before the sequence's end. Only the saving
// variant of a forward (compiled with SSMTUNE_FWD_SAVES_STATES=1, the
// training forward's) has one: in the plain kernels the sink is NoSink and
// costs nothing (a sink in every kernel cost the H200's pipelined forward
// 4 to 10% at dstate 16, and the sequential one spills).
struct NoSink {
  static constexpr bool kEnabled = false;
  int t0 = 0;  // unused
};

struct StateSink {
  static constexpr bool kEnabled = true;
  const SsmFwdParams& p;
  int b, d;
  bool on;      // states asked for (uniform across the grid)
  bool active;  // this lane's channel is real
  int t0 = 0;   // the staged chunk's first timestep
};

#if defined(SSMTUNE_FWD_SAVES_STATES) && SSMTUNE_FWD_SAVES_STATES
__device__ __forceinline__ StateSink make_state_sink(const SsmFwdParams& p, int b, int d,
                                                     bool active) {
  return StateSink{p, b, d, p.states != nullptr, active};
}
#else
__device__ __forceinline__ NoSink make_state_sink(const SsmFwdParams&, int, int, bool) {
  return NoSink{};
}
#endif

// kOutput: h carries in and out, and y = sum_n C h replaces the dt row of
// each group of 4 timesteps once it is consumed. Otherwise (aggregate): h
// starts where the caller set it (zero) and aprod accumulates prod(a), so
// (aprod, h) is the chunk's affine map h -> a*h + b. Whole groups of 4 run
// (the staged padding is the identity step); y is written only below len.
// kUnroll groups of 4 per loop step (2 overlaps one group's shuffles with
// the next group's exps: on the H200 the pipelined kernel gained 4-9% at
// dstate 16 bf16, the sequential kernel lost 1-5%).
template <typename Tr, bool kOutput, int kUnroll = 1, typename Sink = NoSink>
__device__ __forceinline__ void run_chunk(const ChannelStates<Tr>& cs,
                                          typename Tr::AccT (&h)[ChannelStates<Tr>::kPerThread],
                                          typename Tr::AccT (&aprod)[ChannelStates<Tr>::kPerThread],
                                          int c, int s, int len, float* smem,
                                          const ChunkSmemLayout& l, const Sink& sink = Sink{}) {
  using AccT = typename Tr::AccT;
  using Reduce = SplitReduce4<Tr>;
  constexpr int kPer = ChannelStates<Tr>::kPerThread;
  constexpr bool kAllStatesUsed = Tr::kN % Tr::kNSplit == 0;
  float* dt_row = smem + l.dt + c * l.row;
  const float* u_row = smem + l.u + c * l.row;
  // Where this lane leaves its sums: the consumed dt row, from its first
  // timestep on. The last group's sums past len land in the row's padding
  // (t + 3 < kChunk), which no one reads, so the stores need no check.
  float* y_row = dt_row + Reduce::first(s);
  const bool owner = Reduce::owner(s);
  // The chunk runs in spans that end at the backward's checkpoints when
  // states are saved (one span, the chunk, otherwise), so the group loop
  // itself carries no test: a per-group one cost the pipelined forward 4 to
  // 10% on the H200 at dstate 16, states saved or not. The spans are the
  // same for every lane (the shuffles inside need the whole warp).
  for (int t_begin = 0; t_begin < len;) {
    // Up to the next checkpoint (an interval's end), from the params.
    int t_end = len;
    if constexpr (Sink::kEnabled && kOutput)
      if (sink.on)
        t_end = min(len, ((sink.t0 + t_begin) | ((1 << sink.p.states_shift) - 1)) + 1 - sink.t0);
#pragma unroll kUnroll
    for (int t = t_begin; t < t_end; t += 4) {
      float dt[4], du[4];
      lds4(dt_row + t, dt);
      lds4(u_row + t, du);
#pragma unroll
      for (int j = 0; j < 4; ++j) du[j] *= dt[j];
      AccT y[4] = {0, 0, 0, 0};
#pragma unroll
      for (int k = 0; k < kPer; ++k) {
        const int n = ChannelStates<Tr>::state(s, k);
        if (kAllStatesUsed || n < Tr::kN) {
          float bv[4], cv[4];
          if constexpr (Tr::kVarB) {
            lds4(smem + l.b + n * l.bc_row + t, bv);
          } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) bv[j] = cs.bconst[k];
          }
          if constexpr (kOutput) {
            if constexpr (Tr::kVarC) {
              lds4(smem + l.c + n * l.bc_row + t, cv);
            } else {
#pragma unroll
              for (int j = 0; j < 4; ++j) cv[j] = cs.cconst[k];
            }
          }
          // Poly exps by slot, the same for every lane: no divergence.
          const bool poly = Tr::kExp == ExpKind::kPoly && (k * 8) / kPer < Tr::kPolyShare;
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const AccT a =
                exp_slot<Tr>(static_cast<AccT>(dt[j]) * static_cast<AccT>(cs.a2[k]), poly);
            h[k] = a * h[k] + static_cast<AccT>(du[j]) * static_cast<AccT>(bv[j]);
            if constexpr (kOutput) {
              y[j] += static_cast<AccT>(cv[j]) * h[k];
            } else {
              aprod[k] *= a;
            }
          }
        }
      }
      if constexpr (kOutput) {
        Reduce::run(y, s, ChunkLanes<Tr>::kLaneStride);
        if (owner) {
#pragma unroll
          for (int j = 0; j < Reduce::kKeep; ++j) y_row[t + j] = static_cast<float>(y[j]);
        }
      }
    }
    if constexpr (Sink::kEnabled && kOutput) {
      // The state after this span is a checkpoint when the span ends a
      // backward chunk before the sequence's end (uniform across the block).
      const SsmFwdParams& q = sink.p;
      const int end = sink.t0 + t_end;
      if (sink.on && sink.active && (end & ((1 << q.states_shift) - 1)) == 0 && end < q.seqlen) {
        const long long saved = (q.seqlen - 1) >> q.states_shift;  // chunks j >= 1
        const long long j = (end >> q.states_shift) - 1;
        float* at = q.states + (sink.b * saved + j) * q.dstate * q.dim + sink.d;
#pragma unroll
        for (int k = 0; k < kPer; ++k) {
          const int n = ChannelStates<Tr>::state(s, k);
          if (kAllStatesUsed || n < Tr::kN)
            at[static_cast<long long>(n) * q.dim] = static_cast<float>(h[k]);
        }
      }
    }
    t_begin = t_end;
  }
}

// Common checks of the staged-chunk kernels' thread layout.
template <typename Tr>
struct ChunkLayoutChecks {
  static_assert(Tr::kThreads * Tr::kChan == Tr::kDStep * Tr::kNSplit,
                "chunk kernels: threads must equal d_step * n_split / channels a thread");
  static_assert(Tr::kNSplit >= 1 && Tr::kNSplit <= 32 && (Tr::kNSplit & (Tr::kNSplit - 1)) == 0,
                "n_split must be a power of two <= 32 (a channel's threads share a warp)");
  static_assert(Tr::kNSplit <= Tr::kN, "n_split must not exceed dstate");
  static constexpr bool kOk = true;
};

}  // namespace ssmtune_kernels
