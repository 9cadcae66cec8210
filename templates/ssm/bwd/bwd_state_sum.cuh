// The warp-scan backward with its states split over blocks (n_split state
// groups) leaves, per group and (b, d, t), the group's sums over its states
// of g B and of A g a h_{t-1}. This kernel adds the groups' in group order
// and forms du = dt sum(g B) + D dy and ddelta = (u sum(g B) + sum(A g a
// h_{t-1})) softplus'(.), as the one-group kernel does in place, and a
// ddelta_bias partial per (time slice, b, d): its ddelta summed in a fixed
// order (a thread's timesteps in order, the warp by a butterfly, the warps
// in order; the finalize adds the slices' in order). One block per (d, b,
// slice of kBwdStateSumSpan timesteps), four timesteps a thread; 64-bit
// indices.
#pragma once

#include "ssm/bwd/bwd_chunk.cuh"
#include "ssm/bwd/bwd_warpscan.cuh"

namespace ssmtune_kernels {

template <typename Tr>
__global__ void __launch_bounds__(kBwdStateSumThreads) ssm_bwd_state_sum(const SsmBwdParams p) {
  using AccT = typename Tr::AccT;
  using InT = typename Tr::InT;
  constexpr int kS = Tr::kNSplit;
  constexpr int kWarps = kBwdStateSumThreads / 32;
  const SsmFwdParams& f = p.f;
  const long long d = blockIdx.x, b = blockIdx.y, slice = blockIdx.z;
  const long long len = f.seqlen;
  const long long plane = static_cast<long long>(f.batch) * f.dim * len;  // one group's sums
  const AccT* sb_row = static_cast<const AccT*>(p.part_sb) + (b * f.dim + d) * len;
  const AccT* sa_row = static_cast<const AccT*>(p.part_sa) + (b * f.dim + d) * len;
  const float bias = Tr::kHasBias ? f.delta_bias[d] : 0.0f;
  const float dd_w = Tr::kHasD ? f.D[d] : 0.0f;
  const bool vec = f.vec4 != 0;
  AccT part_bias = 0;
  const long long t = slice * kBwdStateSumSpan + 4LL * threadIdx.x;
  if (t < len) {
    const int valid = static_cast<int>(min(4LL, len - t));
    float dv[4], uv[4], dy[4];
    load4<InT>(f.delta, b * f.delta_batch_stride + d * f.delta_dim_stride + t, valid, vec, dv);
    load4<InT>(f.u, b * f.u_batch_stride + d * f.u_dim_stride + t, valid, vec, uv);
    load4<InT>(p.dout, b * p.dout_batch_stride + d * p.dout_dim_stride + t, valid, vec, dy);
    if constexpr (Tr::kHasZ) {
      float z[4], y[4], dz[4];  // dz: written by the scan's first group
      load4<InT>(f.z, b * f.z_batch_stride + d * f.z_dim_stride + t, valid, vec, z);
      load4<InT>(f.out, b * f.out_batch_stride + d * f.out_dim_stride + t, valid, vec, y);
      dy_group<Tr>(dy, z, y, dz);
    }
    float du[4], dd[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const AccT sb = k < valid ? sum_over_groups<kS>(sb_row + t + k, plane) : AccT(0);
      const AccT sa = k < valid ? sum_over_groups<kS>(sa_row + t + k, plane) : AccT(0);
      const float dt = transform_delta<Tr>(dv[k], bias);
      const float s_bk = static_cast<float>(sb);
      du[k] = dt * s_bk;
      if constexpr (Tr::kHasD) du[k] = fmaf(dd_w, dy[k], du[k]);
      dd[k] = fmaf(uv[k], s_bk, static_cast<float>(sa));
      // softplus'(x) = sigmoid(x) = 1 - exp(-softplus(x)).
      if constexpr (Tr::kSoftplus) dd[k] *= softplus_grad(dt);
      if (k < valid) part_bias += static_cast<AccT>(dd[k]);
    }
    store4<InT>(p.du, b * p.du_batch_stride + d * p.du_dim_stride + t, valid, vec, du);
    store4<InT>(p.ddelta, b * p.ddelta_batch_stride + d * p.ddelta_dim_stride + t, valid, vec, dd);
  }
  if constexpr (Tr::kHasBias) {
    extern __shared__ float4 smem_raw[];
    AccT* s_w = reinterpret_cast<AccT*>(smem_raw);
    part_bias = bwd_warp_sum(part_bias);
    if (threadIdx.x % 32 == 0) s_w[threadIdx.x / 32] = part_bias;
    __syncthreads();
    if (threadIdx.x == 0) {
      AccT sum = 0;
      for (int w = 0; w < kWarps; ++w) sum += s_w[w];
      p.part_bias[(slice * f.batch + b) * f.dim + d] = static_cast<float>(sum);
    }
  }
}

}  // namespace ssmtune_kernels
