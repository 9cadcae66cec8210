// A plan's launches must name its kernels: an index out of range is an
// internal error before any driver call. (Finding kernels in a loaded
// module and raising limits on them: tests/gpu/jit_gpu_test.cpp.)
#include "jit/program_kernels.h"

#include <catch2/catch.hpp>

namespace ssmtune::jit {
namespace {

struct Launch {
  int kernel = 0;
  unsigned shared_bytes = 0;
};

TEST_CASE("launches must name one of the plan's kernels", "[jit]") {
  const std::vector<Kernel> two(2);
  // At most 48 KiB: no limit to raise, so no driver is needed.
  CHECK(allow_shared_bytes(two, std::vector<Launch>{{0, 0}, {1, 48 * 1024}}).is_ok());
  CHECK(allow_shared_bytes(two, std::vector<Launch>{}).is_ok());
  for (int bad : {2, -1}) {
    Status s = allow_shared_bytes(two, std::vector<Launch>{{0, 0}, {bad, 100 * 1024}});
    CHECK(s.code() == Code::kInternal);
    CHECK(s.message().find("launch names kernel " + std::to_string(bad) + " of 2") !=
          std::string::npos);
  }
  CHECK(allow_shared_bytes(std::vector<Kernel>{}, std::vector<Launch>{{0, 0}}).code() ==
        Code::kInternal);
}

}  // namespace
}  // namespace ssmtune::jit
