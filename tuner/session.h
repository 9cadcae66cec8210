// The tuning session as a library call: for one problem of any family,
// resume from the store, prune the space before compiling, order the rest
// (the family's first look, laid over with what the store knows), compile
// them on a thread pool in that order (into the compiler's cache, which the
// measurer shares) while a strategy measures the ones already compiled and
// fit to time (resource pruning per config as it compiles), all under one
// wall-time budget; record every measurement, select the best and record it.
// The CLI, tune-on-first-use and Python all call tune_problem.
// Not thread-safe (one session per store connection and measurer).
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "jit/compiler.h"
#include "tuner/family.h"
#include "tuner/measurer.h"
#include "tuner/store.h"

namespace ssmtune {

struct TuneOptions {
  std::string strategy = "halving";  // halving, exhaustive or random
  int budget = 0;                    // most configs to measure (0: no limit)
  // Wall seconds for the whole session (0: no limit): the worker's start,
  // compiling and measuring together. Compiles the budget does not reach are
  // counted as not reached; halving keeps room for its careful rungs.
  double time_limit = 0;
  double max_error = 0;  // > 0: tighter rel L2 budget
  uint64_t seed = 0;     // random strategy's seed
  bool force = false;    // re-measure configs the store already holds
  bool resume = false;   // tune a shape that has a best entry, measuring what is missing
  bool include_fp64 = true;
  int gpu = 0;  // the ordinal the measurer runs on (for the already-tuned check)
  // Threads compiling while the measurer runs (0: one per hardware thread).
  unsigned compile_threads = 0;
  // The device the measurer will report, when the caller knows it (else
  // queried here; none without a driver): compiling starts while the
  // measurer starts. A measurer that reports another makes it start over.
  std::optional<jit::DeviceInfo> device_hint;
  // Set (by another thread, or by a progress callback) to end the search
  // after the config being measured; what was measured is still selected
  // from and recorded. Not owned; may be null.
  const std::atomic<bool>* cancel = nullptr;
};
Status validate(const TuneOptions& o);

// What happened, for the progress line and the summary table.
struct TuneEvent {
  enum Kind {
    kStart,      // the measurer is starting (inputs, fp64 reference)
    kCompiling,  // `to_compile` programs are being compiled; measuring starts meanwhile
    kCompiled,   // compiling is done (every program compiled or not reached)
    kMeasured,   // one config measured: `config`, `ms`, `usable`
    kDone,       // the session ended (or the problem was already tuned)
  } kind = kStart;
  std::string problem;
  std::string message;  // a human line, or empty
  int done = 0;         // configs measured so far
  int planned = 0;      // configs the strategy plans to measure (an estimate for halving)
  int compiled = 0;     // programs compiled so far (failed ones included)
  int to_compile = 0;   // programs the session compiles (from kCompiling on)
  std::string config;   // kMeasured
  double ms = 0;        // kMeasured: its median
  bool usable = false;  // kMeasured: ok and inside its budget
  std::string best_config;
  double best_ms = 0;
  double elapsed_s = 0;
};
using TuneProgressFn = std::function<void(const TuneEvent&)>;

struct TuneReport {
  std::string problem_key;
  bool already_tuned = false;  // a current best existed: nothing was measured
  int configs = 0;             // the space's size
  int candidates = 0;          // left after pruning before compiling
  int pruned = 0;              // before compiling, by resources after, or by the measurer
  int compiled = 0;            // compiles that finished (failed ones included)
  int not_reached = 0;         // compiles the budget ended before they started
  // Distinct configs: timed (ok), faulted, inaccurate, or read from the store.
  int compile_failed = 0, timed = 0, faulted = 0, inaccurate = 0, from_store = 0;
  int measured = 0;  // distinct candidates the strategy met (from the store included)
  bool found = false;
  std::string best_config;
  double best_ms = 0, best_rel_l2 = 0;
  std::string rule;
  double wall_s = 0;
  // Where the wall time went: starting the measurer and preparing (the
  // fp64 reference, pruning, the first compiles meanwhile), inside the
  // measurer, and waiting with no compiled config to measure; the rest is
  // the session's own work (recording, selection).
  double setup_s = 0, measure_s = 0, compile_wait_s = 0;
  bool cut_short = false;  // the budget (or a cancel) ended the search before it met every
                           // candidate fit to time
  std::string summary;     // one line: "budget cut the search: timed 112 of 319, 40 not compiled
                           // in 30.0 s (setup 3.1 s, measuring 21.5 s, waiting for compiles 4.9 s)"
  bool cancelled = false;  // options.cancel ended it
  std::vector<std::string> defects;  // configs far outside their budget (bugs), with why
};

Result<TuneReport> tune_problem(TuningStore& store, jit::Compiler& compiler, Measurer& measurer,
                                const KernelFamily& family, const FamilyProblem& problem,
                                const TuneOptions& options, const TuneProgressFn& progress = {});

}  // namespace ssmtune
