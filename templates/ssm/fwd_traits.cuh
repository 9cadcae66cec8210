// Compile-time description of one forward kernel variant: dtypes, sizes and
// feature flags as template arguments, so that each call instantiates
// exactly what it needs. Every algorithm's kernel takes one FwdTraits.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "ssm/fwd_params.cuh"

namespace ssmtune_kernels {

// How exp(delta * A) is evaluated.
enum class ExpKind : int {
  kAccurate = 0,  // expf / exp (libdevice, full precision)
  kFast = 1,      // ex2.approx on the MUFU unit, A pre-scaled by log2(e)
  kPoly = 2,      // kPolyShare of every 8 states on the FMA pipe, the rest ex2.approx
};

template <typename InT_, typename AccT_, int kN_, int kChunk_, int kDStep_, int kThreads_,
          int kItems_, int kNSplit_, ExpKind kExp_, int kPolyShare_, bool kVarB_, bool kVarC_,
          bool kHasD_, bool kHasZ_, bool kHasBias_, bool kSoftplus_, bool kLastState_, bool kH0_>
struct FwdTraits {
  using InT = InT_;                       // float, __half or __nv_bfloat16
  using AccT = AccT_;                     // float or double: the state h and every sum
  static constexpr int kN = kN_;          // dstate
  static constexpr int kChunk = kChunk_;  // timesteps staged per chunk
  static constexpr int kDStep = kDStep_;  // channels per block
  static constexpr int kThreads = kThreads_;
  static constexpr int kItems = kItems_;    // timesteps per thread (scan algorithms);
                                            // sequential: chunks in flight (1 or 2)
  static constexpr int kNSplit = kNSplit_;  // threads sharing one channel's states
  static constexpr int kChan = 1;           // channels a thread (the chunked backward's field)
  static constexpr ExpKind kExp = kExp_;
  static constexpr int kPolyShare = kPolyShare_;
  static constexpr bool kVarB = kVarB_, kVarC = kVarC_, kHasD = kHasD_, kHasZ = kHasZ_;
  static constexpr bool kHasBias = kHasBias_, kSoftplus = kSoftplus_;
  static constexpr bool kLastState = kLastState_, kH0 = kH0_;

  static constexpr bool kAccDouble = sizeof(AccT) == 8;
  static_assert(sizeof(AccT) == 4 || sizeof(AccT) == 8, "AccT must be float or double");
  static_assert(kN >= 1 && kN <= 256, "dstate must be in [1, 256]");
  static_assert(kChunk >= 1 && kChunk <= 4096, "chunk must be in [1, 4096]");
  static_assert(kDStep >= 1 && kDStep <= 64, "d_step must be in [1, 64]");
  static_assert(kThreads % 32 == 0 && kThreads >= 32 && kThreads <= 1024,
                "threads must be a multiple of 32 in [32, 1024]");
  static_assert(kPolyShare >= 0 && kPolyShare <= 8, "poly share is out of 8 states");
  static_assert(kExp != ExpKind::kPoly || (kPolyShare >= 1 && kPolyShare <= 7),
                "kPoly needs a share in [1, 7]");
  static_assert(!kAccDouble || kExp == ExpKind::kAccurate,
                "fp64 accumulation only with the accurate exp (the fast ones are fp32)");
};

}  // namespace ssmtune_kernels
