// The fp64 reference of the forward scan on the GPU, for shapes too large
// for the CPU reference: one thread per (batch, channel), the plainest loop,
// everything in double. Reads the same (already rounded) inputs as the
// candidate kernels; writes y (before z), out_z and the last state in fp64.
#pragma once

#include "ssm/fwd_math.cuh"

namespace ssmtune_kernels {

struct SsmRefParams {
  SsmFwdParams p;  // inputs as for the candidates (outputs unused)
  int var_b, var_c, has_d, has_z, has_bias, softplus, has_h0;
  double* y;           // (batch, dim, seqlen), contiguous; includes D * u
  double* out_z;       // (batch, dim, seqlen) when has_z
  double* last_state;  // (batch, dim, dstate) contiguous
};

template <typename InT>
__global__ void ssm_fwd_reference(const SsmRefParams r) {
  const SsmFwdParams& p = r.p;
  const long long row = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= static_cast<long long>(p.batch) * p.dim) return;
  const int b = static_cast<int>(row / p.dim), d = static_cast<int>(row % p.dim);
  const int g = d / p.dim_per_group;
  double* y = r.y + row * p.seqlen;
  for (int t = 0; t < p.seqlen; ++t) y[t] = 0;
  for (int n = 0; n < p.dstate; ++n) {
    const double a = p.A[d * p.A_dim_stride + n];
    double h = r.has_h0 ? p.h0[b * p.h0_batch_stride + d * p.h0_dim_stride + n] : 0.0;
    for (int t = 0; t < p.seqlen; ++t) {
      double dt = to_float(
          static_cast<const InT*>(p.delta)[b * p.delta_batch_stride + d * p.delta_dim_stride + t]);
      if (r.has_bias) dt += p.delta_bias[d];
      if (r.softplus) dt = dt <= 20.0 ? log1p(exp(dt)) : dt;
      const double u =
          to_float(static_cast<const InT*>(p.u)[b * p.u_batch_stride + d * p.u_dim_stride + t]);
      const double bv =
          r.var_b
              ? to_float(static_cast<const InT*>(
                    p.B)[b * p.B_batch_stride + g * p.B_group_stride + n * p.B_dstate_stride + t])
              : static_cast<const float*>(p.B)[d * p.B_batch_stride + n];
      const double cv =
          r.var_c
              ? to_float(static_cast<const InT*>(
                    p.C)[b * p.C_batch_stride + g * p.C_group_stride + n * p.C_dstate_stride + t])
              : static_cast<const float*>(p.C)[d * p.C_batch_stride + n];
      h = exp(dt * a) * h + dt * bv * u;
      y[t] += cv * h;
    }
    r.last_state[row * p.dstate + n] = h;
  }
  for (int t = 0; t < p.seqlen; ++t) {
    const double u =
        to_float(static_cast<const InT*>(p.u)[b * p.u_batch_stride + d * p.u_dim_stride + t]);
    if (r.has_d) y[t] += static_cast<double>(p.D[d]) * u;
    if (r.has_z) {
      const double z =
          to_float(static_cast<const InT*>(p.z)[b * p.z_batch_stride + d * p.z_dim_stride + t]);
      r.out_z[row * p.seqlen + t] = y[t] * z / (1.0 + exp(-z));
    }
  }
}

}  // namespace ssmtune_kernels
