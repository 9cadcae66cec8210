// The decode step: one token through the selective SSM, the state updated
// in place (mamba_ssm's selective_state_update). Block = kDStep channels of
// one head of one batch entry; kLanes threads share a channel, thread
// `lane` holding states (m * kLanes + lane) * kVec + k (k < kVec) for each
// pass m, so a warp's consecutive lanes move consecutive vectors of a
// state row. Per state: s = exp(dt A) s + (dt B) x, y += s C; y is summed
// over the channel's lanes in a fixed order (bitwise reproducible), then
// out = (y + D x) * silu(z).
#pragma once

#include "ssm/fwd_math.cuh"
#include "ssm/step/step_params.cuh"

namespace ssmtune_kernels {

template <typename InT_, typename StT_, typename AccT_, int kN_, int kDStep_, int kLanes_,
          int kVec_, bool kHasD_, bool kHasZ_, bool kHasBias_, bool kSoftplus_, bool kIndices_>
struct StepTraits {
  using InT = InT_;                       // x, dt, z, B, C, out: float, __half or __nv_bfloat16
  using StT = StT_;                       // the state's storage dtype
  using AccT = AccT_;                     // float or double: the arithmetic
  static constexpr int kN = kN_;          // dstate
  static constexpr int kDStep = kDStep_;  // channels per block
  static constexpr int kLanes = kLanes_;  // threads per channel
  static constexpr int kVec = kVec_;      // consecutive states a thread moves at once
  static constexpr int kThreads = kDStep * kLanes;
  static constexpr int kPasses = (kN + kLanes * kVec - 1) / (kLanes * kVec);
  static constexpr bool kHasD = kHasD_, kHasZ = kHasZ_, kHasBias = kHasBias_;
  static constexpr bool kSoftplus = kSoftplus_, kIndices = kIndices_;
  static constexpr bool kAccDouble = sizeof(AccT) == 8;

