// The CUDA Driver API, opened at run time with dlopen so that every ssmtune
// binary starts on a machine without a driver and says plainly what is
// missing when a GPU is needed. Entry points come from cuGetProcAddress at
// the ABI version each was declared with in cuda.h. Driver::get() loads once per process and is
// thread-safe; the function table is immutable afterwards.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>

#include "ssmtune/status.h"

namespace ssmtune::jit {

// Every driver function ssmtune calls, with the ABI version it is requested
// at: cuGetProcAddress returns the newest variant up to that version, so each
// must name the variant whose signature cuda.h declares (cuCtxSynchronize
// gained a context argument in 13.0; we use the 2.0 one). A static_assert in
// driver.cpp checks each pairing. The member names go through cuda.h's
// versioning macros (cuMemAlloc -> cuMemAlloc_v2), so calls read as usual.
// clang-format off
#define SSMTUNE_DRIVER_FUNCTIONS(X) \
  X(cuInit, 2000) \
  X(cuDriverGetVersion, 2020) \
  X(cuGetErrorName, 6000) \
  X(cuGetErrorString, 6000) \
  X(cuDeviceGet, 2000) \
  X(cuDeviceGetCount, 2000) \
  X(cuDeviceGetName, 2000) \
  X(cuDeviceGetUuid, 11040) \
  X(cuDeviceGetAttribute, 2000) \
  X(cuDeviceTotalMem, 3020) \
  X(cuDevicePrimaryCtxRetain, 7000) \
  X(cuDevicePrimaryCtxRelease, 11000) \
  X(cuCtxSetCurrent, 4000) \
  X(cuCtxGetCurrent, 4000) \
  X(cuCtxSynchronize, 2000) \
  X(cuModuleLoadData, 2000) \
  X(cuModuleUnload, 2000) \
  X(cuModuleGetFunction, 2000) \
  X(cuFuncGetAttribute, 2020) \
  X(cuFuncSetAttribute, 9000) \
  X(cuLaunchKernel, 4000) \
  X(cuStreamCreate, 2000) \
  X(cuStreamDestroy, 4000) \
  X(cuStreamSynchronize, 2000) \
  X(cuStreamQuery, 2000) \
  X(cuEventCreate, 2000) \
  X(cuEventDestroy, 4000) \
  X(cuEventRecord, 2000) \
  X(cuEventSynchronize, 2000) \
  X(cuEventElapsedTime, 12080) \
  X(cuMemAlloc, 3020) \
  X(cuMemFree, 3020) \
  X(cuMemcpyHtoD, 3020) \
  X(cuMemcpyDtoH, 3020) \
  X(cuMemcpyHtoDAsync, 3020) \
  X(cuMemcpyDtoHAsync, 3020) \
  X(cuMemcpyDtoDAsync, 3020) \
  X(cuMemsetD8Async, 3020) \
  X(cuMemsetD16Async, 3020) \
  X(cuMemsetD32Async, 3020) \
  X(cuMemGetInfo, 3020) \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050)
// clang-format on

struct Driver {
  // The loaded driver, or kNoDriver with one line saying what is missing.
  static Result<const Driver*> get();

  int driver_version = 0;  // cuDriverGetVersion, e.g. 13000

// `name` is declared: it cannot be parenthesized.
// NOLINTNEXTLINE(bugprone-macro-parentheses)
#define SSMTUNE_DECLARE_DRIVER_FN(name, version) decltype(&::name) name = nullptr;
  SSMTUNE_DRIVER_FUNCTIONS(SSMTUNE_DECLARE_DRIVER_FN)
#undef SSMTUNE_DECLARE_DRIVER_FN

  // "cuModuleLoadData: CUDA_ERROR_INVALID_IMAGE (device kernel image is invalid)"
  Status check(CUresult rc, const char* what) const;
};

// "13.0" from 13000.
std::string cuda_version_string(int version);

}  // namespace ssmtune::jit

// Inside a function returning Status/Result, with a `const Driver& drv` in scope.
#define SSMTUNE_CU(call)                                                   \
  do {                                                                     \
    CUresult ssmtune_rc_ = (call);                                         \
    if (ssmtune_rc_ != CUDA_SUCCESS) return drv.check(ssmtune_rc_, #call); \
  } while (0)
