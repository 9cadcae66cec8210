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

// 2^x on the FMA pipe: split x into the nearest integer i and f = x - i in
// [-0.5, 0.5], a polynomial for 2^f with p(0) = 1 and p'(0) = ln 2 fixed (so
// the relative error shrinks with |f|: slowly decaying states, where a is
// close to 1 and errors compound over thousands of steps, stay accurate),
// then add i into the exponent. Degree 5: relative error at most 1.2e-7 and
// 5.5e-7 |x|; degree 4: 6.2e-6 and 1.9e-5 |x|.
template <int kDegree>
__device__ __forceinline__ float poly_exp2(float x) {
  x = fmaxf(x, -125.0f);  // below that 2^x is denormal: treat as tiny
  const float xi = rintf(x);
  const float f = x - xi;
  float p;
  if (kDegree >= 5) {
    p = 1.3334365548e-03f;
    p = fmaf(p, f, 9.6716623689e-03f);
    p = fmaf(p, f, 5.5504840376e-02f);
    p = fmaf(p, f, 2.4022238742e-01f);
  } else {
    p = 9.4451727323e-03f;
    p = fmaf(p, f, 5.5794870136e-02f);
    p = fmaf(p, f, 2.4026941610e-01f);
  }
  p = fmaf(p, f, 6.9314718056e-01f);
  p = fmaf(p, f, 1.0f);
  return __int_as_float(__float_as_int(p) + (static_cast<int>(xi) << 23));
}

// exp of `x` for state `n`, where x = delta * A in the accurate mode and
// x = delta * A * log2(e) in the others (A is pre-scaled on load).
template <typename Tr>
__device__ __forceinline__ typename Tr::AccT exp_state(typename Tr::AccT x, int n) {
  if constexpr (Tr::kExp == ExpKind::kAccurate) {
    return exp(x);
  } else if constexpr (Tr::kExp == ExpKind::kPoly) {
    constexpr int kDegree =
        sizeof(typename Tr::InT) == 4 ? 5 : 4;  // halves: output rounding dominates
    return (n % 8) < Tr::kPolyShare ? poly_exp2<kDegree>(x) : fast_exp2(x);
  } else {
    return fast_exp2(x);
  }
}

// exp for a state whose poly-or-MUFU choice the caller made (`poly` is a
// compile-time constant where the kernels unroll over their states).
template <typename Tr>
__device__ __forceinline__ typename Tr::AccT exp_slot(typename Tr::AccT x, bool poly) {
  if constexpr (Tr::kExp == ExpKind::kAccurate) {
    return exp(x);
  } else if constexpr (Tr::kExp == ExpKind::kPoly) {
    constexpr int kDegree = sizeof(typename Tr::InT) == 4 ? 5 : 4;
    return poly ? poly_exp2<kDegree>(x) : fast_exp2(x);
  } else {
    return fast_exp2(x);
  }
}

// Factor applied to A when it is loaded.
template <typename Tr>
__device__ __forceinline__ float a_scale() {
  return Tr::kExp == ExpKind::kAccurate ? 1.0f : 1.4426950408889634f;
}

// softplus(x) = log(1 + e^x), x itself above 20 (as mamba_ssm has it), in
// a dozen instructions rather than libdevice's log1pf(expf(x)): with e =
// e^x, below x = -2 (e < 0.136) log1p(e) = 2 atanh(s), s = e / (2 + e) <
// 0.064, by its series to s^7 (next term < 2e-12 relative); above, the
// hardware log of 1 + e >= 1.136, whose absolute error (2^-21.4) is then
// below 3e-6 relative. Relative error about 1e-6 either way, far inside
// the fp32 budget; the exp is the hardware one (about 2 ulp).
__device__ __forceinline__ float softplus_fast(float x) {
  const float e = __expf(x);
  if (x < -2.0f) {
    const float s = __fdividef(e, 2.0f + e);
    const float s2 = s * s;
    const float series = fmaf(s2, fmaf(s2, fmaf(s2, 1.0f / 7.0f, 1.0f / 5.0f), 1.0f / 3.0f), 1.0f);
    return 2.0f * s * series;
  }
  return x <= 20.0f ? __logf(1.0f + e) : x;
}

// delta' = softplus(delta + bias), as mamba_ssm computes it.
template <typename Tr>
__device__ __forceinline__ float transform_delta(float dt, float bias) {
  if constexpr (Tr::kHasBias) dt += bias;
  if constexpr (Tr::kSoftplus) dt = softplus_fast(dt);
  return dt;
}

// z sigmoid(z) with the hardware exp and a fast divide (relative error a
// few ulp; the divide gives 0 once 1 + e^-z passes 2^126, the limit).
__device__ __forceinline__ float silu(float z) { return __fdividef(z, 1.0f + __expf(-z)); }

// sigmoid(z), the same way (0 once 1 + e^-z passes 2^126, the limit).
__device__ __forceinline__ float sigmoid_fast(float z) {
  return __fdividef(1.0f, 1.0f + __expf(-z));
}

// softplus'(x) = sigmoid(x) = 1 - e^-dt from dt = softplus(x) >= 0, in a
// few instructions rather than libdevice's expm1f: below dt = 1/8 the
// series of 1 - e^-dt to dt^5 (next term < 5e-8 relative), above it the
// hardware exp, whose error (about 2 ulp of e^-dt < 0.89) is then below
// 1.5e-6 of the result. 1 to fp32 precision from dt = 18 (mamba_ssm's
// gradient is 1 past x = 20).
__device__ __forceinline__ float softplus_grad(float dt) {
  if (dt < 0.125f) {
    const float d = dt;
    return d * fmaf(-0.5f * d,
                    fmaf(-d * (1.0f / 3.0f), fmaf(-0.25f * d, fmaf(-0.2f, d, 1.0f), 1.0f), 1.0f),
                    1.0f);
  }
  return 1.0f - __expf(-dt);
}

}  // namespace ssmtune_kernels
