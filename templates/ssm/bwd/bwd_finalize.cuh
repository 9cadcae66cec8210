// The backward's finalize: sums the per-block partials of the main kernel in
// a fixed order and converts to the output dtypes. blockIdx.y picks the
// task: 0 dB, 1 dC (variable: over the tiles of the group, per (b, g, n,
// t), to the input dtype; constant: over the rows (batch x segments), per
// (d, n), fp32), 2 dA, 3 dD, 4 ddelta_bias (over the rows, and the state
// sum's time slices, 8 lanes an output). Grid-stride over x; 64-bit indices.
#pragma once

#include "ssm/bwd/bwd_traits.cuh"
#include "ssm/fwd_math.cuh"

namespace ssmtune_kernels {

// out(i, sum over r of part[r * count + i]) for i < count, in a fixed
// order: each output's rows are split over kLanes neighbouring lanes (lane l
// takes rows l, l + kLanes, ...), whose partial sums meet in a butterfly
// (every lane ends with the same bits). Many rows (batch x segments) then
// cost a few dependent loads per thread instead of one per row. Iterations
// depend on the block only: every thread reaches every shuffle.
template <typename Out>
__device__ __forceinline__ void bwd_sum_rows(const float* part, long long rows, long long count,
                                             Out out) {
  constexpr int kLanes = 8;
  const int lane = static_cast<int>(threadIdx.x) % kLanes;
  const long long per_block = blockDim.x / kLanes;
  const long long step = static_cast<long long>(gridDim.x) * per_block;
  for (long long base = static_cast<long long>(blockIdx.x) * per_block; base < count;
       base += step) {
    const long long i = base + threadIdx.x / kLanes;
    float sum = 0.0f;
    if (i < count)
      for (long long r = lane; r < rows; r += kLanes) sum += part[r * count + i];
#pragma unroll
    for (int m = 1; m < kLanes; m *= 2) sum += __shfl_xor_sync(0xffffffffu, sum, m);
    if (lane == 0 && i < count) out(i, sum);
  }
}

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
    bwd_sum_rows(part, rows, dim * Tr::kN, [&](long long i, float sum) {
      static_cast<float*>(out)[(i / Tr::kN) * s0 + i % Tr::kN] = sum;
    });
  }
}

template <typename Tr>
__global__ void __launch_bounds__(kBwdFinalizeThreads) ssm_bwd_finalize(const SsmBwdParams p) {
  const long long rows = static_cast<long long>(p.f.batch) * p.segments, dim = p.f.dim;
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
      bwd_sum_rows(p.part_a, rows, dim * Tr::kN, [&](long long i, float sum) {
        p.dA[(i / Tr::kN) * p.dA_dim_stride + i % Tr::kN] = sum;
      });
      break;
    case 3:
      if constexpr (Tr::kHasD)
        bwd_sum_rows(p.part_d, rows, dim, [&](long long i, float sum) { p.dD[i] = sum; });
      break;
    case 4:
      // Rows per batch row: the state sum's time slices where it wrote them.
      if constexpr (Tr::kHasBias)
        bwd_sum_rows(p.part_bias, rows * max(1, p.bias_slices), dim,
                     [&](long long i, float sum) { p.ddelta_bias[i] = sum; });
      break;
  }
}

}  // namespace ssmtune_kernels
