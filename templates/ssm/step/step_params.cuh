// Parameters of the decode-step kernel (mamba_ssm's selective_state_update:
// one token, the state updated in place), shared by host and device code
// (plain C++: the host compiler includes this file too). Channels are
// (head, p) with p < headdim; Mamba-1 is one head of headdim = d_inner.
// Strides are in elements, 64-bit, and may be 0 (a broadcast input).
#pragma once

namespace ssmtune_kernels {

struct SsmStepParams {
  int batch;
  int heads;
  int headdim;
  int dstate;
  int heads_per_group;  // head h reads B/C group h / heads_per_group

  // state: (state rows, heads, headdim, dstate), the state dtype; read and
  // written in place. Row b, or state_indices[b] with indices.
  void* state;
  long long state_batch_stride, state_head_stride, state_dim_stride, state_dstate_stride;
  // x, dt, z: (batch, heads, headdim), the input dtype; z optional.
  const void* x;
  long long x_batch_stride, x_head_stride, x_dim_stride;
  const void* dt;
  long long dt_batch_stride, dt_head_stride, dt_dim_stride;
  const void* z;
  long long z_batch_stride, z_head_stride, z_dim_stride;
  // out: (batch, heads, headdim), the input dtype.
  void* out;
  long long out_batch_stride, out_head_stride, out_dim_stride;
  // A: (heads, headdim, dstate) fp32.
  const float* A;
  long long A_head_stride, A_dim_stride, A_dstate_stride;
  // B, C: (batch, groups, dstate), the input dtype.
  const void* B;
  long long B_batch_stride, B_group_stride, B_dstate_stride;
  const void* C;
  long long C_batch_stride, C_group_stride, C_dstate_stride;
  // D, dt_bias: (heads, headdim), fp32 or the input dtype (*_in_dtype = 1);
  // optional.
  const void* D;
  long long D_head_stride, D_dim_stride;
  int D_in_dtype;
  const void* dt_bias;
  long long dt_bias_head_stride, dt_bias_dim_stride;
  int dt_bias_in_dtype;
  // state_indices: (batch,) int32 or int64 (indices_64 = 1), optional: the
  // state row of batch entry b; a negative one is padding (out = 0, no
  // state touched).
  const void* state_indices;
  int indices_64;
  // 1 when the dstate stride of the state is 1 and every row (base address
  // and the other strides) starts on the kernel's vector of states; the
  // same for A (a_vec). The kernel then moves a thread's states as one
  // vector.
  int state_vec;
  int a_vec;
};

}  // namespace ssmtune_kernels
