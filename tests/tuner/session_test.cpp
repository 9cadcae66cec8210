// The tuning session on the CPU: a toy family whose configs compile for real
// through NVRTC (one program each, one compile thread, so compiling takes a
// while), an in-memory store and a stand-in measurer. Measuring starts before
// compiling ends; a time limit (wall time, compile included) cuts the search
// and the counts add up; failed compiles and resource pruning are recorded;
// a cancel ends it; every measurement reaches the store; stored rows of this
// problem and of the nearest one order the candidates; with the device known
// up front, compiling overlaps the worker's start (and starts over when the
// worker reports another device).
#include "tuner/session.h"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "support/test_family.h"
#include "tuner/candidate_order.h"

namespace ssmtune {
namespace {

// "toy:n<size>", class "toy": configs "i<k>" compile linear_recurrence<float, k>;
// "i65" fails to compile (k > 64); "i5" is pruned by its resources.
class ToyProblem final : public FamilyProblem {
 public:
  explicit ToyProblem(int n) : n_(n) {}
  std::string key() const override { return "toy:n" + std::to_string(n_); }
  std::string class_key() const override { return "toy"; }
  double distance(const FamilyProblem& o) const override {
    return std::abs(std::log2(double(n_)) -
                    std::log2(double(static_cast<const ToyProblem&>(o).n_)));
  }
  Floors floors(const jit::DeviceInfo&) const override { return {}; }

 private:
  int n_;
};

class ToyFamily final : public KernelFamily {
 public:
  // `default_config` empty: the last item, else a config the space may not list.
  explicit ToyFamily(std::vector<int> items, std::string default_config = "")
      : items_(std::move(items)), default_(std::move(default_config)) {}
  const char* name() const override { return "toy"; }
  const char* summary() const override { return "a test family"; }
  Result<std::unique_ptr<FamilyProblem>> parse_problem(const std::string& key) const override {
    if (key.rfind("toy:n", 0) != 0) return Status::invalid_argument("not a toy key: " + key);
    return std::unique_ptr<FamilyProblem>(new ToyProblem(std::stoi(key.substr(5))));
  }
  Result<std::string> canonical_config(const std::string& c) const override { return c; }
  Status check_config(const FamilyProblem&, const std::string&,
                      const jit::DeviceInfo&) const override {
    return Status::ok();
  }
  std::vector<SpaceEntry> search_space(const FamilyProblem&, const jit::DeviceInfo&,
                                       const SpaceOptions&) const override {
    std::vector<SpaceEntry> out;
    for (int k : items_) out.push_back({"i" + std::to_string(k)});
    out.push_back({"i99", true, "too many items for the test"});
    return out;
  }
  DefaultChoice heuristic_default(const FamilyProblem&, const jit::DeviceInfo&) const override {
    if (!default_.empty()) return {default_, "given"};
    return {"i" + std::to_string(items_.back()), "the last"};
  }
  std::vector<std::string> first_look_order(const std::vector<std::string>& candidates,
                                            const std::string& first) const override {
    std::vector<std::string> out = {first};
    for (const auto& c : candidates)
      if (c != first) out.push_back(c);
    return out;
  }
  std::string prune_by_resources(const FamilyProblem&, const std::string& c,
                                 const std::vector<jit::KernelImage>&,
                                 const jit::DeviceInfo&) const override {
    return c == "i5" ? "spills 64 B (test)" : "";
  }
  bool is_fp64_anchor(const std::string&) const override { return false; }
  Result<std::vector<jit::Instantiation>> instantiations(const FamilyProblem&,
                                                         const std::string& config,
                                                         const jit::DeviceInfo&) const override {
    const int k = std::stoi(config.substr(1));
    return std::vector<jit::Instantiation>{
        {"testing/linear_recurrence.cuh",
         "ssmtune_kernels::linear_recurrence<float, " + std::to_string(k) + ">"}};
  }
  Result<std::unique_ptr<ProblemBench>> make_bench(const FamilyProblem&, const jit::DeviceInfo&,
                                                   jit::Compiler&, const BenchOptions&,
                                                   CUstream) const override {
    return Status::unsupported("the stand-in measurer measures toy configs");
  }

