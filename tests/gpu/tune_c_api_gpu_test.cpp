// Tuning through the C ABI on the GPU: ssmtune_tune on a small shape
// reports progress, records a best entry that the next call and the next
// prepare select (explain says so; a plan prepared before still launches),
// a second tune finds the shape tuned, a callback can cancel, a backward
// problem tunes the same way, and bad arguments are errors with messages.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "jit/stream.h"
#include "runtime/call_args.h"
#include "ssmtune/ssmtune.h"
#include "support/gpu_helpers.h"
#include "tuner/accuracy.h"
#include "tuner/fwd/device_problem.h"
#include "tuner/fwd/reference_cpu.h"
#include "tuner/fwd/scoring.h"

namespace ssmtune {
namespace {

using testing::require_ok;
namespace fs = std::filesystem;

struct Events {
  int start = 0, compiling = 0, compiled = 0, measured = 0, done = 0;
  int last_timed = 0, planned = 0;
  double last_elapsed = 0;
  std::string best;
  int cancel_after = 0;  // > 0: ask to stop after this many measured configs
};

int on_event(const ssmtune_tune_event* e, void* user) {
  auto* ev = static_cast<Events*>(user);
  switch (e->kind) {
    case SSMTUNE_TUNE_START:
      ++ev->start;
      break;
    case SSMTUNE_TUNE_COMPILING:
      ++ev->compiling;
      break;
    case SSMTUNE_TUNE_COMPILED:
      ++ev->compiled;
      ev->planned = e->planned;
      break;
    case SSMTUNE_TUNE_MEASURED:
      ++ev->measured;
      break;
    case SSMTUNE_TUNE_DONE:
      ++ev->done;
      break;
  }
  ev->last_timed = e->timed;
  ev->last_elapsed = e->elapsed_s;
  ev->best = e->best_config;
  return ev->cancel_after > 0 && ev->measured >= ev->cancel_after ? 1 : 0;
}

std::string explain(ssmtune_runtime* rt, const ssmtune_fwd_args& args) {
  char buf[1024];
  INFO(ssmtune_last_error());
  REQUIRE(ssmtune_explain(rt, &args, buf, sizeof buf) == SSMTUNE_OK);
  return buf;
}

std::string plan_explain(const ssmtune_fwd_plan* plan) {
  char buf[1024];
  REQUIRE(ssmtune_fwd_plan_explain(plan, buf, sizeof buf) == SSMTUNE_OK);
  return buf;
}

// A fresh database in a directory of its own; SSMTUNE_EXE names the
// worker program (the test binary has no `ssmtune` beside it).
struct Scratch {
  fs::path dir;
  explicit Scratch(const char* name) : dir(fs::temp_directory_path() / name) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    ::setenv("SSMTUNE_EXE", SSMTUNE_BINARY, 1);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    ::unsetenv("SSMTUNE_EXE");
    fs::remove_all(dir);
  }
  std::string db() const { return (dir / "tuning.db").string(); }
};

TEST_CASE("ssmtune_tune records a best entry that the next call and prepare select",
          "[gpu][tuner]") {
  Scratch s("ssmtune_tune_c_api_gpu_test");
  ssmtune_runtime* rt = nullptr;
  REQUIRE(ssmtune_runtime_create(s.db().c_str(), 0, &rt) == SSMTUNE_OK);
  auto stream = require_ok(jit::Stream::create());
  const FwdProblem p = require_ok(FwdProblem::from_key("b2.d48.l200.n4.g1.fp32.vB.vC.D"));
  const uint64_t seed = std::random_device{}();
  INFO("seed " << seed);
  const FwdHostInputs in = make_inputs(p, seed);
  const FwdHostOutputs ref = reference_fwd(in);
  auto dp = require_ok(FwdDeviceProblem::upload(in));
  const ssmtune_fwd_args args = to_c_args(dp.tensors(), p.delta_softplus);

  char key[256];
  REQUIRE(ssmtune_fwd_problem_key(&args, key, sizeof key) == SSMTUNE_OK);
  CHECK(std::string(key) == p.key());

  ssmtune_fwd_plan* before = nullptr;
  REQUIRE(ssmtune_fwd_prepare(rt, &args, &before) == SSMTUNE_OK);
  CHECK(plan_explain(before).find("[default, in use]") != std::string::npos);

  ssmtune_tune_options o{};
  o.time_limit_s = 5;
  o.seed = 11;
  Events ev;
  ssmtune_tune_result r{};
  const ssmtune_status st = ssmtune_tune(rt, key, &o, on_event, &ev, &r);
  INFO(ssmtune_last_error());
  REQUIRE(st == SSMTUNE_OK);
  CHECK(std::string(r.problem_key) == p.key());
  REQUIRE(r.found == 1);
  const std::string best = r.config;
  INFO("best " << best << " " << r.best_ms << " ms; timed " << r.timed);
  CHECK_FALSE(best.empty());
  CHECK(r.best_ms > 0);
  CHECK(r.timed > 3);
  CHECK(r.already_tuned == 0);
  CHECK(r.cancelled == 0);
  CHECK(ev.start == 1);
  CHECK(ev.compiling == 1);
  CHECK(ev.compiled == 1);
  CHECK(ev.planned > 0);
  // Every measured config is an event; the counts are distinct configs, and
  // halving measures its survivors again (more events than configs).
  CHECK(ev.measured >= r.timed + r.faulted + r.inaccurate);
  CHECK(r.timed + r.faulted + r.inaccurate <= r.compiled);
  CHECK(ev.done == 1);
  CHECK(ev.last_timed == ev.measured);
  CHECK(ev.last_elapsed > 0);

  // The runtime forgot its earlier choice: the call selects the new entry.
  const std::string chosen = explain(rt, args);
  INFO(chosen);
  CHECK(chosen.find("[exact]") != std::string::npos);
  CHECK(chosen.find(": " + best + " ") != std::string::npos);
  REQUIRE_STATUS_OK(dp.poison_outputs(stream.get()));
  REQUIRE(ssmtune_selective_scan_fwd(rt, &args, stream.get()) == SSMTUNE_OK);
  REQUIRE_STATUS_OK(stream.synchronize());
  const FwdRunScore score =
      score_run(p, false, ref, require_ok(dp.download_out()).data(), nullptr, nullptr);
  CHECK((score.verdict == Verdict::kInside || score.verdict == Verdict::kAtLimit));
  CHECK(explain(rt, args).find("[exact, in use]") != std::string::npos);

  // A new prepare gives a new plan with the tuned config; the old one still launches.
  ssmtune_fwd_plan* after = nullptr;
  REQUIRE(ssmtune_fwd_prepare(rt, &args, &after) == SSMTUNE_OK);
  CHECK(after != before);
  const std::string after_text = plan_explain(after);
  INFO(after_text);
  CHECK(after_text.find(": " + best + " [exact, in use]") != std::string::npos);
  const void* ptrs[SSMTUNE_FWD_NUM_TENSORS] = {
      args.u.data,  args.delta.data, args.A.data,     args.B.data,
      args.C.data,  args.D.data,     args.z.data,     args.delta_bias.data,
      args.h0.data, args.out.data,   args.out_z.data, args.last_state.data};
  CHECK(ssmtune_fwd_launch(before, ptrs, nullptr, stream.get()) == SSMTUNE_OK);
  CHECK(ssmtune_fwd_launch(after, ptrs, nullptr, stream.get()) == SSMTUNE_OK);
  REQUIRE_STATUS_OK(stream.synchronize());

  // Tuned already: nothing measured. Forced, with a callback that stops
  // after the first config: cancelled, one config timed.
  ssmtune_tune_result again{};
  REQUIRE(ssmtune_tune(rt, key, nullptr, nullptr, nullptr, &again) == SSMTUNE_OK);
  CHECK(again.already_tuned == 1);
  CHECK(again.timed == 0);
  CHECK(std::string(again.config) == best);
  Events stop;
  stop.cancel_after = 1;
  ssmtune_tune_options forced{};
  forced.force = 1;
  ssmtune_tune_result cancelled{};
  REQUIRE(ssmtune_tune(rt, key, &forced, on_event, &stop, &cancelled) == SSMTUNE_OK);
  CHECK(cancelled.cancelled == 1);
  CHECK(cancelled.cut_short == 1);
  CHECK(stop.measured == 1);
  ssmtune_runtime_destroy(rt);
}

TEST_CASE("ssmtune_tune tunes a backward problem through the same session", "[gpu][tuner]") {
  Scratch s("ssmtune_tune_c_api_bwd_gpu_test");
  ssmtune_runtime* rt = nullptr;
  REQUIRE(ssmtune_runtime_create(s.db().c_str(), 0, &rt) == SSMTUNE_OK);
  const char* key = "bwd:b2.d64.l256.n4.g1.fp32.vB.vC";
  ssmtune_tune_options o{};
  o.time_limit_s = 3;
  Events ev;
  ssmtune_tune_result r{};
  const ssmtune_status st = ssmtune_tune(rt, key, &o, on_event, &ev, &r);
  INFO(ssmtune_last_error());
  REQUIRE(st == SSMTUNE_OK);
  INFO("best " << r.config << " " << r.best_ms << " ms; timed " << r.timed);
  CHECK(std::string(r.problem_key) == key);
  CHECK(r.found == 1);
  CHECK(r.timed >= 1);
  CHECK(ev.done == 1);
  ssmtune_runtime_destroy(rt);
}

TEST_CASE("ssmtune_tune: bad options, keys and a runtime without a database are errors",
          "[gpu][tuner]") {
  Scratch s("ssmtune_tune_c_api_errors_gpu_test");
  ssmtune_runtime* rt = nullptr;
  REQUIRE(ssmtune_runtime_create(s.db().c_str(), 0, &rt) == SSMTUNE_OK);
  const char* key = "fwd:b1.d8.l16.n2.g1.fp32.vB.vC";
  ssmtune_tune_options o{};
  o.strategy = "annealing";
  CHECK(ssmtune_tune(rt, key, &o, nullptr, nullptr, nullptr) == SSMTUNE_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(ssmtune_last_error()).find("unknown strategy") != std::string::npos);
  o = ssmtune_tune_options{};
  o.max_configs = -1;
  CHECK(ssmtune_tune(rt, key, &o, nullptr, nullptr, nullptr) == SSMTUNE_ERROR_INVALID_ARGUMENT);
  o = ssmtune_tune_options{};
  o.time_limit_s = -2;
  CHECK(ssmtune_tune(rt, key, &o, nullptr, nullptr, nullptr) == SSMTUNE_ERROR_INVALID_ARGUMENT);
  CHECK(ssmtune_tune(rt, "fwd:b0.d8.l16.n2.g1.fp32.vB.vC", nullptr, nullptr, nullptr, nullptr) ==
        SSMTUNE_ERROR_INVALID_ARGUMENT);
  CHECK(ssmtune_tune(rt, "nope:x1", nullptr, nullptr, nullptr, nullptr) ==
        SSMTUNE_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(ssmtune_last_error()).find("unknown kernel family") != std::string::npos);
  ssmtune_runtime_destroy(rt);

  ssmtune_runtime* no_db = nullptr;
  REQUIRE(ssmtune_runtime_create("", 0, &no_db) == SSMTUNE_OK);
  CHECK(ssmtune_tune(no_db, key, nullptr, nullptr, nullptr, nullptr) ==
        SSMTUNE_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(ssmtune_last_error()).find("database") != std::string::npos);
  ssmtune_runtime_destroy(no_db);
}

}  // namespace
}  // namespace ssmtune
