// Scalar device math shared by every forward kernel: dtype conversion,
// the three exp modes, softplus and silu.
#pragma once

#include "ssm/fwd_traits.cuh"

namespace ssmtune_kernels {

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

template <typename InT>
__device__ __forceinline__ float load_in(const void* base, long long index) {
  return to_float(static_cast<const InT*>(base)[index]);
}

__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// 2^x on the FMA pipe: split off the integer part, a minimax polynomial for
// 2^frac (fixed p(0) = 1), then add the integer part into the exponent.
// Degree 5: max relative error 8.4e-8; degree 3: 8.7e-5.
template <int kDegree>
__device__ __forceinline__ float poly_exp2(float x) {
  x = fmaxf(x, -125.0f);  // below that 2^x is denormal: treat as tiny
  const float xi = floorf(x);
  const float f = x - xi;
  float p;
  if (kDegree >= 5) {
    p = 1.867182491e-03f;
    p = fmaf(p, f, 9.016688522e-03f);
    p = fmaf(p, f, 5.580044632e-02f);
    p = fmaf(p, f, 2.401641538e-01f);
    p = fmaf(p, f, 6.931513628e-01f);
    p = fmaf(p, f, 1.0f);
  } else {
    p = 7.705804611e-02f;
    p = fmaf(p, f, 2.276455792e-01f);
    p = fmaf(p, f, 6.951228927e-01f);
    p = fmaf(p, f, 1.0f);
  }
  return __int_as_float(__float_as_int(p) + (static_cast<int>(xi) << 23));
}

// exp of `x` for state `n`, where x = delta * A in the accurate mode and
// x = delta * A * log2(e) in the others (A is pre-scaled on load).
template <typename Tr>
__device__ __forceinline__ typename Tr::AccT exp_state(typename Tr::AccT x, int n) {
  if constexpr (Tr::kExp == ExpKind::kAccurate) {
    return exp(x);
  } else if constexpr (Tr::kExp == ExpKind::kPoly) {
    constexpr int kDegree = sizeof(typename Tr::InT) == 4 ? 5 : 3;
    return (n % 8) < Tr::kPolyShare ? poly_exp2<kDegree>(x) : fast_exp2(x);
  } else {
    return fast_exp2(x);
  }
}

// Factor applied to A when it is loaded.
template <typename Tr>
__device__ __forceinline__ float a_scale() {
  return Tr::kExp == ExpKind::kAccurate ? 1.0f : 1.4426950408889634f;
}

// delta' = softplus(delta + bias), as mamba_ssm computes it.
template <typename Tr>
__device__ __forceinline__ float transform_delta(float dt, float bias) {
  if constexpr (Tr::kHasBias) dt += bias;
  if constexpr (Tr::kSoftplus) dt = dt <= 20.0f ? log1pf(expf(dt)) : dt;
  return dt;
}

__device__ __forceinline__ float silu(float z) { return z / (1.0f + expf(-z)); }

}  // namespace ssmtune_kernels