  static_assert(sizeof(AccT) == 4 || sizeof(AccT) == 8, "AccT must be float or double");
  static_assert(kN >= 1 && kN <= 256, "dstate must be in [1, 256]");
  static_assert(kLanes >= 1 && kLanes <= 32 && (kLanes & (kLanes - 1)) == 0,
                "lanes must be a power of two in [1, 32]");
  static_assert(kVec == 1 || kVec == 2 || kVec == 4 || kVec == 8, "vec must be 1, 2, 4 or 8");
  static_assert(kVec * sizeof(StT) <= 16, "a state vector is at most 16 bytes");
  static_assert(kThreads % 32 == 0 && kThreads <= 1024,
                "threads (channels x lanes) must be a multiple of 32, at most 1024");
  static_assert(kPasses <= 16, "at most 16 passes over a channel's states");
};

// kVec elements moved in accesses of up to 16 bytes (the caller checks the
// alignment: the vector's size, at most 16 bytes).
template <typename T, int kVec>
struct alignas(sizeof(T) * kVec > 16 ? 16 : sizeof(T) * kVec) StepVec {
  T v[kVec];
};

// D or dt_bias: fp32, or the input dtype.
template <typename InT>
__device__ __forceinline__ float load_weight(const void* base, long long i, int in_dtype) {
  return in_dtype ? load_in<InT>(base, i) : static_cast<const float*>(base)[i];
}

template <typename Tr>
__global__ void __launch_bounds__(Tr::kThreads) ssm_step(const SsmStepParams p) {
  using InT = typename Tr::InT;
  using StT = typename Tr::StT;
  using AccT = typename Tr::AccT;
  constexpr int kL = Tr::kLanes, kV = Tr::kVec, kN = Tr::kN;
  const int lane = static_cast<int>(threadIdx.x) % kL;
  const int tiles = (p.headdim + Tr::kDStep - 1) / Tr::kDStep;
  const long long h = blockIdx.x / tiles;
  const int pd =
      static_cast<int>(blockIdx.x - h * tiles) * Tr::kDStep + static_cast<int>(threadIdx.x) / kL;
  const long long b = blockIdx.y;
  // Channels past headdim read channel 0, store nothing, and still take
  // part in the lane sums.
  const bool active = pd < p.headdim;
  const long long pc = active ? pd : 0;
  const long long out_i = b * p.out_batch_stride + h * p.out_head_stride + pc * p.out_dim_stride;

  long long row = b;
  if constexpr (Tr::kIndices) {
    row = p.indices_64 ? static_cast<const long long*>(p.state_indices)[b]
                       : static_cast<long long>(static_cast<const int*>(p.state_indices)[b]);
    if (row < 0) {  // padding: the whole block (one batch entry) leaves
      if (active && lane == 0) static_cast<InT*>(p.out)[out_i] = from_float<InT>(0.0f);
      return;
    }
  }

  const float x =
      load_in<InT>(p.x, b * p.x_batch_stride + h * p.x_head_stride + pc * p.x_dim_stride);
  float dt_in =
      load_in<InT>(p.dt, b * p.dt_batch_stride + h * p.dt_head_stride + pc * p.dt_dim_stride);
  if constexpr (Tr::kHasBias)
    dt_in += load_weight<InT>(p.dt_bias, h * p.dt_bias_head_stride + pc * p.dt_bias_dim_stride,
                              p.dt_bias_in_dtype);
  AccT dt;
  if constexpr (Tr::kAccDouble) {
    dt = dt_in;
    if constexpr (Tr::kSoftplus) dt = dt <= 20.0 ? log1p(exp(dt)) : dt;
  } else {
    dt = Tr::kSoftplus ? softplus_fast(dt_in) : dt_in;
  }
  // exp(dt A) = 2^(dt A log2(e)) on the exp unit; fp64: exp.
  const AccT a_scale = Tr::kAccDouble ? AccT(1) : AccT(1.4426950408889634);
  const AccT dt_a = dt * a_scale;
  const AccT dt_x = dt * static_cast<AccT>(x);

  const long long g = h / p.heads_per_group;
  StT* srow = static_cast<StT*>(p.state) + row * p.state_batch_stride + h * p.state_head_stride +
              pc * p.state_dim_stride;
  const float* arow = p.A + h * p.A_head_stride + pc * p.A_dim_stride;
  const long long b_row = b * p.B_batch_stride + g * p.B_group_stride;
  const long long c_row = b * p.C_batch_stride + g * p.C_group_stride;

  AccT y = 0;
#pragma unroll
  for (int m = 0; m < Tr::kPasses; ++m) {
    const int n0 = (m * kL + lane) * kV;
    if (n0 < kN) {
      const bool whole = n0 + kV <= kN;
      StT sv[kV];
      float av[kV];
      if (whole && p.state_vec) {
        const StepVec<StT, kV> v = *reinterpret_cast<const StepVec<StT, kV>*>(srow + n0);
#pragma unroll
        for (int k = 0; k < kV; ++k) sv[k] = v.v[k];
      } else {
#pragma unroll
        for (int k = 0; k < kV; ++k)
          sv[k] = n0 + k < kN ? srow[(n0 + k) * p.state_dstate_stride] : StT(0.0f);
      }
      if (whole && p.a_vec) {
        const StepVec<float, kV> v = *reinterpret_cast<const StepVec<float, kV>*>(arow + n0);
#pragma unroll
        for (int k = 0; k < kV; ++k) av[k] = v.v[k];
      } else {
#pragma unroll
        for (int k = 0; k < kV; ++k)
          av[k] = n0 + k < kN ? arow[(n0 + k) * p.A_dstate_stride] : 0.0f;
      }
#pragma unroll
      for (int k = 0; k < kV; ++k) {
        const int n = n0 + k;
        if (n < kN) {
          const float bn = load_in<InT>(p.B, b_row + n * p.B_dstate_stride);
          const float cn = load_in<InT>(p.C, c_row + n * p.C_dstate_stride);
          const AccT x_a = dt_a * static_cast<AccT>(av[k]);
          AccT a;
          if constexpr (Tr::kAccDouble) {
            a = exp(x_a);
          } else {
            a = fast_exp2(x_a);
          }
          const AccT s = static_cast<AccT>(to_float(sv[k])) * a + static_cast<AccT>(bn) * dt_x;
          sv[k] = from_float<StT>(static_cast<float>(s));
          y += s * static_cast<AccT>(cn);
        }
      }
      if (active) {
        if (whole && p.state_vec) {
          StepVec<StT, kV> v;
#pragma unroll
          for (int k = 0; k < kV; ++k) v.v[k] = sv[k];
          *reinterpret_cast<StepVec<StT, kV>*>(srow + n0) = v;
        } else {
#pragma unroll
          for (int k = 0; k < kV; ++k)
            if (n0 + k < kN) srow[(n0 + k) * p.state_dstate_stride] = sv[k];
        }
      }
    }
  }
#pragma unroll
  for (int o = kL / 2; o >= 1; o /= 2) y += __shfl_xor_sync(0xffffffffu, y, o);
  if (active && lane == 0) {
    AccT out = y;
    if constexpr (Tr::kHasD)
      out += static_cast<AccT>(
                 load_weight<InT>(p.D, h * p.D_head_stride + pc * p.D_dim_stride, p.D_in_dtype)) *
             static_cast<AccT>(x);
    if constexpr (Tr::kHasZ) {
      const float z =
          load_in<InT>(p.z, b * p.z_batch_stride + h * p.z_head_stride + pc * p.z_dim_stride);
      if constexpr (Tr::kAccDouble) {
        out *= static_cast<AccT>(z) / (1.0 + exp(-static_cast<AccT>(z)));
      } else {
        out *= silu(z);
      }
    }
    static_cast<InT*>(p.out)[out_i] = from_float<InT>(static_cast<float>(out));
  }
}

}  // namespace ssmtune_kernels
