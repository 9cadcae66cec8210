// End-to-end: `ssmtune tune` on a small shape writes measurements with
// their statuses and a best entry that `ssmtune db best` reports; a
// deliberately faulting config is recorded as faulted and the run goes on.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "cache/tuning_db.h"
#include "support/run_command.h"
#include "tuner/heuristics.h"
#include "tuner/records.h"

namespace ssmtune {
namespace {

TEST_CASE("tune writes measurements and a best entry; a fault is recorded, not fatal",
          "[gpu][tuner]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "ssmtune_tune_gpu_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string db = (dir / "tuning.db").string();
  Problem p;
  p.batch = 2;
  p.dim = 64;
  p.seqlen = 256;
  p.dstate = 4;
  const std::string faulty = default_config(p, ScanAlgo::kSequential).key();
  const std::string cmd = "SSMTUNE_FAULT_CONFIG=" + faulty + " " + SSMTUNE_BINARY +
                          " tune --batch 2 --dim 64 --seqlen 256 --dstate 4 --db " + db +
                          " --format json";
  auto r = testing::run_command(cmd, false);
  INFO(cmd << "\n" << r.out);
  REQUIRE(r.exit_code == 0);
  auto summary = nlohmann::json::parse(r.out);
  REQUIRE(summary.size() == 1);
  CHECK(summary[0]["problem"] == p.key());
  CHECK(summary[0]["faulted"].get<int>() >= 1);
  CHECK(summary[0]["timed"].get<int>() > 10);

  auto tdb = cache::TuningDb::open(db, cache::OpenMode::kReadOnly);
  REQUIRE(tdb.is_ok());
  auto ms = tdb->measurements({});
  REQUIRE(ms.is_ok());
  std::map<std::string, int> by_status;
  bool fault_seen = false;
  for (const auto& m : *ms) {
    ++by_status[to_string(m.status)];
    if (m.config_key == faulty && m.status == MeasureStatus::kFaulted) fault_seen = true;
    CHECK(m.family == "fwd");
    if (m.status == MeasureStatus::kOk) {
      // Every scored output has its error (this problem has only `out`).
      REQUIRE(m.errors.size() == 1);
      CHECK(m.errors[0].output == "out");
      CHECK(m.errors[0].rel_l2 == m.rel_l2);
      CHECK(m.errors[0].budget == m.error_budget);
    }
  }
  CHECK(fault_seen);
  CHECK(by_status["ok"] > 10);
  CHECK(by_status["pruned"] > 0);
  // Configs after the fault were still measured: the run went on.
  CHECK(by_status["ok"] + by_status["inaccurate"] + by_status["faulted"] >= 20);

  auto best = testing::run_command(
      std::string(SSMTUNE_BINARY) + " db best --db " + db + " --format json", false);
  INFO(best.out);
  REQUIRE(best.exit_code == 0);
  auto bj = nlohmann::json::parse(best.out);
  REQUIRE(bj.size() == 1);
  CHECK(bj[0]["problem"] == "fwd:" + p.key());
  const std::string best_key = bj[0]["config"].get<std::string>();
  CHECK(best_key != faulty);
  CHECK(best_key == summary[0]["best"].get<std::string>());

  // A second run finds the shape tuned and stops at once; --resume goes
  // through the space, and everything comes from the database.
  const std::string rerun = std::string(SSMTUNE_BINARY) +
                            " tune --batch 2 --dim 64 --seqlen 256 --dstate 4 --db " + db +
                            " --format json";
  auto again = testing::run_command(rerun, false);
  REQUIRE(again.exit_code == 0);
  auto aj = nlohmann::json::parse(again.out);
  CHECK(aj[0]["timed"].get<int>() == 0);
  CHECK(aj[0]["best"] == best_key);
  CHECK(aj[0]["wall_s"].get<double>() < 1.0);
  auto resumed = testing::run_command(rerun + " --resume", false);
  REQUIRE(resumed.exit_code == 0);
  auto rj = nlohmann::json::parse(resumed.out);
  CHECK(rj[0]["timed"].get<int>() == 0);
  CHECK(rj[0]["from_db"].get<int>() > 10);
  CHECK(rj[0]["best"] == best_key);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ssmtune
