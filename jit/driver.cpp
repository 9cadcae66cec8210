// dlopen of libcuda and the entry-point table.
#include "jit/driver.h"

#include <dlfcn.h>

#include <algorithm>
#include <mutex>
#include <type_traits>

namespace ssmtune::jit {
namespace {

using GetProcAddressFn = CUresult (*)(const char*, void**, int, cuuint64_t,
                                      CUdriverProcAddressQueryResult*);
using DriverGetVersionFn = CUresult (*)(int*);

Result<Driver> load() {
  // Never closed: the driver stays loaded for the life of the process.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    return Status::no_driver(
        std::string("no CUDA driver found (libcuda.so.1 could not be loaded: ") +
        (why ? why : "unknown reason") + "); this command needs an NVIDIA GPU");
  }
  auto get_proc = reinterpret_cast<GetProcAddressFn>(dlsym(lib, "cuGetProcAddress_v2"));
  auto get_version = reinterpret_cast<DriverGetVersionFn>(dlsym(lib, "cuDriverGetVersion"));
  if (get_proc == nullptr || get_version == nullptr)
    return Status::no_driver("the CUDA driver is too old: libcuda.so.1 lacks cuGetProcAddress_v2");

  Driver d;
  if (get_version(&d.driver_version) != CUDA_SUCCESS)
    return Status::no_driver("cuDriverGetVersion failed");

#define SSMTUNE_LOAD_DRIVER_FN(name, version)                                                \
  {                                                                                          \
    static_assert(std::is_same_v<decltype(&::name), PFN_##name##_v##version>,                \
                  #name ": the requested ABI version does not match cuda.h's declaration");  \
    void* fn = nullptr;                                                                      \
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;             \
    CUresult rc = get_proc(#name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &found);        \
    if (rc != CUDA_SUCCESS || fn == nullptr || found != CU_GET_PROC_ADDRESS_SUCCESS)         \
      return Status::no_driver("the CUDA driver (" + cuda_version_string(d.driver_version) + \
                               ") does not provide " #name);                                 \
    d.name = reinterpret_cast<decltype(d.name)>(fn);                                         \
  }
  SSMTUNE_DRIVER_FUNCTIONS(SSMTUNE_LOAD_DRIVER_FN)
#undef SSMTUNE_LOAD_DRIVER_FN

  CUresult rc = d.cuInit(0);
  if (rc != CUDA_SUCCESS) {
    Status s = d.check(rc, "cuInit");
    return Status::no_driver("the CUDA driver is present but unusable: " + s.message());
  }
  return d;
}

}  // namespace

Result<const Driver*> Driver::get() {
  static const Result<Driver> kDriver = load();
  if (!kDriver) return kDriver.status();
  return &kDriver.value();
}

Status Driver::check(CUresult rc, const char* what) const {
  if (rc == CUDA_SUCCESS) return Status::ok();
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName == nullptr || cuGetErrorName(rc, &name) != CUDA_SUCCESS) name = nullptr;
  if (cuGetErrorString == nullptr || cuGetErrorString(rc, &text) != CUDA_SUCCESS) text = nullptr;
  std::string msg = std::string(what) + ": " + (name ? name : "CUDA error " + std::to_string(rc));
  if (text) msg += std::string(" (") + text + ")";
  return Status::cuda_error(msg);
}

std::string cuda_version_string(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

}  // namespace ssmtune::jit
