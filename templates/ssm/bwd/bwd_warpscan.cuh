// Warp-scan backward: one block per (batch, tile of kDStep channels of one
// B/C group), kWarps warps per channel, each lane kItems consecutive
// timesteps of a chunk of 32 * kWarps * kItems. Time-parallel: where the
// chunked kernels walk the sequence one timestep at a time per thread, here
// a channel's warps scan a whole chunk per state, so problems with few
// channels still fill the GPU.
//
// Phase 1 (unless the checkpoints are given) runs the forward over chunks
// 0..n_chunks-2, per state a lane-serial map and a warp scan, and saves the
// state entering each later chunk. Phase 2 walks the chunks in reverse; per
// state it rebuilds the lanes' maps (a = exp(dt A), dt u B), scans them
// forward from the chunk's checkpoint, scans the adjoint's maps (r -> a (r
// + C dy)) backward from the carry of the later chunks, and forms every
// gradient term of the chunk's timesteps: one exp per element and phase.
// With several warps a channel each warp scans its lanes with nothing
// carried in, the warps' totals meet in shared memory (one barrier per
// state), and each warp folds those of the warps before it (the adjoint:
// after it) into its incoming value.
//
// With n_split > 1 (state groups) a channel's states are split over that
// many blocks (grid z; block z runs states z, z + n_split, ...): for few
// channels, n_split times the SMs on the chains one after another, each
// staging only its states' B/C rows. Each group leaves its per-step sums
// over its states (the du and ddelta terms) in part_sb/part_sa, and
// ssm_bwd_state_sum adds the groups' in order and writes du, ddelta and
// ddelta_bias's partials; the first group writes dz and dD's partials.
//
// Sums in a fixed order (bitwise reproducible): over a lane's items in
// order, over the warp by a butterfly, over a channel's warps and the
// block's channels in warp order, over state groups in group order, over
// tiles, batch and chunks by ssm_bwd_finalize. Partials as the sequential
// kernel's (rows = batch).
#pragma once

#include "ssm/bwd/bwd_chunk.cuh"
#include "ssm/fwd_scan_common.cuh"

