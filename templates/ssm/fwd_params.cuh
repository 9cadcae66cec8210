// Parameters of every forward selective-scan kernel, shared by host and
// device code (plain C++: the host compiler includes this file too, so the
// layout agrees by construction). Strides are in elements, 64-bit; the last
// dimension of every tensor is contiguous.
#pragma once

namespace ssmtune_kernels {

struct SsmFwdParams {
  // Sizes.
  int batch;
  int dim;
  int seqlen;
  int dstate;
  int groups;         // B/C groups; channel d uses group d / (dim / groups)
  int dim_per_group;  // dim / groups

  // u, delta: (batch, dim, seqlen), input dtype.
  const void* u;
  long long u_batch_stride, u_dim_stride;
  const void* delta;
  long long delta_batch_stride, delta_dim_stride;
  // A: (dim, dstate) fp32.
  const float* A;
  long long A_dim_stride;
  // B, C: variable (batch, groups, dstate, seqlen) in the input dtype, or
  // constant (dim, dstate) fp32 with B_batch_stride as the dim stride; the
  // kernel's template flags say which.
  const void* B;
  long long B_batch_stride, B_group_stride, B_dstate_stride;
  const void* C;
  long long C_batch_stride, C_group_stride, C_dstate_stride;
  // Optional fp32 (dim,) vectors; null when absent.
  const float* D;
  const float* delta_bias;
  // z: (batch, dim, seqlen), input dtype; optional.
  const void* z;
  long long z_batch_stride, z_dim_stride;
  // Outputs (batch, dim, seqlen), input dtype: out = y; out_z = y * silu(z).
  void* out;
  long long out_batch_stride, out_dim_stride;
  void* out_z;
  long long out_z_batch_stride, out_z_dim_stride;
  // States (batch, dim, dstate) fp32: initial (optional) and last (optional).
  const float* h0;
  long long h0_batch_stride, h0_dim_stride;
  float* last_state;
  long long last_state_batch_stride, last_state_dim_stride;

  // Scratch owned by the launcher, sized for the config launched.
  // Multi-pass and look-back: per (batch, dim, dstate, chunk) carries; a
  // warpscan over n_split state groups: per (group, batch, dim, t) the
  // group's y, AccT, [((group * batch + b) * dim + d) * seqlen + t].
  void* carries;
  unsigned* flags;         // look-back: one status word per (batch, d-tile, chunk)
  unsigned* tile_counter;  // look-back: dynamic tile index, zeroed per launch
  int n_chunks;            // chunks of K timesteps: ceil(seqlen / K)
  int segments;            // split: sequence segments (grid z), each of seg_chunks
  int seg_chunks;          // chunks (the last one may have fewer)
  // 1 when every (batch, dim, group, dstate) row of u, delta, variable B/C,
  // z, out and out_z starts on a multiple of 4 elements (base address and
  // strides), so 4 consecutive timesteps load and store as one vector.
  int vec4;
  // 1 when every row of u, delta and variable B/C starts on a 16-byte
  // boundary (base address and strides), so rows copy in 16-byte pieces.
  int align16;

  // Training: where the forward saves, fp32, the state entering every
  // chunk j >= 1 of the backward's chunk (1 << states_shift timesteps), in
  // the backward's checkpoint layout [(b, j - 1, n, d)] (bwd_ckpt_index),
  // so the backward does not recompute them. Null: nothing saved. Only the
  // saving variants of the staged-chunk kernels (sequential, pipelined,
  // split, multipass, look-back) and of the warp scan (compiled with
  // SSMTUNE_FWD_SAVES_STATES=1) write them; the launcher checks and picks
  // the variant.
  float* states;
  int states_shift;
};

}  // namespace ssmtune_kernels

#if defined(__CUDACC__)
#define SSMTUNE_HD __host__ __device__
#else
#define SSMTUNE_HD
#endif

