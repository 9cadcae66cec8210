// ScopeExit: runs once at the end of its scope, on a normal exit, an early
// return and an exception, in reverse order of declaration.
#include "core/scope_exit.h"

#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ssmtune {
namespace {

int leave_early(bool early, int& runs) {
  const ScopeExit guard([&runs] { ++runs; });
  if (early) return 1;
  return 2;
}

TEST_CASE("ScopeExit runs its callable once on every way out", "[core]") {
  int runs = 0;
  CHECK(leave_early(true, runs) == 1);
  CHECK(runs == 1);
  CHECK(leave_early(false, runs) == 2);
  CHECK(runs == 2);
  try {
    const ScopeExit guard([&runs] { ++runs; });
    throw std::runtime_error("out");
  } catch (const std::runtime_error&) {
  }
  CHECK(runs == 3);
}

TEST_CASE("ScopeExit guards end in reverse order and are not copied", "[core]") {
  std::string order;
  {
    const ScopeExit first([&order] { order += "a"; });
    const ScopeExit second([&order] { order += "b"; });
    CHECK(order.empty());
  }
  CHECK(order == "ba");
  auto f = [] {};
  STATIC_REQUIRE_FALSE(std::is_copy_constructible_v<ScopeExit<decltype(f)>>);
  STATIC_REQUIRE_FALSE(std::is_move_constructible_v<ScopeExit<decltype(f)>>);
}

}  // namespace
}  // namespace ssmtune