namespace ssmtune_kernels {

// Sum over the warp's lanes, the same bits in every lane.
template <typename AccT>
__device__ __forceinline__ AccT bwd_warp_sum(AccT v) {
#pragma unroll
  for (int m = 16; m >= 1; m /= 2) v += __shfl_xor_sync(0xffffffffu, v, m);
  return v;
}

// One lane's dout rows (and, with z, its z and out rows), as loaded.
template <typename Tr>
struct RawDy {
  RawRow<Tr> g, z, y;
  __device__ __forceinline__ void load(const SsmBwdParams& p, long long b, long long d,
                                       long long t_first) {
    const int bi = static_cast<int>(b), di = static_cast<int>(d);
    g.load(p.f, p.dout, p.dout_batch_stride, p.dout_dim_stride, bi, di, t_first);
    if constexpr (Tr::kHasZ) {
      z.load(p.f, p.f.z, p.f.z_batch_stride, p.f.z_dim_stride, bi, di, t_first);
      y.load(p.f, p.f.out, p.f.out_batch_stride, p.f.out_dim_stride, bi, di, t_first);
    }
  }
};

// One lane's dy items from its rows (dout, times silu(z) with z; dz written
// then), four timesteps per access; zeros at or past the sequence's end.
template <typename Tr>
__device__ __forceinline__ void bwd_dy_items(const SsmBwdParams& p, long long b, long long d,
                                             long long t_first, bool active, const RawDy<Tr>& raw,
                                             float (&dy)[Tr::kItems]) {
  using InT = typename Tr::InT;
  const bool vec = p.f.vec4 != 0;
#pragma unroll
  for (int q = 0; q < Tr::kItems / 4; ++q) {
    const long long t = t_first + 4 * q;
    const int valid = RawRow<Tr>::valid(p.f, t);
    float g[4];
    unpack4<InT>(raw.g.v[q], g);
    if constexpr (Tr::kHasZ) {
      float z[4], y[4], dz[4];
      unpack4<InT>(raw.z.v[q], z);
      unpack4<InT>(raw.y.v[q], y);
      dy_group<Tr>(g, z, y, dz);
      if (active && valid > 0)
        store4<InT>(p.dz, b * p.dz_batch_stride + d * p.dz_dim_stride + t, valid, vec, dz);
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) dy[4 * q + j] = g[j];
  }
}

// The value entering warp `w` of a channel's kW: `carry` (entering the
// first warp; kReverse: the last) through the maps of the warps before it,
// (a, b) at tot[4 * warp]. w = kW (kReverse: -1): the value leaving them all.
template <bool kReverse, int kW, typename AccT>
__device__ __forceinline__ AccT bwd_fold_warps(const AccT* tot, int w, AccT carry) {
#pragma unroll
  for (int k = 0; k < kW; ++k) {
    const int from = kReverse ? kW - 1 - k : k;
    if (kReverse ? from > w : from < w) carry = tot[4 * from] * carry + tot[4 * from + 1];
  }
  return carry;
}

template <typename Tr>
__global__ void __launch_bounds__(Tr::kThreads, Tr::kMinBlocks)
    ssm_bwd_warpscan(const SsmBwdParams p) {
  static_assert(Tr::kWarpScan, "ssm_bwd_warpscan needs warp-scan traits");
  using AccT = typename Tr::AccT;
  constexpr int kN = Tr::kN, kI = Tr::kItems, kK = Tr::kChunk, kW = Tr::kWarps;
  constexpr bool kRed = Tr::kVarB || Tr::kVarC;
  constexpr int kKindC = Tr::kVarB ? 1 : 0;  // red buffer kind of dC
  constexpr int kKinds = (Tr::kVarB ? 1 : 0) + (Tr::kVarC ? 1 : 0);
  // State groups: this block runs states grp, grp + kS, ... (at most kSlots),
  // state grp + k * kS with staged rows k.
  constexpr int kS = Tr::kNSplit;
  constexpr int kSlots = (kN + kS - 1) / kS;
  constexpr BwdScanSmemLayout L = bwd_scan_smem_layout(kN, kK, Tr::kDStep, kW, Tr::kVarB, Tr::kVarC,
                                                       static_cast<int>(sizeof(AccT)), kS);
  constexpr int kPer = Tr::kDStep * kN;  // AccT per carried buffer
  // Staging reads in flight per thread: with several warps a channel a
  // block is one of few on its SM and a chunk's rows are long, so one read
  // at a time waits out the memory latency once per element (H200, ncu at
  // (2,4,1024,8): 36 % of the stalls); one warp a channel keeps the loop
  // as measured.
  constexpr int kStageBatch = kW > 1 ? 4 : 1;
  extern __shared__ float4 smem_raw[];
  float* smem = reinterpret_cast<float*>(smem_raw);
  float* s_b = smem + L.b;
  float* s_c = smem + L.c;
  const SsmFwdParams& f = p.f;

  const Tile tile = make_tile<Tr>(f, blockIdx.x, blockIdx.y);
  const int grp = kS > 1 ? static_cast<int>(blockIdx.z) : 0;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int c = warp / kW, w = warp % kW;  // channel of the tile, warp of the channel
  const int ct = w * 32 + lane;            // thread of the channel
  const bool active = c < tile.nd;
  const long long d = tile.d0 + (active ? c : 0);
  const long long b = tile.b;
  const long long dim = f.dim;
  const int n_chunks = p.n_chunks;
  const int first = ct * kI;  // chunk-local timestep of this lane's item 0
  const float bias = Tr::kHasBias ? f.delta_bias[d] : 0.0f;
  // Per (channel, state) values; the carried ones by chunk parity (kW > 1).
  float* s_a = smem + L.a + c * kN;
  float* s_at = smem + L.a_true + c * kN;
  AccT* s_h0 = reinterpret_cast<AccT*>(smem + L.h) + c * kN;
  AccT* s_r0 = reinterpret_cast<AccT*>(smem + L.r) + c * kN;
  auto s_h = [&](int j) { return s_h0 + (kW > 1 ? (j & 1) * kPer : 0); };
  auto s_r = [&](int j) { return s_r0 + (kW > 1 ? (j & 1) * kPer : 0); };
  // Per (channel, warp, state) sums; the warps' totals (a, b of the forward,
  // then of the adjoint) by state parity.
  AccT* s_da = reinterpret_cast<AccT*>(smem + L.acc_a) + warp * kN;
  AccT* s_db = reinterpret_cast<AccT*>(smem + L.acc_b) + warp * kN;
  AccT* s_dc = reinterpret_cast<AccT*>(smem + L.acc_c) + warp * kN;
  AccT* s_tot = reinterpret_cast<AccT*>(smem + L.tot) + c * kW * 4;
  constexpr int kTotBuf = Tr::kDStep * kW * 4;
  AccT* ckpt = static_cast<AccT*>(p.ckpt);
  auto ckpt_index = [&](int j, int n) { return bwd_ckpt_index(b, j, n, d, n_chunks, kN, dim); };
  auto h0_of = [&](int n) {
    return Tr::kH0 ? static_cast<AccT>(f.h0[b * f.h0_batch_stride + d * f.h0_dim_stride + n])
                   : AccT(0);
  };
  for (int n = ct; n < kN; n += 32 * kW) {
    const float a = f.A[d * f.A_dim_stride + n];
    s_at[n] = a;
    s_a[n] = a * a_scale<Tr>();
    s_h(0)[n] = h0_of(n);
    s_r(n_chunks - 1)[n] =
        Tr::kDLast
            ? static_cast<AccT>(p.dlast[b * p.dlast_batch_stride + d * p.dlast_dim_stride + n])
            : AccT(0);
  }
  for (int n = lane; n < kN; n += 32) s_da[n] = s_db[n] = s_dc[n] = 0;
  __syncthreads();

  // Phase 1: the state entering every chunk after the first.
  ThreadItems<Tr> it;
  if (p.ckpt_ready == 0) {
    for (int j = 0; j + 1 < n_chunks; ++j) {
      const int t0 = j * kK;
      RawItems<Tr> raw;
      raw.load(f, static_cast<int>(b), static_cast<int>(d), t0 + first);
      it.convert(f, raw, t0 + first, bias);
      __syncthreads();  // the previous chunk's B rows are consumed
      stage_bc_states<BwdNoC<Tr>, kStageBatch, kSlots>(f, tile, t0, kK, s_b, s_c, grp, kS);
      __syncthreads();
      for (int k = 0; k < kSlots; ++k) {
        const int n = grp + k * kS;
        if (kS > 1 && n >= kN) break;  // the same for the whole block
        ItemMaps<Tr> maps;
        const Affine<AccT> m = maps.build(f, it, static_cast<AccT>(s_a[n]), n, static_cast<int>(d),
                                          first, kK, s_b + k * kK);
        AccT total;
        if constexpr (kW == 1) {
          warp_scan_affine<false>(m, lane == 0 ? s_h(j)[n] : AccT(0), lane, total);
        } else {
          Affine<AccT> excl;
          const Affine<AccT> t = warp_scan_maps(m, lane, excl);
          AccT* tot = s_tot + (k & 1) * kTotBuf;
          if (lane == 0) {
            tot[4 * w] = t.a;
            tot[4 * w + 1] = t.b;
          }
          __syncthreads();
          total = bwd_fold_warps<false, kW>(tot, kW, s_h(j)[n]);
        }
        if (lane == 0 && w == 0) {
          s_h(j + 1)[n] = total;
          if (active) ckpt[ckpt_index(j + 1, n)] = total;
        }
      }
    }
    // Phase 2 reads the checkpoints after a block barrier.
  }

  // Phase 2: chunks in reverse.
  AccT part_d = 0, part_bias = 0;  // this lane's sums of dy u and of ddelta
  AccT* s_hc = s_h0;               // the state entering the chunk (not carried here)
  for (int j = n_chunks - 1; j >= 0; --j) {
    const int t0 = j * kK;
    const int len = min(kK, f.seqlen - t0);
    // Every row's reads issued before any is used: one round trip (each
    // group converted as it lands waited for its own, one after another).
    RawItems<Tr> raw;
    raw.load(f, static_cast<int>(b), static_cast<int>(d), t0 + first);
    RawDy<Tr> raw_dy;
    raw_dy.load(p, b, d, t0 + first);
    it.convert(f, raw, t0 + first, bias);
    float dy[kI];
    bwd_dy_items<Tr>(p, b, d, t0 + first, active && grp == 0, raw_dy, dy);
    __syncthreads();  // the previous chunk's rows and states are consumed
    stage_bc_states<Tr, kStageBatch, kSlots>(f, tile, t0, len, s_b, s_c, grp, kS);
    for (int k = ct; k < kSlots && (kS == 1 || grp + k * kS < kN); k += 32 * kW) {
      const int n = grp + k * kS;
      s_hc[n] = j == 0 ? h0_of(n) : ckpt[ckpt_index(j, n)];
    }
    __syncthreads();
    const AccT* r_in = s_r(j);  // the adjoint entering the chunk's last step
    AccT* r_next = s_r(j + 1);  // leaving its first (kW > 1: the other buffer)
    AccT sb[kI], sa[kI];        // per item: sum_n g B, sum_n A g a h_{t-1}
#pragma unroll
    for (int i = 0; i < kI; ++i) sb[i] = sa[i] = 0;
    for (int k = 0; k < kSlots; ++k) {
      const int n = grp + k * kS;
      if (kS > 1 && n >= kN) break;  // the same for the whole block
      ItemMaps<Tr> maps;             // a and dt u B of this lane's items
      const Affine<AccT> fwd = maps.build(f, it, static_cast<AccT>(s_a[n]), n, static_cast<int>(d),
                                          first, len, s_b + k * kK);
      // The adjoint: g_t = C_t dy_t + r_t, r_{t-1} = a_t g_t; a lane maps
      // the r entering its last item to the r leaving its first.
      float cv[kI];
      bc_items<Tr, Tr::kVarC>(f, f.C, f.C_batch_stride, s_c + k * kK, static_cast<int>(d), n, first,
                              len, cv);
      AccT q = 0;
#pragma unroll
      for (int i = kI - 1; i >= 0; --i)
        q = maps.a[i] * (static_cast<AccT>(cv[i]) * static_cast<AccT>(dy[i]) + q);
      AccT hin, r, r_out;
      if constexpr (kW == 1) {
        AccT unused;
        hin = warp_scan_affine<false>(fwd, lane == 0 ? s_hc[n] : AccT(0), lane, unused);
        r = warp_scan_affine<true>(Affine<AccT>{fwd.a, q}, lane == 31 ? r_in[n] : AccT(0), lane,
                                   r_out);
      } else {
        Affine<AccT> ef, er;
        const Affine<AccT> tf = warp_scan_maps(fwd, lane, ef);
        const Affine<AccT> tr = warp_scan_maps<true>(Affine<AccT>{fwd.a, q}, lane, er);
        AccT* tot = s_tot + (k & 1) * kTotBuf;
        if (lane == 0) {
          tot[4 * w] = tf.a;
          tot[4 * w + 1] = tf.b;
          tot[4 * w + 2] = tr.a;
          tot[4 * w + 3] = tr.b;
        }
        __syncthreads();
        const AccT h_w = bwd_fold_warps<false, kW>(tot, w, s_hc[n]);
        const AccT r_w = bwd_fold_warps<true, kW>(tot + 2, w, r_in[n]);
        hin = ef.a * h_w + ef.b;
        r = er.a * r_w + er.b;
        r_out = tr.a * r_w + tr.b;  // leaving this warp's first lane (warp 0: the chunk's)
      }
      AccT g[kI];
#pragma unroll
      for (int i = kI - 1; i >= 0; --i) {
        g[i] = static_cast<AccT>(cv[i]) * static_cast<AccT>(dy[i]) + r;
        r = maps.a[i] * g[i];
      }
      float bv[kI];
      bc_items<Tr, Tr::kVarB>(f, f.B, f.B_batch_stride, s_b + k * kK, static_cast<int>(d), n, first,
                              len, bv);
      const AccT a_true = static_cast<AccT>(s_at[n]);
      AccT h = hin, da = 0, db = 0, dc = 0;
      float vb[kI], vc[kI];  // variable dB, dC terms of this channel
#pragma unroll
      for (int i = 0; i < kI; ++i) {
        const AccT ah = maps.a[i] * h;
        const AccT qa = g[i] * ah;  // g a h_{t-1}
        sa[i] += a_true * qa;
        da += qa * static_cast<AccT>(it.dt[i]);
        sb[i] += g[i] * static_cast<AccT>(bv[i]);
        const AccT du = static_cast<AccT>(it.dt[i] * it.u[i]);
        h = ah + maps.bx[i];
        const AccT dbv = g[i] * du, dcv = static_cast<AccT>(dy[i]) * h;
        if constexpr (Tr::kVarB) {
          vb[i] = static_cast<float>(dbv);
        } else {
          db += dbv;
        }
        if constexpr (Tr::kVarC) {
          vc[i] = static_cast<float>(dcv);
        } else {
          dc += dcv;
        }
      }
      // Per (channel, state) sums: the warp's, added to its chunks' so far.
      da = bwd_warp_sum(da);
      if constexpr (!Tr::kVarB) db = bwd_warp_sum(db);
      if constexpr (!Tr::kVarC) dc = bwd_warp_sum(dc);
      if (lane == 0) {
        if (w == 0) r_next[n] = r_out;
        s_da[n] += da;
        if constexpr (!Tr::kVarB) s_db[n] += db;
        if constexpr (!Tr::kVarC) s_dc[n] += dc;
      }
      const long long part_row =
          ((b * gridDim.x + blockIdx.x) * kN + n) * static_cast<long long>(f.seqlen) + t0;
      if constexpr (kRed && Tr::kDStep == 1) {
        // One channel a block: its terms are the block's sums.
#pragma unroll
        for (int i = 0; i < kI; ++i) {
          if (first + i >= len) break;
          if constexpr (Tr::kVarB) p.part_b[part_row + first + i] = vb[i];
          if constexpr (Tr::kVarC) p.part_c[part_row + first + i] = vc[i];
        }
      } else if constexpr (kRed) {
        // Variable dB/dC of (n, t): summed over the block's channels in
        // channel order. Two buffers: one barrier per state.
        float* buf = smem + L.red + (k & 1) * L.red_buf;
        float* mine = buf + c * kKinds * kK + first;
#pragma unroll
        for (int i = 0; i < kI; i += 4) {
          if constexpr (Tr::kVarB) sts4(mine + i, {vb[i], vb[i + 1], vb[i + 2], vb[i + 3]});
          if constexpr (Tr::kVarC)
            sts4(mine + kKindC * kK + i, {vc[i], vc[i + 1], vc[i + 2], vc[i + 3]});
        }
        __syncthreads();
        for (int o = threadIdx.x; o < kKinds * kK; o += Tr::kThreads) {
          const int kind = o / kK, t = o % kK;
          if (t >= len) continue;
          float sum = 0.0f;
          for (int ch = 0; ch < tile.nd; ++ch) sum += buf[(ch * kKinds + kind) * kK + t];
          float* part = Tr::kVarB && kind == 0 ? p.part_b : p.part_c;
          part[part_row + t] = sum;
        }
      }
    }
    if constexpr (kS > 1) {
      // This group's sums over its states, for ssm_bwd_state_sum; dD's sum
      // of dy u from the first group (every group's dy is the same).
      if (active) {
        const long long row = ((grp * static_cast<long long>(f.batch) + b) * dim + d) * f.seqlen;
        AccT* psb = static_cast<AccT*>(p.part_sb) + row + t0 + first;
        AccT* psa = static_cast<AccT*>(p.part_sa) + row + t0 + first;
#pragma unroll
        for (int i = 0; i < kI; ++i) {
          if (first + i >= len) break;
          psb[i] = sb[i];
          psa[i] = sa[i];
          if (grp == 0) part_d += static_cast<AccT>(dy[i] * it.u[i]);
        }
      }
    } else if (active) {
      // du, ddelta of the chunk's timesteps; this lane's dD, ddelta_bias sums.
      const bool vec = f.vec4 != 0;
      const float dd_w = Tr::kHasD ? f.D[d] : 0.0f;
#pragma unroll
      for (int i = 0; i < kI; i += 4) {
        const int valid = min(4, len - first - i);
        if (valid <= 0) break;
        float du[4], dd[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const float dt = it.dt[i + k], u = it.u[i + k];
          const float s_bk = static_cast<float>(sb[i + k]);
          du[k] = dt * s_bk;
          if constexpr (Tr::kHasD) du[k] = fmaf(dd_w, dy[i + k], du[k]);
          dd[k] = fmaf(u, s_bk, static_cast<float>(sa[i + k]));
          // softplus'(x) = sigmoid(x) = 1 - exp(-softplus(x)).
          if constexpr (Tr::kSoftplus) dd[k] *= softplus_grad(dt);
          if (k < valid) {
            part_d += static_cast<AccT>(dy[i + k] * u);
            part_bias += static_cast<AccT>(dd[k]);
          }
        }
        const long long t = t0 + first + i;
        store4<typename Tr::InT>(p.du, b * p.du_batch_stride + d * p.du_dim_stride + t, valid, vec,
                                 du);
        store4<typename Tr::InT>(p.ddelta, b * p.ddelta_batch_stride + d * p.ddelta_dim_stride + t,
                                 valid, vec, dd);
      }
    }
  }

  // Per-block results: dh0 directly, the rest as partials for the finalize;
  // a channel's warps summed in warp order.
  part_d = bwd_warp_sum(part_d);
  part_bias = bwd_warp_sum(part_bias);
  AccT* s_wsum = reinterpret_cast<AccT*>(smem + L.wsum) + 2 * c * kW;
  if (lane == 0) {
    s_wsum[2 * w] = part_d;
    s_wsum[2 * w + 1] = part_bias;
  }
  __syncthreads();
  if (!active) return;
  const AccT* s_dr = s_r(0 + 1);  // the adjoint leaving chunk 0's first step
  for (int k = ct; k < kSlots && (kS == 1 || grp + k * kS < kN); k += 32 * kW) {
    const int n = grp + k * kS;
    const long long rdn = (b * dim + d) * kN + n;
    if constexpr (Tr::kH0)
      p.dh0[b * p.dh0_batch_stride + d * p.dh0_dim_stride + n] = static_cast<float>(s_dr[n]);
    AccT sum_a = 0, sum_b = 0, sum_c = 0;
    for (int v = 0; v < kW; ++v) {
      const int k = (c * kW + v) * kN + n;
      sum_a += reinterpret_cast<const AccT*>(smem + L.acc_a)[k];
      sum_b += reinterpret_cast<const AccT*>(smem + L.acc_b)[k];
      sum_c += reinterpret_cast<const AccT*>(smem + L.acc_c)[k];
    }
    p.part_a[rdn] = static_cast<float>(sum_a);
    if constexpr (!Tr::kVarB) p.part_b[rdn] = static_cast<float>(sum_b);
    if constexpr (!Tr::kVarC) p.part_c[rdn] = static_cast<float>(sum_c);
  }
  if (ct == 0) {
    AccT sum_d = 0, sum_bias = 0;
    for (int v = 0; v < kW; ++v) {
      sum_d += s_wsum[2 * v];
      sum_bias += s_wsum[2 * v + 1];
    }
    // State groups: ddelta_bias's partials come from ssm_bwd_state_sum.
    if constexpr (Tr::kHasD)
      if (grp == 0) p.part_d[b * dim + d] = static_cast<float>(sum_d);
    if constexpr (Tr::kHasBias && kS == 1) p.part_bias[b * dim + d] = static_cast<float>(sum_bias);
  }
}

}  // namespace ssmtune_kernels
