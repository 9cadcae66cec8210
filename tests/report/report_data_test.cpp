// load_model from a database seeded through the TuningDb API.
#include "report/report_data.h"

#include <catch2/catch.hpp>

#include "report/report_fixtures.h"

namespace ssmtune::report {

TEST_CASE("load_model: devices, problems, measurements, stale flags, defaults", "[report]") {
  testing::TempDir dir;
  auto db = cache::TuningDb::open(dir.file("t.db"), cache::OpenMode::kReadWrite);
  REQUIRE(db);
  const uint64_t seed = 20261203;
  INFO("seed " << seed);
  const auto seeded = testing::seed_report_db(*db, seed);
  auto m = load_model(*db, testing::sample_versions(), "driver 13.0");
  REQUIRE(m);
  CHECK(m->source == dir.file("t.db"));
  CHECK(m->versions == "driver 13.0");
  REQUIRE(m->devices.size() == 2);
  CHECK(m->devices[0].arch == "sm_90");
  CHECK(m->devices[0].driver == "13.0");
  CHECK(m->problems.size() == 3);
  for (const auto& p : m->problems) CHECK(p.family == "fwd");
  size_t stale = 0, timed = 0;
  for (const auto& x : m->measurements) {
    stale += x.stale ? 1 : 0;
    if (!x.stale && (x.status == "ok" || x.status == "inaccurate")) {
      ++timed;
      REQUIRE(!x.errors.empty());
      CHECK(x.errors[0].output == "out");
    }
    if (x.status == "pruned") CHECK(x.errors.empty());
  }
  CHECK(stale == static_cast<size_t>(seeded.stale_measurements));
  CHECK(timed == static_cast<size_t>(seeded.timed_current));
  REQUIRE(m->best.size() == static_cast<size_t>(seeded.best_entries));
  int stale_best = 0;
  for (const auto& b : m->best) {
    if (b.stale) {
      ++stale_best;
      CHECK(b.stale_why.find("driver") != std::string::npos);
    }
  }
  CHECK(stale_best == 1);
  // Every (device, problem) has its default, and the seed measured it.
  CHECK(m->defaults.size() == 5);
  for (const auto& d : m->defaults) {
    bool measured = false;
    for (const auto& x : m->measurements)
      measured = measured || (x.device_uuid == d.device_uuid && x.problem_key == d.problem_key &&
                              x.config_key == d.config_key);
    CHECK(measured);
  }
}

TEST_CASE("load_model of an empty database", "[report]") {
  testing::TempDir dir;
  auto db = cache::TuningDb::open(dir.file("t.db"), cache::OpenMode::kReadWrite);
  REQUIRE(db);
  auto m = load_model(*db, testing::sample_versions(), "");
  REQUIRE(m);
  CHECK(m->empty());
}

}  // namespace ssmtune::report
