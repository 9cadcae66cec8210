// Thread-serial plus warp-shuffle scan: kW warps per channel (kThreads =
// 32 kW kDStep), each lane kItems consecutive timesteps (a chunk is
// 32 kW kItems steps); per state the lane's items are reduced serially, the
// 32 maps of a warp are scanned with a Kogge-Stone shuffle scan, and each
// lane re-runs its items from its incoming state. The channel walks the
// sequence chunk by chunk, carrying the state in shared memory. With one
// warp a channel the carried state enters the scan at lane 0; with several
// (for few channels: a longer chunk, fewer chunks one after another), each
// warp scans without it, the warps' totals meet in shared memory (one
// barrier per two states) and each warp folds those of the warps before it
// into its entry state. B/C tiles are staged once per block for its kDStep
// channels. With kNSplit > 1 (state groups, for few channels) a channel's
// states are split over that many blocks (grid z; block z runs states z, z +
// kNSplit, ..., staging only their B/C rows): each leaves its y, the sum
// over its states, in p.carries, and ssm_fwd_state_sum adds the groups' in
// group order and writes the outputs.
#pragma once

#include "ssm/fwd_chunk.cuh"
#include "ssm/fwd_scan_common.cuh"

namespace ssmtune_kernels {

template <typename Tr>
__global__ void __launch_bounds__(Tr::kThreads) ssm_fwd_warpscan(const SsmFwdParams p) {
  constexpr int kW = Tr::kThreads / (32 * Tr::kDStep);  // warps per channel
  static_assert(Tr::kThreads == 32 * kW * Tr::kDStep && (kW & (kW - 1)) == 0,
                "warpscan: threads must be 32 * d_step * (a power of 2) warps per channel");
  static_assert(Tr::kChunk == 32 * kW * Tr::kItems, "warpscan: chunk must be 32 * warps * items");
  using AccT = typename Tr::AccT;
  // State groups: this block runs states grp + k * kS (k < kSlots), with
  // staged rows k.
  constexpr int kS = Tr::kNSplit;
  constexpr int kSlots = (Tr::kN + kS - 1) / kS;
  constexpr ScanSmemLayout l = scan_smem_layout(Tr::kN, Tr::kChunk, Tr::kDStep, Tr::kThreads,
                                                sizeof(AccT), Tr::kVarB, Tr::kVarC, false, kS);
  extern __shared__ float4 smem_raw[];
  char* smem = reinterpret_cast<char*>(smem_raw);
  float* s_b = reinterpret_cast<float*>(smem + l.b);
  float* s_c = reinterpret_cast<float*>(smem + l.c);
  AccT* s_h = reinterpret_cast<AccT*>(smem + l.h);
  float* s_a = reinterpret_cast<float*>(smem + l.a);  // A, pre-scaled
  // kW > 1: [buffer][state of the pair][warp] totals, a then b.
  AccT* s_w = reinterpret_cast<AccT*>(smem + l.x);
  constexpr int kWarps = Tr::kThreads / 32;

  const Tile tile = make_tile<Tr>(p, blockIdx.x, blockIdx.y);
  const int grp = kS > 1 ? static_cast<int>(blockIdx.z) : 0;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int c = warp / kW, sub = warp % kW;
  const int first = (sub * 32 + lane) * Tr::kItems;  // chunk-local timestep of item 0
  const bool active = c < tile.nd;
  const int d = tile.d0 + (active ? c : 0);
  const float bias = (Tr::kHasBias && active) ? p.delta_bias[d] : 0.0f;

  // The channel's first warp sets its carried states and A rows; with one
  // warp a channel, lane 0 alone reads and writes the carried states after.
  if (sub == 0)
    for (int n = lane; n < Tr::kN; n += 32) {
      s_h[c * Tr::kN + n] =
          (Tr::kH0 && active)
              ? static_cast<AccT>(p.h0[tile.b * p.h0_batch_stride + d * p.h0_dim_stride + n])
              : AccT(0);
      s_a[c * Tr::kN + n] = active ? p.A[d * p.A_dim_stride + n] * a_scale<Tr>() : 0.0f;
    }

  // The saving variant's checkpoints (training): the state entering a lane
  // whose first step starts one of the backward's chunks (intervals are
  // multiples of kItems, so every checkpoint is a lane's entry).
  constexpr bool kSaves = decltype(make_state_sink(p, 0, 0, false))::kEnabled;
  // This chunk's delta and u, and the next chunk's reads in flight while
  // this one runs. Halves (a multiple of 4 items a lane) are held as loaded
  // and converted once the chunk before has run: nothing waits on them in
  // between, in as many registers or fewer (at (8, 1024, 2048, 4) with the
  // flags: 106 at 8 steps a lane, 55 at 4 against 57; plain fp16 80 against
  // 92). Otherwise a register double buffer of converted items (each group
  // converted as it lands, a wait per group): raw fp32 took 107 to 140
  // registers against 89 to 106. Halves at 4 items a lane read the chunk's
  // gate z at its top, to land while the chunk runs (48 registers against 56
  // at (8, 1024, 2048, 4) bf16 with the flags; H100, K128.D4: 0.1394 ->
  // 0.1339 ms there, 0.2276 -> 0.2294 at (4, 1536, 4096, 4), the same at
  // (16, 768, 1024, 4); at 8 items 128 registers with spills against 106,
  // and a whole chunk ahead 137); otherwise write_items reads it group by
  // group.
  constexpr bool kRaw = Tr::kItems % 4 == 0 && sizeof(typename Tr::InT) == 2;
  constexpr bool kZEarly = kRaw && Tr::kHasZ && kS == 1 && Tr::kItems == 4;
  ThreadItems<Tr> it, next;
  RawItems<Tr> raw;
  RawRow<Tr> zrow;
  if constexpr (kRaw)
    raw.load(p, tile.b, d, first);
  else
    it.load(p, tile.b, d, first, bias);
  for (int t0 = 0; t0 < p.seqlen; t0 += Tr::kChunk) {
    const int len = min(Tr::kChunk, p.seqlen - t0);
    const bool more = t0 + Tr::kChunk < p.seqlen;
    float* const ckpt = checkpoint_row<kSaves>(p, tile.b, d, active, t0 + first);
    if constexpr (kZEarly)
      zrow.load(p, p.z, p.z_batch_stride, p.z_dim_stride, tile.b, d, t0 + first);
    if constexpr (kRaw) {
      it.convert(p, raw, t0 + first, bias);
      if (more) raw.load(p, tile.b, d, t0 + Tr::kChunk + first);
    } else if (more) {
      next.load(p, tile.b, d, t0 + Tr::kChunk + first, bias);
    }
    __syncthreads();
    // Several warps a channel: few channels, blocks alone on their SMs, and
    // the staging's round trips in the open (4 reads in flight a thread:
    // 0.027 -> 0.017 ms at (2, 4, 1024, 16) with the flags on the H200; with
    // one warp a channel the registers cost more, 0.024 -> 0.031 ms at
    // (8, 256, 1024, 4)). (The next chunk's B/C rows in registers, stored
    // after the barrier, took 20 to 40 registers more at one warp a channel
    // and dstate 4 or 8.)
    stage_bc_states<Tr, kW == 1 ? 1 : 4, kSlots>(p, tile, t0, len, s_b, s_c, grp, kS);
    __syncthreads();
    AccT y[Tr::kItems];
#pragma unroll
    for (int i = 0; i < Tr::kItems; ++i) y[i] = 0;

    if constexpr (kW == 1) {
#pragma unroll 2
      for (int k = 0; k < kSlots; ++k) {
        const int n = grp + k * kS;
        if (kS > 1 && n >= Tr::kN) break;  // the same for the whole block
        const AccT a2 = static_cast<AccT>(s_a[c * Tr::kN + n]);
        ItemMaps<Tr> maps;
        Affine<AccT> incl = maps.build(p, it, a2, n, d, first, len, s_b + k * Tr::kChunk);
        // Lane 0 folds the carried state into its map, so the scanned b parts
        // are the states themselves.
        const AccT hprev = lane == 0 ? s_h[c * Tr::kN + n] : AccT(0);
        AccT total;
        const AccT hin = warp_scan_affine<false>(incl, hprev, lane, total);
        if (ckpt != nullptr) ckpt[static_cast<long long>(n) * p.dim] = static_cast<float>(hin);
        maps.rerun(p, hin, n, d, first, len, s_c + k * Tr::kChunk, y);
        if (lane == 0) s_h[c * Tr::kN + n] = total;
      }
    } else {
      // Two states a pass, one barrier between the warps' totals and their use.
      // A buffer is written again two passes later, after every warp has
      // passed the barrier in between and so finished reading it.
      int buf = 0;
      for (int k0 = 0; k0 < kSlots; k0 += 2, buf ^= 1) {
        ItemMaps<Tr> maps[2];
        Affine<AccT> excl[2], total[2];
        AccT hprev[2];
#pragma unroll
        for (int q = 0; q < 2; ++q) {
          if (k0 + q >= kSlots) break;
          const int k = k0 + q, n = grp + k * kS;
          if (kS > 1 && n >= Tr::kN) break;  // the same for the whole block
          const AccT a2 = static_cast<AccT>(s_a[c * Tr::kN + n]);
          const Affine<AccT> incl =
              maps[q].build(p, it, a2, n, d, first, len, s_b + k * Tr::kChunk);
          total[q] = warp_scan_maps(incl, lane, excl[q]);
          AccT* w = s_w + 2 * ((buf * 2 + q) * kWarps + warp);
          if (lane == 0) {
            w[0] = total[q].a;
            w[1] = total[q].b;
          }
          hprev[q] = s_h[c * Tr::kN + n];
        }
        __syncthreads();
#pragma unroll
        for (int q = 0; q < 2; ++q) {
          if (k0 + q >= kSlots) break;
          const int k = k0 + q, n = grp + k * kS;
          if (kS > 1 && n >= Tr::kN) break;
          // The state entering this warp: the carried one through the
          // totals of the channel's warps before it.
          const AccT* w = s_w + 2 * ((buf * 2 + q) * kWarps + c * kW);
          AccT h = hprev[q];
          for (int j = 0; j < sub; ++j) h = w[2 * j] * h + w[2 * j + 1];
          const AccT hin = excl[q].a * h + excl[q].b;
          if (ckpt != nullptr) ckpt[static_cast<long long>(n) * p.dim] = static_cast<float>(hin);
          maps[q].rerun(p, hin, n, d, first, len, s_c + k * Tr::kChunk, y);
          if (sub == kW - 1 && lane == 0) s_h[c * Tr::kN + n] = total[q].a * h + total[q].b;
        }
      }
    }
    if constexpr (kS > 1) {
      // This group's y, for ssm_fwd_state_sum.
      if (active) {
        AccT* row = static_cast<AccT*>(p.carries) +
                    ((grp * static_cast<long long>(p.batch) + tile.b) * p.dim + d) * p.seqlen + t0 +
                    first;
#pragma unroll
        for (int i = 0; i < Tr::kItems; ++i)
          if (first + i < len) row[i] = y[i];
      }
    } else if (active) {
      write_items<Tr>(p, tile.b, d, t0 + first, len - first, y, it.u, kZEarly ? &zrow : nullptr);
    }
    if constexpr (!kRaw) it = next;
  }
  if constexpr (Tr::kLastState) {
    // The channel's last warp wrote the final states.
    __syncthreads();
    if (active && sub == 0)
      for (int k = lane; k < kSlots && (kS == 1 || grp + k * kS < Tr::kN); k += 32) {
        const int n = grp + k * kS;
        p.last_state[tile.b * p.last_state_batch_stride + d * p.last_state_dim_stride + n] =
            static_cast<float>(s_h[c * Tr::kN + n]);
      }
  }
}

}  // namespace ssmtune_kernels
