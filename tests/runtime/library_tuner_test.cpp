// Tuning from the library without a GPU: a toy kernel family (test
// templates) tuned in this process, its configs compiled here by NVRTC and
// "measured" by a stand-in worker program that speaks the worker protocol;
// the database then holds every measurement and the best. Tune on first use
// runs once per problem and reports a failing worker in its note. The
// budget from the environment.
#include "runtime/library_tuner.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "cache/tuning_db.h"
#include "support/temp_dir.h"
#include "support/test_family.h"

namespace ssmtune {
namespace {

namespace fs = std::filesystem;

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    had_ = std::getenv(name) != nullptr;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      ::setenv(name_, old_.c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// "toy:n<size>": configs "i1", "i2", "i4" (linear_recurrence<float, items>)
// and "i8", pruned before compiling.
class ToyProblem final : public FamilyProblem {
 public:
  explicit ToyProblem(int n) : n_(n) {}
  std::string key() const override { return "toy:n" + std::to_string(n_); }
  std::string class_key() const override { return "toy"; }
  double distance(const FamilyProblem&) const override { return 0; }
  Floors floors(const jit::DeviceInfo&) const override { return {}; }

 private:
  int n_;
};

class ToyFamily final : public KernelFamily {
 public:
  const char* name() const override { return "toy"; }
  const char* summary() const override { return "a test family"; }
  Result<std::unique_ptr<FamilyProblem>> parse_problem(const std::string&) const override {
    return Status::unsupported("toy problems are made in the test");
  }
  Result<std::string> canonical_config(const std::string& c) const override { return c; }
  Status check_config(const FamilyProblem&, const std::string&,
                      const jit::DeviceInfo&) const override {
    return Status::ok();
  }
  std::vector<SpaceEntry> search_space(const FamilyProblem&, const jit::DeviceInfo&,
                                       const SpaceOptions&) const override {
    return {{"i1"}, {"i2"}, {"i4"}, {"i8", true, "too many items for the test"}};
  }
  DefaultChoice heuristic_default(const FamilyProblem&, const jit::DeviceInfo&) const override {
    return {"i1", "the first"};
  }
  std::vector<std::string> first_look_order(const std::vector<std::string>& candidates,
                                            const std::string&) const override {
    return candidates;
  }
  std::string prune_by_resources(const FamilyProblem&, const std::string&,
                                 const std::vector<jit::KernelImage>&,
                                 const jit::DeviceInfo&) const override {
    return "";
  }
  bool is_fp64_anchor(const std::string&) const override { return false; }
  Result<std::vector<jit::Instantiation>> instantiations(const FamilyProblem&,
                                                         const std::string& config,
                                                         const jit::DeviceInfo&) const override {
    return testing::linear_recurrence_family({std::stoi(config.substr(1))});
  }
  Result<std::unique_ptr<ProblemBench>> make_bench(const FamilyProblem&, const jit::DeviceInfo&,
                                                   jit::Compiler&, const BenchOptions&,
                                                   CUstream) const override {
    return Status::unsupported("the stand-in worker measures toy configs");
  }
};

// A directory of its own per test, removed at the end.
// A stand-in `ssmtune worker`: logs its arguments, greets with a device,
// then answers each request with an ok measurement (i2 fastest).
fs::path write_worker(const fs::path& dir, const fs::path& log) {
  fs::path exe = dir / "ssmtune";
  std::ofstream(exe)
      << "#!/bin/sh\n"
      << "echo \"$@\" >> " << log.string() << "\n"
      << "echo '{\"hello\":true,\"device\":{\"ordinal\":0,\"name\":\"stand-in\","
         "\"uuid\":\"GPU-standin\",\"cc_major\":9,\"cc_minor\":0,\"sm_count\":132,"
         "\"max_shared_per_block\":232448,\"driver_version\":12080,\"nvrtc_version\":\"12.8\"},"
         "\"seed\":5,\"reference\":\"cpu fp64\",\"template_hash\":\"standin\"}'\n"
      << "while read line; do\n"
      << "  case \"$line\" in\n"
      << "    *'\"i1\"'*) ms=3.0;;\n"
      << "    *'\"i2\"'*) ms=1.0;;\n"
      << "    *) ms=2.0;;\n"
      << "  esac\n"
      << "  echo \"{\\\"status\\\":\\\"ok\\\",\\\"median_ms\\\":$ms,\\\"spread_ms\\\":0.01,"
         "\\\"min_ms\\\":$ms,\\\"repeats\\\":10,\\\"rel_l2\\\":1e-7,\\\"error_budget\\\":1e-3,"
         "\\\"verdict\\\":\\\"inside\\\",\\\"errors\\\":[{\\\"output\\\":\\\"out\\\","
         "\\\"rel_l2\\\":1e-7,\\\"budget\\\":1e-3,\\\"verdict\\\":\\\"inside\\\"}]}\"\n"
      << "done\n";
  fs::permissions(exe, fs::perms::owner_all);
  return exe;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

LibraryTunerOptions options_for(const fs::path& dir, const fs::path& worker) {
  LibraryTunerOptions o;
  o.db_path = (dir / "tuning.db").string();
  o.worker_exe = worker.string();
  o.config_timeout_s = 20;
  o.first_use_progress = false;
  return o;
}

TEST_CASE("a library tune runs the session in process and records measurements and the best",
          "[runtime][tuner]") {
  const testing::TempDir tmp_dir;
  const fs::path dir = tmp_dir.path();
  const fs::path log = dir / "worker.log";
  LibraryTuner tuner(options_for(dir, write_worker(dir, log)), testing::test_sources());
  ToyFamily family;
  std::map<TuneEvent::Kind, int> events;
  int measured_last = 0;
  TuneOptions o;
  o.strategy = "exhaustive";
  auto r = tuner.tune(family, ToyProblem(8), o, [&](const TuneEvent& e) {
    ++events[e.kind];
    if (e.kind == TuneEvent::kMeasured) measured_last = e.done;
  });
  INFO(r.status().to_string());
  REQUIRE(r.is_ok());
  CHECK(r->problem_key == "toy:n8");
  CHECK(r->configs == 4);
  CHECK(r->pruned == 1);
  CHECK(r->compiled == 3);
  CHECK(r->compile_failed == 0);
  CHECK(r->timed == 3);
  REQUIRE(r->found);
  CHECK(r->best_config == "i2");
  CHECK(r->best_ms == 1.0);
  CHECK(events[TuneEvent::kStart] == 1);
  CHECK(events[TuneEvent::kMeasured] == 3);
  CHECK(events[TuneEvent::kDone] == 1);
  CHECK(measured_last == 3);

  // The worker was started as a worker (one process for the whole session):
  // no `ssmtune tune` child tuned here.
  const std::string argv = read_text(log);
  CHECK(count_lines(argv) == 1);
  CHECK(argv.rfind("worker --problem toy:n8", 0) == 0);
  CHECK(argv.find("--db " + (dir / "tuning.db").string()) != std::string::npos);

  auto db = cache::TuningDb::open((dir / "tuning.db").string(), cache::OpenMode::kReadOnly);
  REQUIRE(db.is_ok());
  MeasurementFilter f;
  f.problem_key = "toy:n8";
  auto ms = db->measurements(f);
  REQUIRE(ms.is_ok());
  std::map<std::string, int> by_status;
  for (const auto& m : *ms) ++by_status[to_string(m.status)];
  CHECK(by_status["ok"] == 3);
  CHECK(by_status["pruned"] == 1);
  auto best = db->best("GPU-standin", "toy:n8", Versions{12080, "12.8", "standin"});
  REQUIRE(best.is_ok());
  REQUIRE(best->has_value());
  CHECK((*best)->config_key == "i2");
  CHECK((*best)->family == "toy");
}

TEST_CASE("a cancel ends a library tune early and the best so far is recorded",
          "[runtime][tuner]") {
  const testing::TempDir tmp_dir;
  const fs::path dir = tmp_dir.path();
  LibraryTuner tuner(options_for(dir, write_worker(dir, dir / "worker.log")),
                     testing::test_sources());
  ToyFamily family;
  std::atomic<bool> cancel{false};
  TuneOptions o;
  o.strategy = "exhaustive";
  o.cancel = &cancel;
  auto r = tuner.tune(family, ToyProblem(9), o, [&](const TuneEvent& e) {
    if (e.kind == TuneEvent::kMeasured) cancel = true;  // after the first config
  });
  REQUIRE(r.is_ok());
  CHECK(r->timed == 1);
  CHECK(r->cancelled);
  CHECK(r->cut_short);
  REQUIRE(r->found);
  CHECK(r->best_config == "i1");
}

TEST_CASE("tune on first use runs once per problem; a failing worker is a note, not an error",
          "[runtime][tuner]") {
  const testing::TempDir tmp_dir;
  const fs::path dir = tmp_dir.path();
  const fs::path log = dir / "worker.log";
  LibraryTuner tuner(options_for(dir, write_worker(dir, log)), testing::test_sources());
  ToyFamily family;
  const FirstUseResult first = tuner.tune_on_first_use(family, ToyProblem(10), 5);
  INFO(first.note);
  CHECK(first.tuned);
  CHECK(first.note.find("tuned on first use in") != std::string::npos);
  const FirstUseResult again = tuner.tune_on_first_use(family, ToyProblem(10), 5);
  CHECK_FALSE(again.tuned);
  CHECK(again.note.empty());
  CHECK(count_lines(read_text(log)) == 1);

  const testing::TempDir tmp_bad;
  const fs::path bad = tmp_bad.path();
  const fs::path failing = bad / "ssmtune";
  std::ofstream(failing) << "#!/bin/sh\necho '{\"error\":\"no GPU here\"}'\nexit 1\n";
  fs::permissions(failing, fs::perms::owner_all);
  LibraryTuner broken(options_for(bad, failing), testing::test_sources());
  const FirstUseResult f = broken.tune_on_first_use(family, ToyProblem(11), 5);
  CHECK_FALSE(f.tuned);
  CHECK(f.note.find("tune on first use failed") != std::string::npos);
  CHECK(f.note.find("no GPU here") != std::string::npos);
}

TEST_CASE("a library tune needs a database, valid options and a worker program",
          "[runtime][tuner]") {
  ToyFamily family;
  LibraryTunerOptions none;
  none.worker_exe = "/bin/true";
  LibraryTuner no_db(none, testing::test_sources());
  auto r = no_db.tune(family, ToyProblem(8), TuneOptions{});
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().message().find("database") != std::string::npos);

  const testing::TempDir tmp_dir;
  const fs::path dir = tmp_dir.path();
  LibraryTunerOptions o;
  o.db_path = (dir / "tuning.db").string();
  LibraryTuner tuner(o, testing::test_sources());
  TuneOptions bad;
  bad.strategy = "annealing";
  auto b = tuner.tune(family, ToyProblem(8), bad);
  REQUIRE_FALSE(b.is_ok());
  CHECK(b.status().message().find("unknown strategy 'annealing'") != std::string::npos);
  auto t = tuner.tune(family, ToyProblem(8), TuneOptions{}, {}, -1);
  REQUIRE_FALSE(t.is_ok());
  CHECK(t.status().message().find("timeout") != std::string::npos);

  ScopedEnv exe("SSMTUNE_EXE", "/nonexistent/ssmtune");
  auto w = tuner.tune(family, ToyProblem(8), TuneOptions{});
  REQUIRE_FALSE(w.is_ok());
  CHECK(w.status().message().find("SSMTUNE_EXE") != std::string::npos);
}

TEST_CASE("tune budget: unset and off mean 0, numbers are read, junk is an error", "[runtime]") {
  {
    ScopedEnv e("SSMTUNE_TUNE_ON_FIRST_USE", nullptr);
    CHECK(*tune_budget_from_env() == 0.0);
  }
  {
    ScopedEnv e("SSMTUNE_TUNE_ON_FIRST_USE", "off");
    CHECK(*tune_budget_from_env() == 0.0);
  }
  {
    ScopedEnv e("SSMTUNE_TUNE_ON_FIRST_USE", "12.5");
    CHECK(*tune_budget_from_env() == 12.5);
  }
  for (const char* bad : {"soon", "-3", "5s", "1e9"}) {
    ScopedEnv e("SSMTUNE_TUNE_ON_FIRST_USE", bad);
    auto r = tune_budget_from_env();
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().message().find(bad) != std::string::npos);
  }
}

}  // namespace
}  // namespace ssmtune
