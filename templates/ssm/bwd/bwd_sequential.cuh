// Sequential backward: one block per (batch, tile of kDStep channels of one
// B/C group). Phase 1 runs the forward over chunks 0..n_chunks-2 and
// checkpoints the state entering each later chunk (scratch, AccT). Phase 2
// walks the chunks in reverse: stage the chunk (dt, u, B, C, dy; dz written),
// recompute its forward from the checkpoint keeping a_t h_{t-1} in shared
// memory, then walk it backwards carrying r = a_{t+1} g_{t+1} (dlast at the
// end). Up to 4 states per thread the next chunk's inputs are read into
// registers while the current one's reverse walk runs. Per-block partials (dB/dC per tile
// and step when variable, else per channel; dA per channel; dD, ddelta_bias
// per channel) go to scratch, and ssm_bwd_finalize sums them in a fixed
// order: no atomics, bitwise reproducible. Cost: three exps per element (phase 1, recompute,
// reverse); two when the training forward saved the checkpoints (no phase 1).
#pragma once

#include "ssm/bwd/bwd_chunk.cuh"

namespace ssmtune_kernels {

// The backward over the chunks [j_begin, j_end) of one (batch, tile): phase
// 1 (checkpoints), phase 2 (reverse), per-block results. Sequential: the
// whole sequence, from h0 (or 0) and dlast (or 0). kSegmented (multipass
// kernel C): segment blockIdx.z, from the state at its start and the
// adjoint carry into its end that the combine kernel left in the carries;
// its partials go to row (b, segment), dh0 from segment 0.
template <typename Tr, bool kSegmented>
__device__ __forceinline__ void bwd_chunks(const SsmBwdParams& p) {
  static_assert(ChunkLayoutChecks<Tr>::kOk, "");
  using AccT = typename Tr::AccT;
  using CS = ChannelStates<Tr>;
  using Ch = ChunkChains<Tr>;
  constexpr int kPer = Ch::kPer, kChan = Ch::kChan, kCount = Ch::kCount;
  constexpr int kGroups = Tr::kChunk / 4;
  constexpr BwdSmemLayout L =
      bwd_smem_layout(Tr::kN, Tr::kChunk, Tr::kDStep, Tr::kNSplit, Tr::kVarB, Tr::kVarC,
                      static_cast<int>(sizeof(AccT)), Tr::kChan);
  extern __shared__ float4 smem_raw[];
  float* smem = reinterpret_cast<float*>(smem_raw);
  AccT* hist = reinterpret_cast<AccT*>(smem + L.hist);
  const SsmFwdParams& f = p.f;

  const Tile tile = make_tile<Tr>(f, blockIdx.x, blockIdx.y);
  const int c = ChunkLanes<Tr>::channel(), s = ChunkLanes<Tr>::split();
  const int x = StateSlots<Tr>::perm(c);  // this lane's slot permutation
  // Channel i of this thread: whether it is real, and its index (channels
  // past the tile read channel d0 and write nothing).
  bool active[kChan];
  long long chan_d[kChan];
#pragma unroll
  for (int i = 0; i < kChan; ++i) {
    active[i] = Ch::channel(c, i) < tile.nd;
    chan_d[i] = tile.d0 + (active[i] ? Ch::channel(c, i) : 0);
  }
  // Chain q's state, and whether it is a real one.
  auto state_of = [&](int q) { return CS::state(s, q % kPer, x); };
  auto real = [&](int q) { return active[q / kPer] && state_of(q) < Tr::kN; };
  const long long b = tile.b;
  const long long dim = f.dim;
  const int n_chunks = p.n_chunks;
  const int seg = kSegmented ? static_cast<int>(blockIdx.z) : 0;
  const int j_begin = kSegmented ? seg * p.seg_chunks : 0;
  const int j_end = kSegmented ? min(j_begin + p.seg_chunks, n_chunks) : n_chunks;
  const long long row = kSegmented ? b * p.segments + seg : b;  // partials' row
  // Multipass carries [(row, n, d)]: 3 = h at the segment's start, 4 = the
  // adjoint carry into its end.
  const AccT* carries = static_cast<const AccT*>(p.carries);
  const long long carry_kind = static_cast<long long>(f.batch) * p.segments * Tr::kN * dim;
  auto carry_index = [&](int kind, int q) {
    return kind * carry_kind + (row * Tr::kN + state_of(q)) * dim + chan_d[q / kPer];
  };

  CS cs[kChan];
#pragma unroll
  for (int i = 0; i < kChan; ++i) cs[i].load(f, static_cast<int>(chan_d[i]), s, active[i], x);
  BwdAcc<Tr> acc;
#pragma unroll
  for (int q = 0; q < kCount; ++q) {
    const long long d = chan_d[q / kPer];
    const int n = state_of(q);
    acc.a_true[q] = real(q) ? f.A[d * f.A_dim_stride + n] : 0.0f;
    acc.r[q] = 0;
    if constexpr (kSegmented) {
      if (real(q)) acc.r[q] = carries[carry_index(4, q)];
    } else if constexpr (Tr::kDLast) {
      if (real(q)) acc.r[q] = p.dlast[b * p.dlast_batch_stride + d * p.dlast_dim_stride + n];
    }
    acc.dA[q] = 0;
    if constexpr (!Tr::kVarB) acc.dB[q] = 0;
    if constexpr (!Tr::kVarC) acc.dC[q] = 0;
  }
  AccT* ckpt = static_cast<AccT*>(p.ckpt);
  // ckpt slot of the state entering chunk j >= 1, chain q: ((b, j - 1, n), d).
  auto ckpt_index = [&](int j, int q) {
    return bwd_ckpt_index(b, j, state_of(q), chan_d[q / kPer], n_chunks, Tr::kN, dim);
  };
  // h at the segment's start (the combine's result).
  AccT h[kCount];
  auto start_state = [&] {
    if constexpr (kSegmented) {
#pragma unroll
      for (int q = 0; q < kCount; ++q) h[q] = real(q) ? carries[carry_index(3, q)] : AccT(0);
    } else {
#pragma unroll
      for (int i = 0; i < kChan; ++i) {
        AccT hi[kPer], unused[kPer];
        CS::init(f, tile.b, static_cast<int>(chan_d[i]), s, active[i], hi, unused, x);
#pragma unroll
        for (int k = 0; k < kPer; ++k) h[i * kPer + k] = hi[k];
      }
    }
  };

  // Up to 4 states per thread, the next chunk's rows are read into
  // registers while this one runs (H200, (8,1536,2048,16) bf16 with the
  // block's flags: 1.51 -> 1.18 ms); with more states per thread the
  // registers they hold cost resident blocks (dstate 32: 2.70 -> 3.56 ms),
  // and each chunk is read when it is staged.
  constexpr bool kReadAhead = kPer <= 4;

  // Phase 1: the forward over every chunk but the last, checkpoints only
  // (unless they are given).
  start_state();
  const bool phase1 = p.ckpt_ready == 0 && j_begin + 1 < j_end;
  ChunkStage<BwdNoC<Tr>> ahead1;
  if (kReadAhead && phase1) ahead1.load(f, tile, j_begin * Tr::kChunk, Tr::kChunk);
  for (int j = j_begin; phase1 && j + 1 < j_end; ++j) {
    __syncthreads();
    if constexpr (kReadAhead) {
      ahead1.commit(f, tile, Tr::kChunk, smem, L.chunk_nc);
      if (j + 2 < j_end) ahead1.load(f, tile, (j + 1) * Tr::kChunk, Tr::kChunk);
    } else {
      ChunkStage<BwdNoC<Tr>>::stream(f, tile, j * Tr::kChunk, Tr::kChunk, smem, L.chunk_nc,
                                     threadIdx.x, blockDim.x);
    }
    __syncthreads();
    bwd_forward_chunk<Tr>(cs, h, c, s, x, Tr::kChunk, smem, L.chunk_nc, nullptr);
#pragma unroll
    for (int q = 0; q < kCount; ++q)
      if (real(q)) ckpt[ckpt_index(j + 1, q)] = h[q];
  }

  // Phase 2: the chunks in reverse (chunk j - 1's rows read ahead).
  AccT part_d = 0, part_bias = 0;  // thread c < kDStep: channel c's sums
  auto chunk_len = [&](int j) { return min(Tr::kChunk, f.seqlen - j * Tr::kChunk); };
  ChunkStage<Tr> ahead;
  DyStage<Tr> ahead_dy;
  if constexpr (kReadAhead) {
    ahead.load(f, tile, (j_end - 1) * Tr::kChunk, chunk_len(j_end - 1));
    ahead_dy.load(p, tile, (j_end - 1) * Tr::kChunk, chunk_len(j_end - 1));
  }
  // h = the state entering chunk jj (its checkpoint, or the start state).
  auto load_state = [&](int jj) {
    if (jj == j_begin) {
      start_state();
    } else {
#pragma unroll
      for (int q = 0; q < kCount; ++q) h[q] = real(q) ? ckpt[ckpt_index(jj, q)] : AccT(0);
    }
  };
  // The state entering a chunk is read as soon as h is free: once the
  // previous chunk's forward is done (its reverse walk reads the history,
  // not h), so the loads are in flight across that reverse walk, the
  // writes and the staging. H200, saved states, against reading it at the
  // chunk's top: (4,5120,8192,16) bf16 with the block's flags 7.11 -> 6.21
  // ms, (8,1536,2048,16) fp32 0.797 -> 0.771, bf16 with the flags (3
  // blocks an SM) 0.930 -> 0.940. Where fp32 rows are read ahead at 4
  // blocks of 128 threads (128 registers), h held across the walk spills:
  // there it is read at the chunk's top. The next chunk's rows are read
  // once this chunk's forward is done, so the registers they take are not
  // held across it (run AG: (8,1536,2048,16) bf16 0.998 -> 0.985 ms).
  constexpr bool kEarlyState =
      !(kReadAhead && sizeof(typename Tr::InT) == 4 && Tr::kMinBlocks * Tr::kThreads >= 512);
  if constexpr (kEarlyState) load_state(j_end - 1);
  for (int j = j_end - 1; j >= j_begin; --j) {
    const int t0 = j * Tr::kChunk;
    const int len = chunk_len(j);
    if constexpr (!kEarlyState) load_state(j);
    __syncthreads();  // the previous chunk's smem is consumed
    if constexpr (kReadAhead) {
      ahead.commit(f, tile, len, smem, L.chunk);
      ahead_dy.commit(p, tile, t0, len, smem + L.dy, L.chunk.row);
    } else {
      ChunkStage<Tr>::stream(f, tile, t0, len, smem, L.chunk, threadIdx.x, blockDim.x);
      bwd_stage_dy<Tr>(p, tile, t0, len, smem + L.dy, L.chunk.row);
    }
    __syncthreads();
    bwd_forward_chunk<Tr>(cs, h, c, s, x, len, smem, L.chunk, hist);
    if (j > j_begin) {
      if constexpr (kEarlyState) load_state(j - 1);
      if constexpr (kReadAhead) {
        ahead.load(f, tile, t0 - Tr::kChunk, Tr::kChunk);
        ahead_dy.load(p, tile, t0 - Tr::kChunk, Tr::kChunk);
      }
    }
    bwd_reverse_chunk<Tr>(p, tile, cs, acc, c, s, x, t0, len, smem, L, hist);
    __syncthreads();
    bwd_write_chunk<Tr>(p, tile, t0, len, smem, L);
    __syncthreads();
    if (static_cast<int>(threadIdx.x) < tile.nd) {
      const int groups = (len + 3) / 4;
      for (int gi = 0; gi < groups; ++gi) {
        part_d += smem[L.chan + threadIdx.x * kGroups + gi];
        part_bias += smem[L.chan + (Tr::kDStep + threadIdx.x) * kGroups + gi];
      }
    }
  }

  // Per-block results: dh0 directly, the rest as partials for the finalize.
#pragma unroll
  for (int q = 0; q < kCount; ++q) {
    if (!real(q)) continue;
    const long long d = chan_d[q / kPer];
    const int n = state_of(q);
    const long long rdn = (row * dim + d) * Tr::kN + n;
    if constexpr (Tr::kH0)
      if (seg == 0)
        p.dh0[b * p.dh0_batch_stride + d * p.dh0_dim_stride + n] = static_cast<float>(acc.r[q]);
    p.part_a[rdn] = static_cast<float>(acc.dA[q]);
    if constexpr (!Tr::kVarB) p.part_b[rdn] = static_cast<float>(acc.dB[q]);
    if constexpr (!Tr::kVarC) p.part_c[rdn] = static_cast<float>(acc.dC[q]);
  }
  if (static_cast<int>(threadIdx.x) < tile.nd) {
    const long long rd = row * dim + tile.d0 + threadIdx.x;
    if constexpr (Tr::kHasD) p.part_d[rd] = static_cast<float>(part_d);
    if constexpr (Tr::kHasBias) p.part_bias[rd] = static_cast<float>(part_bias);
  }
}

template <typename Tr>
__global__ void __launch_bounds__(Tr::kThreads, Tr::kMinBlocks)
    ssm_bwd_sequential(const SsmBwdParams p) {
  bwd_chunks<Tr, false>(p);
}

}  // namespace ssmtune_kernels
