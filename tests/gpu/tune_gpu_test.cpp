// Tuning end to end on the GPU: the library's tuning session with a
// config that faults in its worker (recorded as faulted; the session goes
// on), and `ssmtune tune` writing measurements and a best entry that a rerun
// and `ssmtune db best` find.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "cache/sqlite_cubin_cache.h"
#include "cache/tuning_db.h"
#include "jit/compiler.h"
#include "support/run_command.h"
#include "tuner/fwd/family.h"
#include "tuner/fwd/heuristics.h"
#include "tuner/session.h"
#include "tuner/worker_measurer.h"

namespace ssmtune {
namespace {

// A Measurer that runs one chosen config in the fault worker (whose kernel
// writes through an illegal address and dies) and every other config in
// real `ssmtune worker` processes.
class FaultInjectingMeasurer final : public Measurer {
 public:
  FaultInjectingMeasurer(const WorkerOptions& real, std::string faulty)
      : real_(real), faulty_key_(std::move(faulty)) {
    WorkerOptions f = real;
    f.exe = SSMTUNE_FAULT_WORKER;
    fault_ = std::make_unique<WorkerMeasurer>(f);
  }
  Result<MeasurerInfo> start(const std::string& problem_key) override {
    problem_ = problem_key;
    return real_.start(problem_key);
  }
  Measurement measure(const std::string& config, double target_ms) override {
    if (config != faulty_key_) return real_.measure(config, target_ms);
    ++faults_asked;
    auto s = fault_->start(problem_);
    if (!s) {
      Measurement m;
      m.status = MeasureStatus::kLaunchFailed;
      m.detail = s.status().to_string();
      return m;
    }
    return fault_->measure(config, target_ms);
  }
  void stop() override {
    real_.stop();
    fault_->stop();
  }
  int faults_asked = 0;

 private:
  WorkerMeasurer real_;
  std::unique_ptr<WorkerMeasurer> fault_;
  std::string faulty_key_;
  std::string problem_;
};

FwdProblem small_problem() {
  FwdProblem p;
  p.batch = 2;
  p.dim = 64;
  p.seqlen = 256;
  p.dstate = 4;
  return p;
}

TEST_CASE("a library tune records a faulting config as faulted and goes on", "[gpu][tuner]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "ssmtune_tune_fault_gpu_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string db_path = (dir / "tuning.db").string();
  auto db = cache::TuningDb::open(db_path, cache::OpenMode::kReadWrite);
  REQUIRE(db.is_ok());
  auto cubins = cache::SqliteCubinCache::open(db_path);
  REQUIRE(cubins.is_ok());
  jit::Compiler compiler(jit::TemplateSources::embedded(), cubins->get());
  const FwdProblem p = small_problem();
  const std::string faulty = default_config(p, ScanAlgo::kSequential).key();
  WorkerOptions wo;
  wo.exe = SSMTUNE_BINARY;
  wo.db_path = db_path;
  wo.seed = 7;
  FaultInjectingMeasurer measurer(wo, faulty);
  TuneOptions o;
  o.strategy = "exhaustive";
  int events = 0;
  auto r = tune_problem(*db, compiler, measurer, fwd_family(), FwdFamilyProblem(p), o,
                        [&events](const TuneEvent&) { ++events; });
  INFO(r.status().to_string());
  REQUIRE(r.is_ok());
  CHECK(measurer.faults_asked == 1);
  CHECK(r->faulted >= 1);
  CHECK(r->timed > 10);
  CHECK(events > r->timed);
  REQUIRE(r->found);
  CHECK(r->best_config != faulty);

  MeasurementFilter f;
  f.problem_key = p.key();
  auto ms = db->measurements(f);
  REQUIRE(ms.is_ok());
  std::map<std::string, int> by_status;
  bool fault_seen = false;
  for (const auto& m : *ms) {
    ++by_status[to_string(m.status)];
    if (m.config_key == faulty && m.status == MeasureStatus::kFaulted) fault_seen = true;
    if (m.status == MeasureStatus::kOk) {
      // Every measured output is recorded with its own error.
      REQUIRE(!m.errors.empty());
      CHECK(m.errors[0].output == "out");
      CHECK(m.errors[0].rel_l2 <= m.errors[0].budget);
    }
  }
  CHECK(fault_seen);
  CHECK(by_status["ok"] > 10);
  CHECK(by_status["pruned"] > 0);
  // Configs after the fault were still measured: the run went on.
  CHECK(by_status["ok"] + by_status["inaccurate"] + by_status["faulted"] >= 20);
  fs::remove_all(dir);
}

TEST_CASE("ssmtune tune writes measurements and a best entry; a rerun comes from the database",
          "[gpu][tuner]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "ssmtune_tune_gpu_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string db = (dir / "tuning.db").string();
  const FwdProblem p = small_problem();
  const std::string cmd = std::string(SSMTUNE_BINARY) +
                          " tune --batch 2 --dim 64 --seqlen 256 --dstate 4 --db " + db +
                          " --time-limit 20 --format json";
  auto r = testing::run_command(cmd, false);
  INFO(cmd << "\n" << r.out);
  REQUIRE(r.exit_code == 0);
  auto summary = nlohmann::json::parse(r.out);
  REQUIRE(summary.size() == 1);
  CHECK(summary[0]["problem"] == p.key());
  CHECK(summary[0]["timed"].get<int>() > 10);

  auto best = testing::run_command(
      std::string(SSMTUNE_BINARY) + " db best --db " + db + " --format json", false);
  INFO(best.out);
  REQUIRE(best.exit_code == 0);
  auto bj = nlohmann::json::parse(best.out);
  REQUIRE(bj.size() == 1);
  CHECK(bj[0]["problem"] == p.key());
  const std::string best_key = bj[0]["config"].get<std::string>();
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
  auto resumed = testing::run_command(rerun + " --resume --time-limit 20", false);
  REQUIRE(resumed.exit_code == 0);
  auto rj = nlohmann::json::parse(resumed.out);
  CHECK(rj[0]["from_db"].get<int>() > 10);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ssmtune
