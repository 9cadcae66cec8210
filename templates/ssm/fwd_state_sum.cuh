// The forward warpscan with its states split over blocks (n_split state
// groups) leaves, per group and (b, d, t), the group's y: its sum over its
// states of C h. This kernel adds the groups' in group order (bitwise
// reproducible) and writes out = y + D u and, with z, out_z = out silu(z).
// One block per (d, b, slice of kFwdStateSumSpan timesteps), four
// timesteps a thread; 64-bit indices.
#pragma once

#include "ssm/fwd_tile.cuh"

namespace ssmtune_kernels {

template <typename Tr>
__global__ void __launch_bounds__(kFwdStateSumThreads) ssm_fwd_state_sum(const SsmFwdParams p) {
  using AccT = typename Tr::AccT;
  using InT = typename Tr::InT;
  const long long d = blockIdx.x, b = blockIdx.y, slice = blockIdx.z;
  const long long len = p.seqlen;
  const long long plane = static_cast<long long>(p.batch) * p.dim * len;  // one group's y
  const AccT* y_row = static_cast<const AccT*>(p.carries) + (b * p.dim + d) * len;
  const float dd = Tr::kHasD ? p.D[d] : 0.0f;
  const bool vec = p.vec4 != 0;
  const long long t = slice * kFwdStateSumSpan + 4LL * threadIdx.x;
  if (t < len) {
    const int valid = static_cast<int>(min(4LL, len - t));
    float u[4], o[4];
    if constexpr (Tr::kHasD)
      load4<InT>(p.u, b * p.u_batch_stride + d * p.u_dim_stride + t, valid, vec, u);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const AccT y = k < valid ? sum_over_groups<Tr::kNSplit>(y_row + t + k, plane) : AccT(0);
      o[k] = static_cast<float>(y);
      if constexpr (Tr::kHasD) o[k] = fmaf(dd, u[k], o[k]);
    }
    write_group4<Tr>(p, b, d, t, valid, vec, o);
  }
}

}  // namespace ssmtune_kernels
