// A plain sequential scan: h[r, t] = a[r, t] * h[r, t-1] + b[r, t], one
// thread per row. The smallest real kernel family, used to test the JIT
// layer (compile, lower, load, launch) independently of the SSM kernels.
#pragma once

#include "testing/linear_recurrence_params.cuh"

namespace ssmtune_kernels {

template <typename T>
struct AccumulatorOf {
  using type = T;
};

// kItems: timesteps loaded before they are consumed (independent loads in flight).
template <typename T, int kItems>
__global__ void linear_recurrence(const LinearRecurrenceParams p) {
  static_assert(kItems >= 1 && kItems <= 64, "kItems must be in [1, 64]");
  const long long row = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= p.rows) return;
  const T* a = static_cast<const T*>(p.a) + row * p.length;
  const T* b = static_cast<const T*>(p.b) + row * p.length;
  T* h = static_cast<T*>(p.h) + row * p.length;
  T state = T(0);
  for (long long t0 = 0; t0 < p.length; t0 += kItems) {
    T av[kItems], bv[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const bool in = t0 + i < p.length;
      av[i] = in ? a[t0 + i] : T(1);
      bv[i] = in ? b[t0 + i] : T(0);
    }
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      state = av[i] * state + bv[i];
      if (t0 + i < p.length) h[t0 + i] = state;
    }
  }
}

}  // namespace ssmtune_kernels
