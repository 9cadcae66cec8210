#include "tuner/selection.h"

#include <catch2/catch.hpp>
#include <limits>

namespace ssmtune {
namespace {

Measurement ok(const std::string& config, double median, double spread, double rel_l2,
               double budget = 2e-5) {
  Measurement m;
  m.device_uuid = "GPU-x";
  m.problem_key = "b1.d16.l17.n16.g1.fp32";
  m.config_key = config;
  m.median_ms = median;
  m.spread_ms = spread;
  m.rel_l2 = rel_l2;
  m.error_budget = budget;
  m.verdict = "inside";
  return m;
}

const std::string& reason_of(const Selection& s, const std::string& config) {
  for (const auto& [m, why] : s.others)
    if (m.config_key == config) return why;
  static const std::string kNone = "(not listed)";
  return kNone;
}

TEST_CASE("the fastest config inside its budget is selected", "[tuner]") {
  auto s = select_best(
      {ok("a", 0.130, 0.001, 3e-6), ok("b", 0.112, 0.001, 3.1e-6), ok("c", 0.2, 0.001, 1e-7)}, 0);
  REQUIRE(s.found);
  CHECK(s.best.config_key == "b");
  CHECK(s.rule == "fastest inside budget (0.112 ms, rel L2 3.1e-6 <= 2e-5)");
  REQUIRE(s.others.size() == 2);
  CHECK(s.others[0].first.config_key == "a");  // eligible losers, fastest first
  CHECK(reason_of(s, "a") == "slower: 0.130 ms vs 0.112 ms");
  CHECK(reason_of(s, "c") == "slower: 0.200 ms vs 0.112 ms");
}

TEST_CASE("a difference within the spread is a tie that goes to the more accurate", "[tuner]") {
  // b is 0.003 ms slower than a, inside b's spread of 0.004 ms.
  auto s = select_best({ok("a", 0.112, 0.001, 3e-6), ok("b", 0.115, 0.004, 1e-7),
                        ok("c", 0.113, 0.0005, 5e-6), ok("d", 0.125, 0.004, 1e-9)},
                       0);
  REQUIRE(s.found);
  CHECK(s.best.config_key == "b");
  CHECK(s.rule.rfind("tie with a within spread 0.004 ms; more accurate (rel L2 1e-7 vs 3e-6)", 0) ==
        0);
  CHECK(reason_of(s, "a").rfind("tie with b within spread", 0) == 0);
  CHECK(reason_of(s, "a").find("less accurate (rel L2 3e-6 vs 1e-7)") != std::string::npos);
  CHECK(reason_of(s, "c").find("less accurate") != std::string::npos);
  // d is more accurate still, but outside the spread of the fastest.
  CHECK(reason_of(s, "d") == "slower: 0.125 ms vs 0.115 ms");
}

TEST_CASE("the fastest keeps a tie it is most accurate in; equal ties are deterministic",
          "[tuner]") {
  auto s = select_best({ok("b", 0.101, 0.002, 1e-6), ok("a", 0.100, 0.002, 1e-7)}, 0);
  REQUIRE(s.found);
  CHECK(s.best.config_key == "a");
  CHECK(s.rule.find("the most accurate of 2 tied within spread") != std::string::npos);
  auto same = select_best({ok("y", 0.1, 0.0, 1e-6), ok("x", 0.1, 0.0, 1e-6)}, 0);
  CHECK(same.best.config_key == "x");
  CHECK(reason_of(same, "y").find("as accurate and slower") != std::string::npos);
}

TEST_CASE("over budget, outside and defect measurements are not selected", "[tuner]") {
  auto over = ok("over", 0.05, 0.001, 4e-3);
  auto outside = ok("outside", 0.06, 0.001, 1e-5);
  outside.verdict = "outside";
  auto defect = ok("defect", 0.01, 0.001, 0.26);
  defect.verdict = "defect";
  auto nan = ok("nan", 0.02, 0.001, std::numeric_limits<double>::infinity());
  nan.nan_inf = 7;
  auto unbudgeted = ok("unbudgeted", 0.03, 0.001, 1e-7, 0);
  auto s = select_best({over, outside, defect, nan, unbudgeted, ok("good", 0.2, 0.001, 1e-6)}, 0);
  REQUIRE(s.found);
  CHECK(s.best.config_key == "good");
  CHECK(reason_of(s, "over") == "over budget: rel L2 0.004 > 2e-5");
  CHECK(reason_of(s, "outside").find("outside its own budget") != std::string::npos);
  CHECK(reason_of(s, "defect").rfind("defect: rel L2 0.26", 0) == 0);
  CHECK(reason_of(s, "nan") == "defect: 7 NaN/Inf outputs");
  CHECK(reason_of(s, "unbudgeted") == "no error budget recorded");
  CHECK(s.others.size() == 5);
}

TEST_CASE("max_error tightens the budget", "[tuner]") {
  const std::vector<Measurement> ms = {ok("fast", 0.1, 0.001, 5e-6), ok("slow", 0.2, 0.001, 1e-7)};
  CHECK(select_best(ms, 0).best.config_key == "fast");
  auto tight = select_best(ms, 1e-6);
  REQUIRE(tight.found);
  CHECK(tight.best.config_key == "slow");
  CHECK(tight.rule == "fastest inside budget (0.200 ms, rel L2 1e-7 <= 1e-6)");
  CHECK(reason_of(tight, "fast") == "over budget: rel L2 5e-6 > 1e-6");
  // A looser max_error does not admit what the measurement's scoring rejected.
  auto outside = ok("outside", 0.05, 0.001, 1e-4);
  outside.verdict = "outside";
  CHECK(select_best({outside, ms[1]}, 1e-3).best.config_key == "slow");
  CHECK_FALSE(select_best(ms, 1e-9).found);
}

TEST_CASE("when every config failed nothing is selected and each says why", "[tuner]") {
  auto pruned = ok("p", 0, 0, 0);
  pruned.status = MeasureStatus::kPruned;
  pruned.detail = "255 registers > 128 allowed";
  auto faulted = ok("f", 0, 0, 0);
  faulted.status = MeasureStatus::kFaulted;
  faulted.detail = "CUDA_ERROR_ILLEGAL_ADDRESS";
  auto compile = ok("c", 0, 0, 0);
  compile.status = MeasureStatus::kCompileFailed;
  auto s = select_best({pruned, faulted, compile}, 0);
  CHECK_FALSE(s.found);
  REQUIRE(s.others.size() == 3);
  CHECK(s.others[0].second == "pruned: 255 registers > 128 allowed");
  CHECK(s.others[1].second == "faulted: CUDA_ERROR_ILLEGAL_ADDRESS");
  CHECK(s.others[2].second == "compile_failed");
  CHECK_FALSE(select_best({}, 0).found);
}

TEST_CASE("numbers in reasons are short", "[tuner]") {
  CHECK(format_error(3.1e-6) == "3.1e-6");
  CHECK(format_error(2e-5) == "2e-5");
  CHECK(format_error(0.26) == "0.26");
  CHECK(format_ms(0.112) == "0.112");
  CHECK(format_ms(0.0041) == "0.0041");
  CHECK(format_ms(123.456) == "123.5");
}

}  // namespace
}  // namespace ssmtune
