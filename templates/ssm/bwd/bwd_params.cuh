// Parameters of the backward selective-scan kernels, shared by host and
// device code (plain C++), and the layouts both sides compute with the same
// constexpr functions: the shared memory of a block and the scratch buffer
// of one call. Strides are in elements, 64-bit; last dimensions contiguous.
#pragma once

#include "ssm/fwd_params.cuh"

namespace ssmtune_kernels {

struct SsmBwdParams {
  // The forward's inputs (u, delta, A, B, C, D, delta_bias, z, h0 and their
  // strides, sizes), with `out` the saved forward output y (pre-gate, incl.
  // D u; read, needed with z). f.vec4 covers every row below as well.
  SsmFwdParams f;
  // dout (batch, dim, seqlen), input dtype: gradient of out_z with z, else of out.
  const void* dout;
  long long dout_batch_stride, dout_dim_stride;
  // dlast (batch, dim, dstate) fp32, optional: gradient of last_state.
  const float* dlast;
  long long dlast_batch_stride, dlast_dim_stride;
  // Outputs in the input dtype (batch, dim, seqlen): du, ddelta, dz (with z).
  void* du;
  long long du_batch_stride, du_dim_stride;
  void* ddelta;
  long long ddelta_batch_stride, ddelta_dim_stride;
  void* dz;
  long long dz_batch_stride, dz_dim_stride;
  // dB, dC: variable (batch, groups, dstate, seqlen) input dtype, or constant
  // (dim, dstate) fp32 (batch stride = dim stride, as in the forward).
  void* dB;
  long long dB_batch_stride, dB_group_stride, dB_dstate_stride;
  void* dC;
  long long dC_batch_stride, dC_group_stride, dC_dstate_stride;
  // fp32: dA (dim, dstate); dD, ddelta_bias (dim,), optional; dh0 (batch,
  // dim, dstate), optional.
  float* dA;
  long long dA_dim_stride;
  float* dD;
  float* ddelta_bias;
  float* dh0;
  long long dh0_batch_stride, dh0_dim_stride;

