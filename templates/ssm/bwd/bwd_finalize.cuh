// The backward's finalize: sums the per-block partials of the main kernel in
// a fixed order and converts to the output dtypes. blockIdx.y picks the
// task: 0 dB, 1 dC (variable: over the tiles of the group, per (b, g, n,
// t), to the input dtype; constant: over the rows (batch x segments), per
// (d, n), fp32), 2 dA, 3 dD, 4 ddelta_bias (over the rows). Grid-stride
// over x; 64-bit indices.
#pragma once

#include "ssm/bwd/bwd_traits.cuh"
#include "ssm/fwd_math.cuh"

namespace ssmtune_kernels {

template <typename Tr, bool kVar>
__device__ __forceinline__ void bwd_finalize_bc(const SsmBwdParams& p, const float* part, void* out,
                                                long long s0, long long s1, long long s2) {
  const long long batch = p.f.batch, dim = p.f.dim, groups = p.f.groups, L = p.f.seqlen;
  const long long rows = batch * p.segments;
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if constexpr (kVar) {
    const long long tpg = p.tiles_per_group;
    const long long total = batch * groups * Tr::kN * L;
    for (long long i = first; i < total; i += step) {
      const long long t = i % L, n = (i / L) % Tr::kN, g = (i / (L * Tr::kN)) % groups;
      const long long b = i / (L * Tr::kN * groups);
      const float* src = part + ((b * groups + g) * tpg * Tr::kN + n) * L + t;
      float sum = 0.0f;
      for (long long j = 0; j < tpg; ++j) sum += src[j * Tr::kN * L];
      static_cast<typename Tr::InT*>(out)[b * s0 + g * s1 + n * s2 + t] =
          from_float<typename Tr::InT>(sum);
    }
  } else {
    const long long total = dim * Tr::kN;
    for (long long i = first; i < total; i += step) {
      float sum = 0.0f;
      for (long long r = 0; r < rows; ++r) sum += part[r * total + i];
      static_cast<float*>(out)[(i / Tr::kN) * s0 + i % Tr::kN] = sum;
    }
  }
}

template <typename Tr>
__global__ void __launch_bounds__(kBwdFinalizeThreads) ssm_bwd_finalize(const SsmBwdParams p) {
  const long long rows = static_cast<long long>(p.f.batch) * p.segments, dim = p.f.dim;
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  switch (blockIdx.y) {
    case 0:
      bwd_finalize_bc<Tr, Tr::kVarB>(p, p.part_b, p.dB, p.dB_batch_stride, p.dB_group_stride,
                                     p.dB_dstate_stride);
      break;
    case 1:
      bwd_finalize_bc<Tr, Tr::kVarC>(p, p.part_c, p.dC, p.dC_batch_stride, p.dC_group_stride,
                                     p.dC_dstate_stride);
      break;
    case 2:
      for (long long i = first; i < dim * Tr::kN; i += step) {
        float sum = 0.0f;
        for (long long r = 0; r < rows; ++r) sum += p.part_a[r * dim * Tr::kN + i];
        p.dA[(i / Tr::kN) * p.dA_dim_stride + i % Tr::kN] = sum;
      }
      break;
    case 3:
      if constexpr (Tr::kHasD)
        for (long long i = first; i < dim; i += step) {
          float sum = 0.0f;
          for (long long r = 0; r < rows; ++r) sum += p.part_d[r * dim + i];
          p.dD[i] = sum;
        }
      break;
    case 4:
      if constexpr (Tr::kHasBias)
        for (long long i = first; i < dim; i += step) {
          float sum = 0.0f;
          for (long long r = 0; r < rows; ++r) sum += p.part_bias[r * dim + i];
          p.ddelta_bias[i] = sum;
        }
      break;
  }
}

}  // namespace ssmtune_kernels