 private:
  std::vector<int> items_;
  std::string default_;
};

// Measurements, devices and best entries in memory.
class MemoryStore final : public TuningStore {
 public:
  Status upsert_device(const DeviceRecord&) override { return Status::ok(); }
  Result<std::vector<Measurement>> measurements(const MeasurementFilter& f) override {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<Measurement> out;
    for (const auto& m : rows)
      if ((f.family.empty() || m.family == f.family) &&
          (f.device_uuid.empty() || m.device_uuid == f.device_uuid) &&
          (f.problem_key.empty() || m.problem_key == f.problem_key) &&
          (f.config_key.empty() || m.config_key == f.config_key) &&
          (!f.status || m.status == *f.status))
        out.push_back(m);
    return out;
  }
  Status add_measurements(const std::vector<Measurement>& ms) override {
    std::lock_guard<std::mutex> l(mu_);
    rows.insert(rows.end(), ms.begin(), ms.end());
    return Status::ok();
  }
  Status set_best(const BestEntry& b) override {
    best_entry = b;
    return Status::ok();
  }
  Result<std::optional<BestEntry>> best(const std::string& uuid, const std::string& key,
                                        const Versions&) override {
    if (best_entry && best_entry->problem_key == key && best_entry->device_uuid == uuid)
      return best_entry;
    return std::optional<BestEntry>{};
  }
  Result<std::vector<std::string>> class_peers(const DeviceRecord&) override { return peers; }
  int count(const std::string& problem, MeasureStatus s) const {
    int n = 0;
    for (const auto& m : rows) n += m.problem_key == problem && m.status == s;
    return n;
  }
  std::vector<Measurement> rows;
  std::optional<BestEntry> best_entry;
  std::vector<std::string> peers;  // class_peers' answer

 private:
  std::mutex mu_;
};

Measurement ok_row(const std::string& problem, const std::string& config, double ms) {
  Measurement m;
  m.family = "toy";
  m.device_uuid = "GPU-standin";
  m.problem_key = problem;
  m.config_key = config;
  m.status = MeasureStatus::kOk;
  m.median_ms = ms;
  m.spread_ms = 0.001;
  m.repeats = 10;
  m.rel_l2 = 1e-7;
  m.error_budget = 1e-3;
  m.verdict = "inside";
  m.errors.push_back({"out", 1e-7, 0, 0, 0, 0, 1e-3, "inside"});
  return m;
}

// Measures in this process: `look_ms` of wall time per config; "i3" is fastest.
class StandInMeasurer final : public Measurer {
 public:
  explicit StandInMeasurer(double look_ms) : look_ms_(look_ms) {}
  Result<MeasurerInfo> start(const std::string& problem) override {
    problem_ = problem;
    MeasurerInfo info;
    info.device.uuid = "GPU-standin";
    info.device.name = "stand-in";
    info.device.cc_major = 9;
    info.device.sm_count = 132;
    info.device.max_shared_per_block = 232448;
    info.device.registers_per_sm = 65536;
    info.template_hash = template_hash;
    if (on_start) on_start();
    return info;
  }
  Measurement measure(const std::string& config, double target_ms) override {
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(look_ms_));
    asked.push_back({config, target_ms});
    const int k = std::stoi(config.substr(1));
    return ok_row(problem_, config, k == 3 ? 0.5 : 1.0 + 0.01 * k);
  }
  void stop() override {}
  std::vector<std::pair<std::string, double>> asked;
  std::string template_hash = testing::test_sources().hash();
  std::function<void()> on_start;  // runs inside start() (on the session's worker thread)

