// The JSON form of a Measurement: every visited field and error round-trips
// (non-finite numbers included), and bad input names the field.
#include "tuner/records_json.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

namespace ssmtune {
namespace {

Measurement sample() {
  Measurement m;
  m.family = "fwd";
  m.device_uuid = "GPU-1";
  m.problem_key = "fwd:b1.d4.l8.n4.g1.fp32";
  m.config_key = "seq.K64.D8.fp32.t128.i8.s1.fast";
  m.status = MeasureStatus::kInaccurate;
  m.median_ms = std::numeric_limits<double>::quiet_NaN();
  m.spread_ms = std::numeric_limits<double>::infinity();
  m.repeats = 7;
  m.detail = "line 1\nline \"2\"";
  m.timestamp = int64_t{1} << 40;
  m.driver_version = 13000;
  for (const char* o : {"out", "last_state"}) {
    OutputError e;
    e.output = o;
    e.rel_l2 = 1e-5;
    e.max_rel = -std::numeric_limits<double>::infinity();
    e.unwritten = 3;
    e.budget = 1e-4;
    e.verdict = "defect";
    m.errors.push_back(e);
  }
  summarize_errors(m);
  return m;
}

TEST_CASE("a measurement round-trips through its JSON form", "[tuner][records]") {
  const Measurement m = sample();
  const nlohmann::json j = to_json(m);
  CHECK(j["median_ms"].is_null());
  CHECK(j["spread_ms"] == "inf");
  CHECK(j["status"] == "inaccurate");
  CHECK(j["errors"][1]["max_rel"] == "-inf");
  CHECK(j["unwritten"] == 6);
  Measurement back;
  REQUIRE(measurement_from_json(nlohmann::json::parse(j.dump()), "m", back).is_ok());
  CHECK(to_json(back) == j);
  CHECK(std::isnan(back.median_ms));
  CHECK(back.errors.size() == 2);
  CHECK(back.timestamp == int64_t{1} << 40);
}

TEST_CASE("bad measurement JSON names the field", "[tuner][records]") {
  nlohmann::json j = to_json(sample());
  Measurement m;
  auto message = [&](const nlohmann::json& x) {
    return measurement_from_json(x, "measurements[2]", m, {"timestamp"}).message();
  };
  nlohmann::json bad = j;
  bad["repeats"] = 1.5;
  CHECK(message(bad) == "measurements[2].repeats: expected an integer");
  bad = j;
  bad["status"] = "exploded";
  CHECK(message(bad).find("measurements[2].status: unknown measurement status") == 0);
  bad = j;
  bad["median_ms"] = "fast";
  CHECK(message(bad).find("measurements[2].median_ms") == 0);
  bad = j;
  bad.erase("timestamp");
  CHECK(message(bad) == "measurements[2].timestamp: missing");
  bad = j;
  bad["errors"][1]["output"] = "out";
  CHECK(message(bad) == "measurements[2].errors[1]: output 'out' repeated");
  bad = j;
  bad["errors"] = 3;
  CHECK(message(bad) == "measurements[2].errors: expected an array");
  CHECK(message(nlohmann::json::array()) == "measurements[2]: expected an object");
}

}  // namespace
}  // namespace ssmtune
