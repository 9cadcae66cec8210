// bench/compare.py's JSON read into entries keyed like ssmtune's problems.
#include "report/bench_json.h"

#include <catch2/catch.hpp>

namespace ssmtune::report {

TEST_CASE("bench JSON: shapes become problem keys with the mamba_ssm and ssmtune medians",
          "[report]") {
  const auto j = nlohmann::json::parse(R"({
    "meta": {"device": "NVIDIA H200", "full": true},
    "shapes": [
      {"shape": {"batch": 8, "dim": 1536, "seqlen": 2048, "dstate": 16, "dtype": "bf16", "groups": 1},
       "contenders": {"mamba_ssm": {"status": "ok", "timing": {"median_ms": 0.4}},
                      "ssmtune": {"status": "ok", "timing": {"median_ms": 0.2}}}},
      {"shape": {"batch": 1, "dim": 64, "seqlen": 17, "dstate": 4, "dtype": "fp32", "groups": 1},
       "contenders": {"mamba_ssm": {"status": "skipped", "reason": "not importable"}}}
    ]})");
  auto e = parse_bench_json(j, "b.json");
  REQUIRE(e);
  REQUIRE(e->size() == 2);
  CHECK((*e)[0].device_name == "NVIDIA H200");
  CHECK((*e)[0].problem_key == "fwd:b8.d1536.l2048.n16.g1.bf16.vB.vC.D.z.bias.sp");
  CHECK((*e)[0].mamba_ms == 0.4);
  CHECK((*e)[0].ssmtune_ms == 0.2);
  CHECK((*e)[1].problem_key == "fwd:b1.d64.l17.n4.g1.fp32.vB.vC.D.z.bias.sp");
  CHECK((*e)[1].mamba_ms == 0);
}

TEST_CASE("bench JSON: other files are refused with the reason", "[report]") {
  CHECK_FALSE(parse_bench_json(nlohmann::json::array(), "x.json"));
  auto e = parse_bench_json(nlohmann::json::parse(R"({"meta": {}, "shapes": [{"shape": {}}]})"),
                            "x.json");
  REQUIRE_FALSE(e);
  CHECK(e.status().message().find("x.json") != std::string::npos);
  CHECK_FALSE(read_bench_json("/nonexistent/file.json"));
}

}  // namespace ssmtune::report