namespace ssmtune_kernels {

// Shared memory of an sm_90 SM (H100/H200): 228 KiB for its resident blocks,
// 1 KiB of it reserved per block, at most 227 KiB for one block.
constexpr int kSm90SmemPerSm = 228 * 1024;
constexpr int kSm90SmemReservedPerBlock = 1024;
constexpr int kSm90SmemPerBlock = 227 * 1024;

// Shared-memory layout of the staged-chunk kernels (sequential, multipass,
// lookback), in floats; host and device compute it with the same function.
// Per channel: a dt row (overwritten by y once a group of 4 timesteps is
// consumed) and a u row; per state: a B row and a C row. Rows are read as
// float4 (4 timesteps) and padded by 4 floats, so that the distinct rows
// that the lanes of a quarter-warp read start on different banks.
struct ChunkSmemLayout {
  int row;          // channel row length
  int bc_row;       // state row length
  int dt, u, b, c;  // offsets
  int floats;       // total
};

SSMTUNE_HD constexpr ChunkSmemLayout chunk_smem_layout(int dstate, int chunk, int d_step,
                                                       bool var_b, bool var_c) {
  ChunkSmemLayout l{};
  l.row = chunk + 4;
  l.bc_row = chunk + 4;
  l.dt = 0;
  l.u = l.dt + d_step * l.row;
  l.b = l.u + d_step * l.row;
  l.c = l.b + (var_b ? dstate * l.bc_row : 0);
  l.floats = l.c + (var_c ? dstate * l.bc_row : 0);
  return l;
}

// The pipelined kernel's producer threads, launched after its compute
// threads: two warps, or four when the per-(channel, step) work they do
// besides copying is heavy (softplus on delta, the z gate): that work is
// theirs alone, so more of them keep it off the compute warps' path.
SSMTUNE_HD constexpr int pipe_producer_threads(bool has_z, bool softplus) {
  return has_z || softplus ? 128 : 64;
}

// Shared memory of the pipelined kernel, in bytes: `stages` chunk layouts
// (float rows, as above, then with z one z row per channel at `z`) in a
// ring; when the inputs need converting (halves, or a delta transform), two
// landing slots that receive a chunk's raw rows as they are in memory (dt
// and u per channel, then B and C per state, then z per channel, `chunk`
// elements each, unpadded); then a table of 16 bytes per row (its global
// start and where it lands) and one of 24 bytes per channel (its output
// rows, D and delta_bias), filled once per block.
// Whether the pipelined kernel converts its rows on the way (halves, or a
// delta transform) and so needs the landing slots; fp32 rows that need no
// transform land in the float stages directly.
SSMTUNE_HD constexpr bool pipe_converts(int in_bytes, bool has_bias, bool softplus) {
  return in_bytes != 4 || has_bias || softplus;
}

struct PipeSmemLayout {
  int stage_floats;  // one stage
  int z;             // float offset of the z rows in a stage (with z)
  int land_offset;   // bytes from the start; 0 when nothing lands raw
  int land_bytes;    // one landing slot
  int table_offset;  // bytes from the start
  int outs_offset;   // bytes from the start
  int rows;          // rows copied per chunk
  int bytes;         // total
};

SSMTUNE_HD constexpr PipeSmemLayout pipe_smem_layout(int dstate, int chunk, int d_step, bool var_b,
                                                     bool var_c, bool has_z, int stages,
                                                     int in_bytes, bool convert) {
  PipeSmemLayout l{};
  const ChunkSmemLayout c = chunk_smem_layout(dstate, chunk, d_step, var_b, var_c);
  l.z = c.floats;
  l.stage_floats = c.floats + (has_z ? d_step * c.row : 0);
  l.rows = 2 * d_step + (var_b ? dstate : 0) + (var_c ? dstate : 0) + (has_z ? d_step : 0);
  l.land_offset = convert ? 4 * stages * l.stage_floats : 0;
  l.land_bytes = convert ? l.rows * chunk * in_bytes : 0;
  l.table_offset = 4 * stages * l.stage_floats + 2 * l.land_bytes;
  l.outs_offset = l.table_offset + 16 * l.rows;
  l.bytes = l.outs_offset + 24 * d_step;
  return l;
}

// Shared memory of the scan kernels (warpscan, blelloch), in bytes from the
// start: the staged B and C tiles (fp32, `chunk` steps per state, unpadded;
// absent when constant), the per-channel carried states (AccT), then the
// per-channel A rows (warpscan, fp32) or the two scan arrays of one AccT per
// thread (blelloch: a, then x), and, for a warpscan with several warps per
// channel (threads > 32 d_step), each warp's chunk totals of two states
// (a and b), double-buffered. A warpscan with a channel's states over
// n_split blocks stages the B and C rows of its ceil(dstate / n_split)
// states only. Host and kernels compute it with this function.
struct ScanSmemLayout {
  int b, c;   // B and C tiles
  int h;      // carried states, d_step x dstate AccT
  int a;      // warpscan: A rows, d_step x dstate floats; blelloch: the scan array a
  int x;      // blelloch: the scan array x; warpscan: the warps' totals (or the end of the A rows)
  int bytes;  // total
};

SSMTUNE_HD constexpr ScanSmemLayout scan_smem_layout(int dstate, int chunk, int d_step, int threads,
                                                     int acc_bytes, bool var_b, bool var_c,
                                                     bool blelloch, int n_split = 1) {
  ScanSmemLayout l{};
  const int rows = (dstate + n_split - 1) / n_split;
  l.b = 0;
  l.c = l.b + (var_b ? 4 * rows * chunk : 0);
  l.h = l.c + (var_c ? 4 * rows * chunk : 0);
  l.a = l.h + acc_bytes * d_step * dstate;
  l.x = l.a + (blelloch ? acc_bytes * threads : 4 * d_step * dstate);
  // Alignment of the AccT totals after the fp32 A rows.
  if (!blelloch) l.x = (l.x + acc_bytes - 1) / acc_bytes * acc_bytes;
  const int warp_totals = threads > 32 * d_step ? 2 * 2 * 2 * (threads / 32) * acc_bytes : 0;
  l.bytes = l.x + (blelloch ? acc_bytes * threads : warp_totals);
  return l;
}

// Shared memory of the block scan (ssm/fwd_blockscan.cuh): the carried
// states and A rows of its one channel, and two buffers of the warps' totals
// (a, b). Host and kernel compute it with this function.
struct BlockScanSmemLayout {
  int h;      // carried states, dstate AccT
  int a;      // A, pre-scaled, dstate floats
  int w;      // [2][warps] totals (a, b), AccT
  int bytes;  // total
};

SSMTUNE_HD constexpr BlockScanSmemLayout blockscan_smem_layout(int dstate, int warps,
                                                               int acc_bytes) {
  BlockScanSmemLayout l{};
  l.h = 0;
  l.a = l.h + acc_bytes * dstate;
  l.w = (l.a + 4 * dstate + acc_bytes - 1) / acc_bytes * acc_bytes;
  l.bytes = l.w + 2 * 2 * warps * acc_bytes;
  return l;
}

// Threads per block of ssm_fwd_state_sum (the warpscan's state groups' y
// added, one block per (channel, batch, time slice)) and the timesteps of
// one block (four a thread).
constexpr int kFwdStateSumThreads = 256;
constexpr int kFwdStateSumSpan = 4 * kFwdStateSumThreads;

// Time slices of ssm_fwd_state_sum (its grid z).
SSMTUNE_HD constexpr long long fwd_state_sum_slices(long long seqlen) {
  return (seqlen + kFwdStateSumSpan - 1) / kFwdStateSumSpan;
}

// Tiles of channels: tiles never straddle a B/C group, so one staged B/C
// tile serves every channel of a block.
SSMTUNE_HD constexpr int tiles_per_group(int dim_per_group, int d_step) {
  return (dim_per_group + d_step - 1) / d_step;
}

}  // namespace ssmtune_kernels
