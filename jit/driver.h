// The CUDA Driver API, opened at run time with dlopen so that every ssmtune
// binary starts on a machine without a driver and says plainly what is
// missing when a GPU is needed. Entry points come from cuGetProcAddress at
// the API version this build was compiled against (or the driver's, if
// older). Driver::get() loads once per process and is thread-safe; the
// function table is immutable afterwards.
#pragma once

#include <cuda.h>

#include <string>

#include "ssmtune/status.h"

namespace ssmtune::jit {

// Every driver function ssmtune calls. The member names go through cuda.h's
// versioning macros (cuMemAlloc -> cuMemAlloc_v2), so calls read as usual.
#define SSMTUNE_DRIVER_FUNCTIONS(X)                                                                \
  X(cuInit)                                                                                        \
  X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGet) X(cuDeviceGetCount)   \
      X(cuDeviceGetName) X(cuDeviceGetUuid) X(cuDeviceGetAttribute) X(cuDeviceTotalMem)            \
          X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent)              \
              X(cuCtxGetCurrent) X(cuCtxSynchronize) X(cuModuleLoadData) X(cuModuleUnload)         \
                  X(cuModuleGetFunction) X(cuFuncGetAttribute) X(cuFuncSetAttribute)               \
                      X(cuLaunchKernel) X(cuStreamCreate) X(cuStreamDestroy)                       \
                          X(cuStreamSynchronize) X(cuStreamQuery) X(cuEventCreate)                 \
                              X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize)             \
                                  X(cuEventElapsedTime) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) \
                                      X(cuMemcpyDtoH) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync)    \
                                          X(cuMemcpyDtoDAsync) X(cuMemsetD8Async)                  \
                                              X(cuMemsetD32Async) X(cuMemGetInfo)                  \
                                                  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)

struct Driver {
  // The loaded driver, or kNoDriver with one line saying what is missing.
  static Result<const Driver*> get();

  int api_version = 0;     // version the entry points were requested at
  int driver_version = 0;  // cuDriverGetVersion, e.g. 13000

#define SSMTUNE_DECLARE_DRIVER_FN(name) decltype(&::name) name = nullptr;
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
