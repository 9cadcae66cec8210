// On a machine without a driver (CI), every GPU entry point must fail with
// kNoDriver and a message that says so; with one, the driver must load.
#include "jit/driver.h"

#include <dlfcn.h>
#include <catch2/catch.hpp>

#include "jit/device.h"

namespace ssmtune::jit {
namespace {

bool libcuda_present() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) h = dlopen("libcuda.so.1", RTLD_NOW);
  return h != nullptr;
}

TEST_CASE("the driver loads, or says plainly that there is none", "[jit]") {
  auto d = Driver::get();
  if (libcuda_present() && d.is_ok()) {
    CHECK((*d)->driver_version >= 12000);
    CHECK((*d)->cuLaunchKernel != nullptr);
  } else {
    REQUIRE_FALSE(d.is_ok());
    CHECK(d.status().code() == Code::kNoDriver);
    CHECK(d.status().message().find("CUDA driver") != std::string::npos);
    auto devices = list_devices();
    REQUIRE_FALSE(devices.is_ok());
    CHECK(devices.status().code() == Code::kNoDriver);
    auto ctx = Context::create(0);
    CHECK(ctx.status().code() == Code::kNoDriver);
  }
}

TEST_CASE("cuda_version_string formats driver versions", "[jit]") {
  CHECK(cuda_version_string(13000) == "13.0");
  CHECK(cuda_version_string(12040) == "12.4");
}

}  // namespace
}  // namespace ssmtune::jit
