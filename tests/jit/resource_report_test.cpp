#include "jit/resource_report.h"

#include <catch2/catch.hpp>

namespace ssmtune::jit {
namespace {

// Verbatim from NVRTC 13.0 (-Xptxas=-v, sm_90).
const char* const kLog = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z1kIfLi4EEvPT_' for 'sm_90'
ptxas info    : Function properties for _Z1kIfLi4EEvPT_
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 1 barriers, 16 bytes smem
ptxas info    : Compile time = 10.998 ms
ptxas info    : Compiling entry function '_Z1kIdLi64EEvPT_' for 'sm_90'
ptxas info    : Function properties for _Z1kIdLi64EEvPT_
ptxas         .     512 bytes stack frame, 24 bytes spill stores, 20 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 512 bytes cumulative stack size, 512 bytes smem, 368 bytes cmem[0]
ptxas info    : Compile time = 26.761 ms
)";

TEST_CASE("ptxas report parses per function", "[jit]") {
  auto r = parse_resource_report(kLog);
  REQUIRE(r.size() == 2);
  const auto& a = r.at("_Z1kIfLi4EEvPT_");
  CHECK(a.found);
  CHECK(a.registers == 12);
  CHECK(a.shared_bytes == 16);
  CHECK(a.stack_frame_bytes == 0);
  CHECK(a.barriers == 1);
  CHECK_FALSE(a.spills());
  const auto& b = r.at("_Z1kIdLi64EEvPT_");
  CHECK(b.registers == 32);
  CHECK(b.stack_frame_bytes == 512);
  CHECK(b.spill_store_bytes == 24);
  CHECK(b.spill_load_bytes == 20);
  CHECK(b.shared_bytes == 512);
  CHECK(b.const_bytes == 368);
  CHECK(b.spills());
}

TEST_CASE("a log without a report yields nothing", "[jit]") {
  CHECK(parse_resource_report("").empty());
  CHECK(parse_resource_report("warning: something\n").empty());
}

}  // namespace
}  // namespace ssmtune::jit
