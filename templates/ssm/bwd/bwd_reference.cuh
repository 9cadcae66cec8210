// The fp64 reference of the backward on the GPU, for shapes too large for
// the CPU reference: the plainest reverse recurrence, everything in double.
// One thread per unit (a few channels of one batch and group) walks its
// channels one after another; what crosses units goes to per-unit or
// per-row partials that ssm_bwd_reference_reduce sums in a fixed order.
// No atomics, so two runs give the same bits.
#pragma once

#include "ssm/bwd/bwd_reference_params.cuh"

namespace ssmtune_kernels {

__device__ __forceinline__ double bwd_ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

__global__ void ssm_bwd_reference_units(const BwdRefParams r) {
  const long long unit = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (unit >= r.units) return;
  const long long U = r.units, L = r.seqlen, N = r.dstate, dim = r.dim;
  const long long b = unit / (static_cast<long long>(r.groups) * r.slices);
  const long long g = unit / r.slices % r.groups;
  const long long first = g * r.dim_per_group + unit % r.slices * r.slice;
  const long long group_end = (g + 1) * r.dim_per_group;
  const long long last = first + r.slice < group_end ? first + r.slice : group_end;
  double* hs = r.hs + unit;  // element i at hs[i * U]
  double* dts = r.dts + unit;
  double* dys = r.dys + unit;
  double* part_b = r.var_b ? r.part_b + unit : nullptr;
  double* part_c = r.var_c ? r.part_c + unit : nullptr;
  const long long bc = (b * r.groups + g) * N * L;

  for (long long d = first; d < last; ++d) {
    const long long row = (b * dim + d) * L, st = (b * dim + d) * N;
    const double bias = r.has_bias ? r.delta_bias[d] : 0.0;
    const double Dv = r.has_d ? r.D[d] : 0.0;
    for (long long t = 0; t < L; ++t) {
      const double x = r.delta[row + t] + bias;
      dts[t * U] = r.softplus && x <= 20.0 ? log1p(exp(x)) : x;
      if (r.has_z) {
        const double z = r.z[row + t];
        dys[t * U] = r.dout[row + t] * z * bwd_ref_sigmoid(z);
        r.dz[row + t] = Dv * r.u[row + t];  // y accumulates here first
      } else {
        dys[t * U] = r.dout[row + t];
      }
    }
    // Forward: the states, and y where dz needs it.
    for (long long n = 0; n < N; ++n) {
      const double A = r.A[d * N + n];
      double h = r.has_h0 ? r.h0[st + n] : 0.0;
      for (long long t = 0; t < L; ++t) {
        const double dt = dts[t * U];
        const double Bv = r.var_b ? r.B[bc + n * L + t] : r.B[d * N + n];
        h = exp(dt * A) * h + dt * Bv * r.u[row + t];
        hs[(n * L + t) * U] = h;
        if (r.has_z) r.dz[row + t] += (r.var_c ? r.C[bc + n * L + t] : r.C[d * N + n]) * h;
      }
    }
    if (r.has_z) {
      for (long long t = 0; t < L; ++t) {
        const double z = r.z[row + t], s = bwd_ref_sigmoid(z);
        r.dz[row + t] = r.dout[row + t] * r.dz[row + t] * s * (1.0 + z * (1.0 - s));
      }
    }
    // Reverse: g_t = dL/dh_t = a_{t+1} g_{t+1} + C_t dy_t (+ dlast at the end).
    for (long long t = 0; t < L; ++t) {
      r.du[row + t] = Dv * dys[t * U];
      r.ddelta[row + t] = 0.0;  // dL/d(dt) accumulates here first
    }
    for (long long n = 0; n < N; ++n) {
      const double A = r.A[d * N + n];
      const double h0 = r.has_h0 ? r.h0[st + n] : 0.0;
      double carry = r.has_dlast ? r.dlast[st + n] : 0.0;
      double dA = 0, dBc = 0, dCc = 0;
      for (long long t = L - 1; t >= 0; --t) {
        const double dt = dts[t * U], dy = dys[t * U], u = r.u[row + t];
        const double Bv = r.var_b ? r.B[bc + n * L + t] : r.B[d * N + n];
        const double Cv = r.var_c ? r.C[bc + n * L + t] : r.C[d * N + n];
        const double gt = carry + Cv * dy;
        const double hprev = t > 0 ? hs[(n * L + t - 1) * U] : h0;
        const double a = exp(dt * A);
        r.du[row + t] += gt * dt * Bv;
        r.ddelta[row + t] += gt * (Bv * u + A * a * hprev);
        dA += gt * dt * a * hprev;
        const double db = gt * dt * u, dc = dy * hs[(n * L + t) * U];
        // The unit's first channel starts its partial rows (no memset needed).
        if (r.var_b) {
          double& p = part_b[(n * L + t) * U];
          p = d == first ? db : p + db;
        } else {
          dBc += db;
        }
        if (r.var_c) {
          double& p = part_c[(n * L + t) * U];
          p = d == first ? dc : p + dc;
        } else {
          dCc += dc;
        }
        carry = a * gt;
      }
      if (r.has_h0) r.dh0[st + n] = carry;
      r.part_a[st + n] = dA;
      if (!r.var_b) r.part_bc[st + n] = dBc;
      if (!r.var_c) r.part_cc[st + n] = dCc;
    }
    double dD = 0, dbias = 0;
    for (long long t = 0; t < L; ++t) {
      const double x = r.delta[row + t] + bias;
      double dd = r.ddelta[row + t];
      if (r.softplus && x <= 20.0) dd *= bwd_ref_sigmoid(x);
      r.ddelta[row + t] = dd;
      dbias += dd;
      dD += dys[t * U] * r.u[row + t];
    }
    r.part_d[b * dim + d] = dD;
    r.part_bias[b * dim + d] = dbias;
  }
}

// One thread per output element of the tensor r.what names; the partials
// are summed in index order (batch, or the group's units), never by atomics.
__global__ void ssm_bwd_reference_reduce(const BwdRefParams r) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long L = r.seqlen, N = r.dstate, dim = r.dim;
  auto over_batch = [&](const double* part, long long inner, double* out) {
    if (i >= dim * inner) return;
    double s = 0;
    for (long long b = 0; b < r.batch; ++b) s += part[b * dim * inner + i];
    out[i] = s;
  };
  auto over_units = [&](const double* part, double* out) {
    if (i >= static_cast<long long>(r.batch) * r.groups * N * L) return;
    const long long bg = i / (N * L), j = i % (N * L);
    const double* row = part + j * r.units + bg * r.slices;
    double s = 0;
    for (long long k = 0; k < r.slices; ++k) s += row[k];
    out[i] = s;
  };
  switch (r.what) {
    case kBwdRefReduceA:
      over_batch(r.part_a, N, r.dA);
      break;
    case kBwdRefReduceB:
      if (r.var_b)
        over_units(r.part_b, r.dB);
      else
        over_batch(r.part_bc, N, r.dB);
      break;
    case kBwdRefReduceC:
      if (r.var_c)
        over_units(r.part_c, r.dC);
      else
        over_batch(r.part_cc, N, r.dC);
      break;
    case kBwdRefReduceD:
      over_batch(r.part_d, 1, r.dD);
      break;
    case kBwdRefReduceBias:
      over_batch(r.part_bias, 1, r.ddelta_bias);
      break;
  }
}

}  // namespace ssmtune_kernels