 private:
  double look_ms_;
  std::string problem_;
};

std::vector<int> items(int n) {
  std::vector<int> out;
  for (int k = 1; k <= n; ++k) out.push_back(k);
  return out;
}

struct Events {
  std::vector<TuneEvent> all;
  TuneProgressFn fn() {
    return [this](const TuneEvent& e) { all.push_back(e); };
  }
  const TuneEvent* first(TuneEvent::Kind k) const {
    for (const auto& e : all)
      if (e.kind == k) return &e;
    return nullptr;
  }
  int count(TuneEvent::Kind k) const {
    int n = 0;
    for (const auto& e : all) n += e.kind == k;
    return n;
  }
};

jit::DeviceInfo standin_device(const std::string& uuid) {
  jit::DeviceInfo d;
  d.uuid = uuid;
  d.name = "stand-in";
  d.cc_major = 9;
  d.sm_count = 132;
  d.max_shared_per_block = 232448;
  d.registers_per_sm = 65536;
  return d;
}

// One compile thread; the stand-in's device given, so that no GPU this
// machine may have changes the course of a test.
TuneOptions serial(const std::string& strategy) {
  TuneOptions o;
  o.strategy = strategy;
  o.compile_threads = 1;
  o.device_hint = standin_device("GPU-standin");
  return o;
}

TEST_CASE("session: measuring starts before compiling ends; failures and pruning are recorded",
          "[tuner][session]") {
  jit::MemoryCubinCache cache;
  jit::Compiler compiler(testing::test_sources(), &cache);
  std::vector<int> ks = items(8);
  ks.insert(ks.begin(), 65);  // fails to compile, early in the order
  ToyFamily family(ks);
  MemoryStore store;
  StandInMeasurer measurer(5);
  Events ev;
  auto r =
      tune_problem(store, compiler, measurer, family, ToyProblem(8), serial("exhaustive"), ev.fn());
  INFO(r.status().to_string());
  REQUIRE(r.is_ok());
  INFO(r->summary);
  CHECK(r->configs == 10);
  CHECK(r->candidates == 9);
  CHECK(r->compiled == 9);
  CHECK(r->not_reached == 0);
  CHECK(r->compile_failed == 1);
  CHECK(r->pruned == 2);  // i99 before compiling, i5 by its resources
  CHECK(r->timed == 7);
  CHECK(r->measured == 7);
  CHECK_FALSE(r->cut_short);
  CHECK(r->summary.find("timed 7 of 9, 2 dropped after compiling in ") == 0);
  // Where the wall time went: 7 looks of 5 ms in the measurer, the setup
  // before them, the waits for compiles; together no more than the wall.
  CHECK(r->measure_s >= 7 * 0.005 * 0.9);
  CHECK(r->setup_s >= 0);
  CHECK(r->compile_wait_s >= 0);
  CHECK(r->setup_s + r->measure_s + r->compile_wait_s <= r->wall_s + 1e-3);
  CHECK(r->summary.find(", measuring ") != std::string::npos);
  CHECK(r->summary.find("waiting for compiles") != std::string::npos);
  REQUIRE(r->found);
  CHECK(r->best_config == "i3");
  // The default first; the first measurement came while programs were still compiling.
  REQUIRE(!measurer.asked.empty());
  CHECK(measurer.asked[0].first == "i8");
  const TuneEvent* first_measured = ev.first(TuneEvent::kMeasured);
  REQUIRE(first_measured != nullptr);
  CHECK(first_measured->to_compile == 9);
  CHECK(first_measured->compiled < 9);
  CHECK(ev.count(TuneEvent::kCompiling) == 1);
  CHECK(ev.count(TuneEvent::kCompiled) == 1);
  CHECK(ev.count(TuneEvent::kMeasured) == 7);
  // Every measurement, the failed compile and both prunes reached the store.
  CHECK(store.count("toy:n8", MeasureStatus::kOk) == 7);
  CHECK(store.count("toy:n8", MeasureStatus::kCompileFailed) == 1);
  CHECK(store.count("toy:n8", MeasureStatus::kPruned) == 2);
  for (const auto& m : store.rows)
    if (m.status == MeasureStatus::kCompileFailed) CHECK(m.config_key == "i65");
  REQUIRE(store.best_entry.has_value());
  CHECK(store.best_entry->config_key == "i3");
}

TEST_CASE("session: the default is looked at first even where the space does not list it",
          "[tuner][session]") {
  jit::MemoryCubinCache cache;
  jit::Compiler compiler(testing::test_sources(), &cache);
  ToyFamily family(items(4), "i7");  // an untuned call runs i7; the space lists i1..i4
  MemoryStore store;
  StandInMeasurer measurer(1);
  Events ev;
  auto r =
      tune_problem(store, compiler, measurer, family, ToyProblem(8), serial("exhaustive"), ev.fn());
  INFO(r.status().to_string());
  REQUIRE(r.is_ok());
  CHECK(r->configs == 6);  // i1..i4, i99 (pruned), and the default
  CHECK(r->candidates == 5);
  REQUIRE(!measurer.asked.empty());
  CHECK(measurer.asked[0].first == "i7");
  CHECK(store.count("toy:n8", MeasureStatus::kOk) == 5);
}

TEST_CASE("session: a time limit is wall time; the budget cuts the search and says so",
          "[tuner][session]") {
  jit::MemoryCubinCache cache;
  jit::Compiler compiler(testing::test_sources(), &cache);
  // 64 programs on one thread take longer than the limit; so do 64 looks.
  ToyFamily family(items(64));
  MemoryStore store;
  StandInMeasurer measurer(20);
  TuneOptions o = serial("halving");
  o.time_limit = 1.0;
  Events ev;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = tune_problem(store, compiler, measurer, family, ToyProblem(9), o, ev.fn());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(r.status().to_string());
  REQUIRE(r.is_ok());
  INFO(r->summary << "; wall " << wall << " s");
  CHECK(r->cut_short);
  CHECK_FALSE(r->cancelled);
  CHECK(r->candidates == 64);
  CHECK(r->not_reached > 0);
  CHECK(r->compiled + r->not_reached == 64);
  CHECK(r->compile_failed == 0);
  CHECK(r->measured <= r->compiled);
  CHECK(r->measured >= 1);
  CHECK(r->summary.find("budget cut the search: timed " + std::to_string(r->measured) + " of 64, " +
                        std::to_string(r->not_reached) + " not compiled") == 0);
  REQUIRE(ev.count(TuneEvent::kDone) == 1);
  CHECK(ev.all.back().message == r->summary);
  // The limit holds, give or take a compile in flight and the careful rung.
  CHECK(wall < o.time_limit + 2.5);
  // Every measurement is in the store: one row per measure call.
  CHECK(store.count("toy:n9", MeasureStatus::kOk) == static_cast<int>(measurer.asked.size()));
  std::set<std::string> distinct;
  for (const auto& [c, t] : measurer.asked) distinct.insert(c);
  CHECK(static_cast<int>(distinct.size()) == r->measured);
  CHECK(r->found);
}

TEST_CASE("session: a cancel ends the search and the compiling", "[tuner][session]") {
  jit::MemoryCubinCache cache;
  jit::Compiler compiler(testing::test_sources(), &cache);
  ToyFamily family(items(12));
  MemoryStore store;
  StandInMeasurer measurer(5);
  std::atomic<bool> cancel{false};
  TuneOptions o = serial("halving");
  o.cancel = &cancel;
  auto r = tune_problem(store, compiler, measurer, family, ToyProblem(10), o,
                        [&cancel](const TuneEvent& e) {
                          if (e.kind == TuneEvent::kMeasured) cancel = true;
                        });
  REQUIRE(r.is_ok());
  CHECK(r->cancelled);
  CHECK(r->cut_short);
  CHECK(r->measured == 1);
  CHECK(measurer.asked.size() == 1);
  CHECK(r->not_reached > 0);
  CHECK(r->compiled + r->not_reached == 12);
  REQUIRE(r->found);
  CHECK(r->best_config == "i12");
}

TEST_CASE("session: stored rows of this problem and the nearest one come first",
          "[tuner][session]") {
  jit::MemoryCubinCache cache;
  jit::Compiler compiler(testing::test_sources(), &cache);
  ToyFamily family(items(6));
  MemoryStore store;
  // The nearest tuned problem (n16 is nearer to n12 than n64) ran i2 fastest, then i4;
  // i6 faulted there.
  store.rows.push_back(ok_row("toy:n16", "i4", 0.8));
  store.rows.push_back(ok_row("toy:n16", "i2", 0.7));
  Measurement fault = ok_row("toy:n16", "i6", 0);
  fault.status = MeasureStatus::kFaulted;
  store.rows.push_back(fault);
  store.rows.push_back(ok_row("toy:n64", "i1", 0.1));
  StandInMeasurer measurer(1);
  auto r = tune_problem(store, compiler, measurer, family, ToyProblem(12), serial("exhaustive"));
  REQUIRE(r.is_ok());
  std::vector<std::string> order;
  for (const auto& [c, t] : measurer.asked) order.push_back(c);
  // The default (i6) leads whatever the hints say; then the nearest problem's
  // fastest (n64's i1 is farther); i5 is pruned by its resources.
  CHECK(order == std::vector<std::string>{"i6", "i2", "i4", "i1", "i3"});
}

TEST_CASE("candidate order: this problem's rows, then the nearest's, failures last",
          "[tuner][session]") {
  const std::vector<std::string> order = {"d", "a", "b", "c", "e", "f"};
  std::vector<Measurement> own = {ok_row("toy:n1", "c", 2.0), ok_row("toy:n1", "x", 0.1)};
  std::vector<Measurement> near = {ok_row("toy:n2", "e", 1.0), ok_row("toy:n2", "c", 0.5)};
  Measurement bad = ok_row("toy:n2", "a", 0);
  bad.status = MeasureStatus::kInaccurate;
  near.push_back(bad);
  CHECK(rank_candidates(order, "d", {own, near}) ==
        std::vector<std::string>{"d", "c", "e", "b", "f", "a"});
  CHECK(rank_candidates(order, "d", {}) == order);
  // The most careful row of a config stands for it.
  Measurement careful = ok_row("toy:n2", "f", 0.2);
  careful.repeats = 100;
  Measurement cheap = ok_row("toy:n2", "f", 5.0);
  CHECK(rank_candidates(order, "zz", {{cheap, careful, ok_row("toy:n2", "b", 0.3)}}) ==
        std::vector<std::string>{"f", "b", "d", "a", "c", "e"});

  MemoryStore store;
  ToyFamily family({1});
  store.rows = {ok_row("toy:n16", "a", 1), ok_row("toy:n64", "b", 1), ok_row("toy:n12", "c", 1)};
  auto rows = nearest_problem_rows(store, family, ToyProblem(12), "GPU-standin");
  REQUIRE(rows.is_ok());
  REQUIRE(rows->size() == 1);
  CHECK((*rows)[0].problem_key == "toy:n16");
  auto none = nearest_problem_rows(store, family, ToyProblem(12), "GPU-other");
  REQUIRE(none.is_ok());
  CHECK(none->empty());
}

TEST_CASE("session: with the device known, compiling starts while the worker starts",
          "[tuner][session]") {
  jit::MemoryCubinCache cache;
  jit::Compiler compiler(testing::test_sources(), &cache);
  ToyFamily family(items(6));
  MemoryStore store;
  StandInMeasurer measurer(1);
  std::atomic<bool> compiling{false};
  bool seen_while_starting = false;
  measurer.on_start = [&] {
    // The worker's start takes a while (inputs, fp64 reference): compiling
    // is under way before it ends.
    for (int i = 0; i < 300 && !compiling; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    seen_while_starting = compiling;
  };
  TuneOptions o = serial("exhaustive");
  Events ev;
  auto r =
      tune_problem(store, compiler, measurer, family, ToyProblem(20), o, [&](const TuneEvent& e) {
        if (e.kind == TuneEvent::kCompiling) compiling = true;
        ev.all.push_back(e);
      });
  INFO(r.status().to_string());
  REQUIRE(r.is_ok());
  CHECK(seen_while_starting);
  CHECK(ev.count(TuneEvent::kCompiling) == 1);
  CHECK(r->timed == 5);
  CHECK(r->best_config == "i3");
  for (const auto& m : store.rows) CHECK(m.device_uuid == "GPU-standin");
}

TEST_CASE("session: a measurer on another device than the hint makes it start over",
          "[tuner][session]") {
  jit::MemoryCubinCache cache;
  jit::Compiler compiler(testing::test_sources(), &cache);
  ToyFamily family(items(4));
  MemoryStore store;
  StandInMeasurer measurer(1);
  TuneOptions o = serial("exhaustive");
  o.device_hint = standin_device("GPU-elsewhere");
  Events ev;
  auto r = tune_problem(store, compiler, measurer, family, ToyProblem(21), o, ev.fn());
  INFO(r.status().to_string());
  REQUIRE(r.is_ok());
  CHECK(r->timed == 4);
  CHECK(r->compiled == 4);
  CHECK(ev.count(TuneEvent::kCompiling) == 1);
  REQUIRE(store.best_entry.has_value());
  CHECK(store.best_entry->device_uuid == "GPU-standin");
  for (const auto& m : store.rows) CHECK(m.device_uuid == "GPU-standin");
  // A worker that cannot start is the session's error, after the compiles in flight.
  class Failing final : public Measurer {
   public:
    Result<MeasurerInfo> start(const std::string&) override {
      return Status::no_driver("no GPU in the stand-in");
    }
    Measurement measure(const std::string&, double) override { return {}; }
    void stop() override {}
  } failing;
  auto f = tune_problem(store, compiler, failing, family, ToyProblem(22), o);
  REQUIRE_FALSE(f.is_ok());
  CHECK(f.status().message().find("no GPU in the stand-in") != std::string::npos);
}

TEST_CASE("session: a shape an identical GPU tuned is already tuned here (issue 19)",
          "[tuner][session]") {
  jit::MemoryCubinCache cache;
  jit::Compiler compiler(testing::test_sources(), &cache);
  ToyFamily family(items(8));
  BestEntry twin;
  twin.family = "toy";
  twin.device_uuid = "GPU-twin";
  twin.problem_key = "toy:n8";
  twin.config_key = "i3";
  twin.median_ms = 0.25;
  twin.rule = "fastest inside budget";
  auto run = [&](MemoryStore& store, const TuneOptions& o, StandInMeasurer& m, Events& ev) {
    auto r = tune_problem(store, compiler, m, family, ToyProblem(8), o, ev.fn());
    INFO(r.status().to_string());
    REQUIRE(r.is_ok());
    return *r;
  };
  {  // The twin's entry, and the store says the twin is of this GPU's class.
    MemoryStore store;
    store.best_entry = twin;
    store.peers = {"GPU-twin"};
    StandInMeasurer m(1);
    Events ev;
    const TuneReport r = run(store, serial("exhaustive"), m, ev);
    CHECK(r.already_tuned);
    CHECK(r.best_config == "i3");
    CHECK(m.asked.empty());
    const TuneEvent* done = ev.first(TuneEvent::kDone);
    REQUIRE(done != nullptr);
    CHECK(done->message.find("identical GPU (GPU-twin)") != std::string::npos);
  }
  {  // --force measures again.
    MemoryStore store;
    store.best_entry = twin;
    store.peers = {"GPU-twin"};
    StandInMeasurer m(1);
    Events ev;
    TuneOptions o = serial("exhaustive");
    o.force = true;
    const TuneReport r = run(store, o, m, ev);
    CHECK_FALSE(r.already_tuned);
    CHECK_FALSE(m.asked.empty());
  }
  {  // Another class's entry is not this GPU's.
    MemoryStore store;
    store.best_entry = twin;
    StandInMeasurer m(1);
    Events ev;
    const TuneReport r = run(store, serial("exhaustive"), m, ev);
    CHECK_FALSE(r.already_tuned);
    CHECK_FALSE(m.asked.empty());
  }
}

}  // namespace
}  // namespace ssmtune
