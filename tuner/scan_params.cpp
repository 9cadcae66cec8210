// The kernel parameters both families fill alike.
#include "tuner/scan_params.h"

#include <cstdint>

namespace ssmtune {

void bc_strides(const TensorArg& a, bool variable, long long& s0, long long& s1, long long& s2) {
  s0 = a.stride[0];  // variable: batch stride; constant: dim stride
  s1 = variable ? a.stride[1] : 0;
  s2 = variable ? a.stride[2] : 0;
}

void fill_scan_inputs(const FwdProblem& p, const ScanInputs& in, ssmtune_kernels::SsmFwdParams& k) {
  k.batch = static_cast<int>(p.batch);
  k.dim = static_cast<int>(p.dim);
  k.seqlen = static_cast<int>(p.seqlen);
  k.dstate = static_cast<int>(p.dstate);
  k.groups = static_cast<int>(p.groups);
  k.dim_per_group = static_cast<int>(p.dim_per_group());
  k.u = in.u.data;
  k.u_batch_stride = in.u.stride[0];
  k.u_dim_stride = in.u.stride[1];
  k.delta = in.delta.data;
  k.delta_batch_stride = in.delta.stride[0];
  k.delta_dim_stride = in.delta.stride[1];
  k.A = static_cast<const float*>(in.A.data);
  k.A_dim_stride = in.A.stride[0];
  k.B = in.B.data;
  bc_strides(in.B, p.variable_b, k.B_batch_stride, k.B_group_stride, k.B_dstate_stride);
  k.C = in.C.data;
  bc_strides(in.C, p.variable_c, k.C_batch_stride, k.C_group_stride, k.C_dstate_stride);
  k.D = p.has_d ? static_cast<const float*>(in.D.data) : nullptr;
  k.delta_bias = p.has_delta_bias ? static_cast<const float*>(in.delta_bias.data) : nullptr;
  if (p.has_z) {
    k.z = in.z.data;
    k.z_batch_stride = in.z.stride[0];
    k.z_dim_stride = in.z.stride[1];
  }
  if (p.has_initial_state) {
    k.h0 = static_cast<const float*>(in.h0.data);
    k.h0_batch_stride = in.h0.stride[0];
    k.h0_dim_stride = in.h0.stride[1];
  }
}

bool rows_vec4(const TensorArg& a, int strides, DType dtype) {
  const auto es = static_cast<uintptr_t>(dtype_bytes(dtype));
  if (reinterpret_cast<uintptr_t>(a.data) % (4 * es) != 0) return false;
  for (int i = 0; i < strides; ++i)
    if (a.stride[i] % 4 != 0) return false;
  return true;
}

bool inputs_vec4(const FwdProblem& p, const ScanInputs& in) {
  bool vec4 = rows_vec4(in.u, 2, p.dtype) && rows_vec4(in.delta, 2, p.dtype);
  if (p.variable_b) vec4 = vec4 && rows_vec4(in.B, 3, p.dtype);
  if (p.variable_c) vec4 = vec4 && rows_vec4(in.C, 3, p.dtype);
  if (p.has_z) vec4 = vec4 && rows_vec4(in.z, 2, p.dtype);
  return vec4;
}

}  // namespace ssmtune
