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
  // constant (dim, dstate) fp32; the kernel's template flags say which.
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
  // Multi-pass and look-back: per (batch, dim, dstate, chunk) carries.
  void* carries;
  unsigned* flags;  // look-back: one status word per (batch, d-tile, chunk)
  unsigned* tile_counter;  // look-back: dynamic tile index, zeroed per launch
  int n_chunks;            // chunks of K timesteps: ceil(seqlen / K)
};

}  // namespace ssmtune_kernels
