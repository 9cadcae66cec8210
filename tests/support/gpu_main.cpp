// Catch2 main for the GPU suites: without a usable CUDA driver and device,
// prints why and exits 77, which ctest reports as skipped (not passed, not
// failed). With one, retains device 0's primary context for every test.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>

#include "jit/device.h"

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {  // listing tests needs no GPU
    if (std::strncmp(argv[i], "--list", 6) == 0) return Catch::Session().run(argc, argv);
  }
  auto ctx = ssmtune::jit::Context::create(0);
  if (!ctx) {
    std::printf("SKIPPED: %s\n", ctx.status().to_string().c_str());
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
