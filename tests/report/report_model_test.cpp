// The report's model: families from problem keys, selection, config axes.
#include "report/report_model.h"

#include <catch2/catch.hpp>

namespace ssmtune::report {
namespace {

Model two_families() {
  Model m;
  m.devices = {{"GPU-a", "NVIDIA H200", "sm_90", 132, "13.0", "13.0"},
               {"GPU-b", "NVIDIA H100", "sm_90", 114, "13.0", "13.0"}};
  m.problems = {{"b1.d8.l17.n4.g1.fp32", "fwd"}, {"bwd:b1.d8.l17.n4.g1.fp32", "bwd"}};
  for (const auto& d : m.devices)
    for (const auto& p : m.problems) {
      Measurement x;
      x.device_uuid = d.uuid;
      x.problem_key = p.key;
      x.config_key = "seq.K64.D8.fp32.t128.i8.s1.fast";
      x.status = "ok";
      m.measurements.push_back(x);
      m.best.push_back({d.uuid, p.key, x.config_key, 1, 0, 0, 0, "", false, ""});
      m.defaults.push_back({d.uuid, p.key, x.config_key});
    }
  return m;
}

}  // namespace

TEST_CASE("family_of reads the key's prefix; none is fwd", "[report]") {
  CHECK(family_of("b8.d1536.l2048.n16.g1.bf16.vB.vC") == "fwd");
  CHECK(family_of("fwd:b8.d1536") == "fwd");
  CHECK(family_of("bwd:b8.d1536") == "bwd");
  CHECK(family_of("step:b1") == "step");
}

TEST_CASE("select narrows every table by GPU, family and problem", "[report]") {
  const Model m = two_families();
  CHECK(select(m, {}).measurements.size() == 4);
  const Model by_name = select(m, {{"NVIDIA H100"}, {}, {}});
  CHECK(by_name.devices.size() == 1);
  CHECK(by_name.measurements.size() == 2);
  CHECK(by_name.best.size() == 2);
  CHECK(by_name.defaults.size() == 2);
  const Model by_uuid_family = select(m, {{"GPU-a"}, {"bwd"}, {}});
  REQUIRE(by_uuid_family.measurements.size() == 1);
  CHECK(by_uuid_family.measurements[0].problem_key == "bwd:b1.d8.l17.n4.g1.fp32");
  const Model by_problem = select(m, {{}, {}, {"b1.d8.l17.n4.g1.fp32"}});
  CHECK(by_problem.problems.size() == 1);
  CHECK(by_problem.best.size() == 2);
  CHECK(select(m, {{"nope"}, {}, {}}).empty());
}

TEST_CASE("empty and stale-only models", "[report]") {
  Model m;
  CHECK(m.empty());
  CHECK_FALSE(m.stale_only());
  m = two_families();
  CHECK_FALSE(m.stale_only());
  for (auto& x : m.measurements) x.stale = true;
  CHECK_FALSE(m.stale_only());  // best entries still current
  for (auto& b : m.best) b.stale = true;
  CHECK(m.stale_only());
}

TEST_CASE("config axes: forward keys parsed, others by K and D tokens", "[report]") {
  const ConfigAxes f = config_axes("fwd", "warpscan.K128.D4.fp32.t128.i8.s1.fast");
  CHECK(f.ok);
  CHECK(f.algo == "warpscan");
  CHECK(f.chunk == 128);
  CHECK(f.d_step == 4);
  const ConfigAxes b = config_axes("bwd", "chunked.K64.D16.fp32.t256");
  CHECK(b.ok);
  CHECK(b.algo == "chunked");
  CHECK(b.chunk == 64);
  CHECK(b.d_step == 16);
  CHECK_FALSE(config_axes("bwd", "chunked.t256").ok);
  CHECK_FALSE(config_axes("fwd", "").ok);
  // A malformed forward key falls back to the tokens.
  CHECK(config_axes("fwd", "newalgo.K32.D2.x").chunk == 32);
}

TEST_CASE("a measurement's error is its worst output's", "[report]") {
  Measurement x;
  CHECK(x.error() == 0);
  x.errors = {{"du", 1e-6}, {"dA", 3e-5}, {"dB", 2e-6}};
  CHECK(x.error() == 3e-5);
}

}  // namespace ssmtune::report
