// Split-sequence pipelined scan, for few channels and long sequences (batch-
// 1 prefill), in three launches: (1) each block runs segment blockIdx.z of
// one tile through the pipelined kernel from state 0, keeping per (channel,
// state) the segment's end state and decay product; (2) one thread per
// chain scans the segments' carries (scan_carries), leaving each segment's
// incoming state and the last state; (3) each block runs its segment again
// from that state and writes the outputs. Twice the exps of one pass, for
// `segments` times the blocks in flight.
#pragma once

#include "ssm/fwd_multipass.cuh"
#include "ssm/fwd_pipelined.cuh"

namespace ssmtune_kernels {

// Segment blockIdx.z: chunks [z * seg_chunks, ...), the last one shorter.
template <typename Tr, PipePass kPass>
__device__ __forceinline__ void split_segment(const SsmFwdParams& p) {
  const int seg = static_cast<int>(blockIdx.z);
  const int j0 = seg * p.seg_chunks;
  pipelined_pass<Tr, kPass>(p, j0, min(p.seg_chunks, p.n_chunks - j0), seg);
}

template <typename Tr>
__global__ void __launch_bounds__(Tr::kThreads + PipeRing<Tr>::kProd, PipeMinBlocks<Tr>::value)
    ssm_fwd_split_states(const SsmFwdParams p) {
  split_segment<Tr, PipePass::kSegmentStates>(p);
}

template <typename Tr>
__global__ void ssm_fwd_split_scan(const SsmFwdParams p) {
  scan_carries<Tr>(p, p.segments);
}

template <typename Tr>
__global__ void __launch_bounds__(Tr::kThreads + PipeRing<Tr>::kProd, PipeMinBlocks<Tr>::value)
    ssm_fwd_split_outputs(const SsmFwdParams p) {
  split_segment<Tr, PipePass::kSegmentOutputs>(p);
}

}  // namespace ssmtune_kernels
