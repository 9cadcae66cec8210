// Asynchronous copies and named barriers (sm_80 and later), for kernels that
// hand shared-memory stages between a producer warp and compute warps.
#pragma once

namespace ssmtune_kernels {

__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Copies 16 bytes from global to shared memory without passing through
// registers; only the first `src_bytes` (0..16) are read, the rest of the
// 16 are zero-filled. Both addresses must be 16-byte aligned.
__device__ __forceinline__ void cp_async16(void* smem_dst, const void* gmem_src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(smem_dst)),
               "l"(gmem_src), "r"(src_bytes)
               : "memory");
}

// Copies 4 bytes (read only when `src_bytes` is 4, else zero-filled); both
// addresses 4-byte aligned. For rows that are not 16-byte aligned.
__device__ __forceinline__ void cp_async4(void* smem_dst, const void* gmem_src, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_address(smem_dst)),
               "l"(gmem_src), "r"(src_bytes)
               : "memory");
}

// Closes the group of copies this thread issued since the last commit (an
// empty group is legal and completes at once).
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most kPending of this thread's committed groups are still
// in flight. The copies are then visible to this thread; other threads see
// them after a barrier.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// Named barrier kId (1..15; 0 is __syncthreads) shared by `count` threads
// (a multiple of 32). sync waits for all of them; arrive counts this warp
// without waiting, and orders its earlier shared-memory writes before the
// reads of the threads that sync on the same barrier. The id is an
// immediate: with an id in a register ptxas reserves all 16 barriers for the
// block, and barriers then cap the blocks per SM at 4.
template <bool kArrive, int kId>
__device__ __forceinline__ void named_barrier(int count) {
  if constexpr (kArrive)
    asm volatile("bar.arrive %0, %1;\n" ::"n"(kId), "r"(count) : "memory");
  else
    asm volatile("bar.sync %0, %1;\n" ::"n"(kId), "r"(count) : "memory");
}

// Barrier kFirst + i for a run-time i in [0, kN): a short chain of
// compares, each branch with an immediate id.
template <bool kArrive, int kFirst, int kN>
__device__ __forceinline__ void named_barrier_at(int i, int count) {
  if constexpr (kN == 1) {
    named_barrier<kArrive, kFirst>(count);
  } else if (i == 0) {
    named_barrier<kArrive, kFirst>(count);
  } else {
    named_barrier_at<kArrive, kFirst + 1, kN - 1>(i - 1, count);
  }
}

}  // namespace ssmtune_kernels
