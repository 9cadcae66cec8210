// Which backward plans take saved states, at which interval (no GPU).
#include "tuner/bwd/states.h"

#include <catch2/catch.hpp>

#include "support/problems.h"

namespace ssmtune::bwd {
namespace {

TEST_CASE("saved states: intervals are powers of two in [4, 4096]", "[bwd]") {
  for (int i : {4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096}) {
    CHECK(valid_states_interval(i));
    CHECK((1 << states_shift(i)) == i);
  }
  for (int i : {-16, 0, 1, 2, 3, 12, 20, 48, 3072, 8192, 1 << 20})
    CHECK_FALSE(valid_states_interval(i));
}

TEST_CASE("saved states: fp32 plans with a power-of-two chunk and more than one chunk", "[bwd]") {
  BwdProblem p;
  p.fwd = testing::shape(2, 64, 1000, 16, DType::kBF16);
  BwdConfig c = default_config(p, BwdAcc::kF32, 227 * 1024).config;
  REQUIRE(c.chunk == 16);
  auto plan = plan_bwd(p, c, 227 * 1024);
  REQUIRE(plan.is_ok());
  CHECK(states_interval(c, *plan) == 16);
  // fp64 accumulation keeps its checkpoints in doubles: none taken.
  BwdConfig f64 = default_config(p, BwdAcc::kF64, 227 * 1024).config;
  auto plan64 = plan_bwd(p, f64, 227 * 1024);
  REQUIRE(plan64.is_ok());
  CHECK(states_interval(f64, *plan64) == 0);
  // A chunk of 12 is legal for the backward but not an interval.
  BwdConfig twelve = c;
  twelve.chunk = 12;
  auto plan12 = plan_bwd(p, twelve, 227 * 1024);
  REQUIRE(plan12.is_ok());
  CHECK(states_interval(twelve, *plan12) == 0);
  // One chunk: nothing to save.
  p.fwd.seqlen = 16;
  const BwdConfig short_c = default_config(p, BwdAcc::kF32, 227 * 1024).config;
  auto one = plan_bwd(p, short_c, 227 * 1024);
  INFO(short_c.key() << ": " << one.status().to_string());
  REQUIRE(one.is_ok());
  REQUIRE(one->n_chunks == 1);
  CHECK(states_interval(short_c, *one) == 0);
}

}  // namespace
}  // namespace ssmtune::bwd