  // Scratch (one buffer, carved by bwd_scratch_layout), filled by the launcher.
  // Rows r = b * segments + segment (segments = 1 for the sequential kernel).
  void* ckpt;        // AccT: state entering chunk j >= 1, [(b, j - 1, n, d)]
  void* carries;     // multipass, AccT: 5 arrays [(r, n, d)]: prod a, h from 0,
                     // reverse carry from 0 (kernel A); h at the segment's
                     // start, adjoint carry into its end (kernel B)
  float* part_b;     // variable: [(b, tile, n, t)]; constant: [(r, d, n)]
  float* part_c;     // likewise
  float* part_a;     // [(r, d, n)]
  float* part_d;     // [(r, d)]
  float* part_bias;  // [(r, d)]; state groups: [((slice * batch + b), d)]
  // Warp scan with its states split over n_split blocks (state groups),
  // AccT: per (group, b, d, t) the group's sums over its states of g B
  // (part_sb) and of A g a h_{t-1} (part_sa), [((group * batch + b) * dim
  // + d) * seqlen + t], from which ssm_bwd_state_sum forms du and ddelta.
  void* part_sb;
  void* part_sa;
  int n_chunks;  // ceil(seqlen / chunk)
  int tiles_per_group;
  int segments;  // multipass: segments of seg_chunks chunks (the last may be shorter)
  int seg_chunks;
  // 1 when ckpt already holds every chunk's starting state (saved by the
  // forward, or by an earlier backward of the same inputs): phase 1 is
  // skipped (a third of the exps, and a read of u, delta and B).
  int ckpt_ready;
  // Rows of ddelta_bias partials per row r: the state sum's time slices
  // (bwd_state_sum_slices), 1 otherwise.
  int bias_slices;
};

// Where the state entering chunk j (1 <= j < n_chunks) of (b, d), state n,
// lives in the checkpoint buffer (AccT elements): [(b, j - 1, n, d)].
SSMTUNE_HD constexpr long long bwd_ckpt_index(long long b, long long j, long long n, long long d,
                                              long long n_chunks, long long dstate, long long dim) {
  return ((b * (n_chunks - 1) + (j - 1)) * dstate + n) * dim + d;
}

// Smallest power of two >= x (x >= 1).
SSMTUNE_HD constexpr int bwd_pow2_ceil(int x) {
  int p = 1;
  while (p < x) p *= 2;
  return p;
}

// Per thread and group of 4 timesteps, the variable dB/dC contributions of
// its states: (kind, state slot, step) values, padded to a power of two
// for the lane reduce-scatter (0 without variable B or C).
SSMTUNE_HD constexpr int bwd_red_values(int dstate, int n_split, bool var_b, bool var_c) {
  const int nvar = (var_b ? 1 : 0) + (var_c ? 1 : 0);
  const int per = (dstate + n_split - 1) / n_split;
  return nvar == 0 ? 0 : bwd_pow2_ceil(nvar * per * 4);
}

// Shared memory of the sequential backward block, in floats. The first
// part is the forward's chunk layout (dt, u rows per channel; B, C rows per
// state). Then per channel: dy, and the two per-step sums over the states
// (sb = sum_n g B, sa = sum_n g A a h_{t-1}); two buffers of per-warp dB/dC
// sums of one group of 4 timesteps (warps x n_split x red values); per
// (channel, group of 4) partial sums of dD and ddelta_bias; and the
// recomputed a_t h_{t-1} of every (step, state, thread), AccT.
struct BwdSmemLayout {
  ChunkSmemLayout chunk;     // staged inputs of phase 2 (with C)
  ChunkSmemLayout chunk_nc;  // phase 1 (no C rows)
  int dy, sb, sa;            // channel rows (chunk.row long)
  int red, red_buf;          // offset, floats per buffer
  int chan;                  // 2 * d_step * groups floats
  int hist;                  // offset in floats (16-byte aligned)
  int floats;                // total
};

SSMTUNE_HD constexpr BwdSmemLayout bwd_smem_layout(int dstate, int chunk, int d_step, int n_split,
                                                   bool var_b, bool var_c, int acc_bytes,
                                                   int chan = 1) {
  BwdSmemLayout l{};
  l.chunk = chunk_smem_layout(dstate, chunk, d_step, var_b, var_c);
  l.chunk_nc = chunk_smem_layout(dstate, chunk, d_step, var_b, false);
  const int rows = d_step * l.chunk.row;
  l.dy = l.chunk.floats;
  l.sb = l.dy + rows;
  l.sa = l.sb + rows;
  l.red = l.sa + rows;
  const int warps = (d_step * n_split / chan + 31) / 32;
  l.red_buf = warps * n_split * bwd_red_values(dstate, n_split, var_b, var_c);
  l.chan = l.red + 2 * l.red_buf;
  const int per = (dstate + n_split - 1) / n_split;
  l.hist = l.chan + 2 * d_step * (chunk / 4);
  l.hist = (l.hist + 3) / 4 * 4;
  l.floats = l.hist + chunk * per * d_step * n_split * (acc_bytes / 4);
  return l;
}

struct BwdScanSmemLayout {
  int b, c;                 // B, C rows (chunk floats each per state)
  int red, red_buf;         // offset, floats per buffer
  int a, a_true;            // d_step * dstate floats each
  int h, r;                 // d_step * dstate AccT each, twice with several warps a channel
  int acc_a, acc_b, acc_c;  // d_step * warps * dstate AccT each (a warp's sums)
  int tot;                  // 2 * d_step * warps * 4 AccT: warp totals of the scans
  int wsum;                 // d_step * warps * 2 AccT: a warp's dD, ddelta_bias sums
  int floats;
};

// Shared memory of the warp-scan backward block, in floats: the chunk's
// variable B and C rows of the block's states (ceil(dstate / n_split) of
// them with the states split over n_split blocks; row k * chunk + t); two buffers of the channels'
// variable dB/dC values of one state (buffer, channel, kind, t); per
// (channel, state): A pre-scaled and A, then AccT: the state entering the
// chunk and the adjoint carry (double-buffered by chunk with several warps a
// channel: the chunk's warps read one while one of them writes the next);
// per (channel, warp, state) the sums of dA, constant dB and constant dC;
// the warps' scan totals (two buffers: one barrier per state) and, at the
// end, their dD and ddelta_bias sums.
SSMTUNE_HD constexpr BwdScanSmemLayout bwd_scan_smem_layout(int dstate, int chunk, int d_step,
                                                            int warps, bool var_b, bool var_c,
                                                            int acc_bytes, int n_split = 1) {
  BwdScanSmemLayout l{};
  const int rows = (dstate + n_split - 1) / n_split * chunk;
  const int kinds = (var_b ? 1 : 0) + (var_c ? 1 : 0);
  const int per = d_step * dstate;
  const int words = acc_bytes / 4;
  const int carried = per * words * (warps > 1 ? 2 : 1);
  const int acc = per * warps * words;
  l.b = 0;
  l.c = l.b + (var_b ? rows : 0);
  l.red = l.c + (var_c ? rows : 0);
  l.red_buf = d_step > 1 ? d_step * kinds * chunk : 0;  // one channel: written directly
  l.a = l.red + 2 * l.red_buf;
  l.a_true = l.a + per;
  l.h = (l.a_true + per + 1) / 2 * 2;
  l.r = l.h + carried;
  l.acc_a = l.r + carried;
  l.acc_b = l.acc_a + acc;
  l.acc_c = l.acc_b + acc;
  l.tot = l.acc_c + acc;
  l.wsum = l.tot + 2 * d_step * warps * 4 * words;
  l.floats = l.wsum + d_step * warps * 2 * words;
  return l;
}

// The scratch of one backward call, in bytes from its start (each region
// 256-byte aligned). Memory cost: multipass carries 5 * batch * segments *
// dstate * dim AccT; variable dB/dC partials batch * groups *
// tiles_per_group * dstate * seqlen fp32 each (constant: batch * segments
// * dim * dstate); dA partials batch * segments * dim * dstate; dD and
// ddelta_bias partials batch * segments * dim; the warp scan's per-group
// sums over states with its states split over state_groups > 1 blocks, 2 *
// state_groups * batch * dim * seqlen AccT; then the checkpoints, batch
// * (n_chunks - 1) * dstate * dim AccT (1/chunk of a (batch, dim, seqlen,
// dstate) tensor), which a launch given the forward's saved states does not
// need: it needs only the bytes before them (ckpt).
struct BwdScratchLayout {
  long long ckpt, carries, part_b, part_c, part_a, part_d, part_bias, part_sb, part_sa;
  long long bytes;
};

SSMTUNE_HD constexpr long long bwd_align256(long long x) { return (x + 255) / 256 * 256; }

// Bytes of the checkpoints of a backward with this chunk: the state
// entering each chunk j >= 1, batch * (n_chunks - 1) * dstate * dim AccT.
SSMTUNE_HD constexpr long long bwd_ckpt_bytes(long long batch, long long dim, long long dstate,
                                              long long seqlen, long long chunk, int acc_bytes) {
  return batch * ((seqlen + chunk - 1) / chunk - 1) * dstate * dim * acc_bytes;
}

// Threads per block of ssm_bwd_state_sum, and the timesteps of one block:
// one per (channel, batch, time slice), four timesteps a thread.
constexpr int kBwdStateSumThreads = 256;
constexpr int kBwdStateSumSpan = 4 * kBwdStateSumThreads;

// Time slices of the warp scan's state sum (grid z): 1 without state groups.
SSMTUNE_HD constexpr long long bwd_state_sum_slices(long long seqlen, long long state_groups) {
  return state_groups > 1 ? (seqlen + kBwdStateSumSpan - 1) / kBwdStateSumSpan : 1;
}

SSMTUNE_HD constexpr BwdScratchLayout bwd_scratch_layout(
    long long batch, long long dim, long long groups, long long dstate, long long seqlen, int chunk,
    int d_step, bool var_b, bool var_c, bool has_d, bool has_bias, int acc_bytes,
    long long segments = 1, long long state_groups = 1) {
  BwdScratchLayout l{};
  const long long tiles = groups * tiles_per_group(static_cast<int>(dim / groups), d_step);
  const long long rows = batch * segments;
  const long long var = batch * tiles * dstate * seqlen * 4;
  const long long con = rows * dim * dstate * 4;
  long long at = 0;
  l.carries = at;
  at += bwd_align256(segments > 1 ? 5 * rows * dstate * dim * acc_bytes : 0);
  l.part_b = at;
  at += bwd_align256(var_b ? var : con);
  l.part_c = at;
  at += bwd_align256(var_c ? var : con);
  l.part_a = at;
  at += bwd_align256(con);
  l.part_d = at;
  at += bwd_align256(has_d ? rows * dim * 4 : 0);
  l.part_bias = at;
  at += bwd_align256(has_bias ? rows * bwd_state_sum_slices(seqlen, state_groups) * dim * 4 : 0);
  const long long sums = state_groups > 1 ? state_groups * batch * dim * seqlen * acc_bytes : 0;
  l.part_sb = at;
  at += bwd_align256(sums);
  l.part_sa = at;
  at += bwd_align256(sums);
  // Last, so that a launch given saved states needs only the first l.ckpt bytes.
  l.ckpt = at;
  at += bwd_align256(bwd_ckpt_bytes(batch, dim, dstate, seqlen, chunk, acc_bytes));
  l.bytes = at;
  return l;
}

// Threads per block of the finalize kernel, and its grid's y (one task each:
// dB, dC, dA, dD, ddelta_bias); threads per block of the multipass combine.
constexpr int kBwdFinalizeThreads = 256;
constexpr int kBwdCombineThreads = 256;
constexpr int kBwdFinalizeTasks = 5;
// The longest chunk a backward kernel takes (host check and traits alike);
// the saved states' intervals are chunks, so the same bound.
constexpr int kBwdMaxChunk = 4096;

}  // namespace ssmtune_kernels
