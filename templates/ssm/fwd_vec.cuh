// Four consecutive timesteps of an input-dtype row as one vector access
// (16 bytes for fp32, 8 for halves) when the row allows it, else element by
// element; positions at or past `valid` read as 0 and are not stored.
#pragma once

#include "ssm/fwd_math.cuh"

namespace ssmtune_kernels {

template <typename InT>
struct Vec4Raw;
template <>
struct Vec4Raw<float> {
  using Bits = float;
  using type = float4;
};
template <>
struct Vec4Raw<__half> {
  using Bits = unsigned short;
  using type = uint2;
};
template <>
struct Vec4Raw<__nv_bfloat16> {
  using Bits = unsigned short;
  using type = uint2;
};

__device__ __forceinline__ float2 unpack2(unsigned w, __half) {
  return __half22float2(*reinterpret_cast<const __half2*>(&w));
}
__device__ __forceinline__ float2 unpack2(unsigned w, __nv_bfloat16) {
  return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w));
}
__device__ __forceinline__ unsigned pack2(float a, float b, __half) {
  const __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<const unsigned*>(&h);
}
__device__ __forceinline__ unsigned pack2(float a, float b, __nv_bfloat16) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<const unsigned*>(&h);
}

// The raw bits of row[0..4) (elements at or past `valid` read as 0): one
// vector load when `vec` says the row pointer is aligned to 4 elements (the
// kernel's params say so for every row it reads this way), else element by
// element. Held raw, a load in flight costs half the registers for halves.
template <typename InT>
__device__ __forceinline__ typename Vec4Raw<InT>::type load4_raw(const void* base, long long index,
                                                                 int valid, bool vec) {
  using Raw = typename Vec4Raw<InT>::type;
  const InT* ptr = static_cast<const InT*>(base) + index;
  if (vec && valid >= 4) return __ldg(reinterpret_cast<const Raw*>(ptr));
  if constexpr (sizeof(InT) == 4) {
    Raw raw;
    raw.x = valid > 0 ? ptr[0] : 0.0f;
    raw.y = valid > 1 ? ptr[1] : 0.0f;
    raw.z = valid > 2 ? ptr[2] : 0.0f;
    raw.w = valid > 3 ? ptr[3] : 0.0f;
    return raw;
  } else {
    unsigned short e[4];
#pragma unroll
    for (int j = 0; j < 4; ++j)
      e[j] = j < valid ? *reinterpret_cast<const unsigned short*>(ptr + j) : 0;  // +0.0
    Raw raw;
    raw.x = e[0] | (static_cast<unsigned>(e[1]) << 16);
    raw.y = e[2] | (static_cast<unsigned>(e[3]) << 16);
    return raw;
  }
}

// The four floats of a raw vector.
template <typename InT>
__device__ __forceinline__ void unpack4(const typename Vec4Raw<InT>::type& raw, float (&v)[4]) {
  if constexpr (sizeof(InT) == 4) {
    v[0] = raw.x;
    v[1] = raw.y;
    v[2] = raw.z;
    v[3] = raw.w;
  } else {
    const float2 lo = unpack2(raw.x, InT{}), hi = unpack2(raw.y, InT{});
    v[0] = lo.x;
    v[1] = lo.y;
    v[2] = hi.x;
    v[3] = hi.y;
  }
}

// v[j] = row[j] for j < valid, else 0: load4_raw, then unpack4, except that
// the element-wise path converts each element as it comes (two registers
// fewer in the kernels that stream their staging).
template <typename InT>
__device__ __forceinline__ void load4(const void* base, long long index, int valid, bool vec,
                                      float (&v)[4]) {
  if (vec && valid >= 4) {
    unpack4<InT>(load4_raw<InT>(base, index, valid, vec), v);
    return;
  }
  const InT* ptr = static_cast<const InT*>(base) + index;
#pragma unroll
  for (int j = 0; j < 4; ++j) v[j] = j < valid ? to_float(ptr[j]) : 0.0f;
}

// row[j] = v[j] for j < valid.
template <typename InT>
__device__ __forceinline__ void store4(void* base, long long index, int valid, bool vec,
                                       const float (&v)[4]) {
  InT* ptr = static_cast<InT*>(base) + index;
  if (vec && valid >= 4) {
    typename Vec4Raw<InT>::type raw;
    if constexpr (sizeof(InT) == 4) {
      raw = make_float4(v[0], v[1], v[2], v[3]);
    } else {
      raw.x = pack2(v[0], v[1], InT{});
      raw.y = pack2(v[2], v[3], InT{});
    }
    *reinterpret_cast<typename Vec4Raw<InT>::type*>(ptr) = raw;
    return;
  }
#pragma unroll
  for (int j = 0; j < 4; ++j)
    if (j < valid) ptr[j] = from_float<InT>(v[j]);
}

// Shared-memory float4 views.
__device__ __forceinline__ void lds4(const float* p, float (&v)[4]) {
  const float4 x = *reinterpret_cast<const float4*>(p);
  v[0] = x.x;
  v[1] = x.y;
  v[2] = x.z;
  v[3] = x.w;
}
__device__ __forceinline__ void sts4(float* p, const float (&v)[4]) {
  *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
}

}  // namespace ssmtune_kernels
