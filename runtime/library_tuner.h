// Tuning from the library, in this process: a runtime's tuner runs the
// tuning session (tuner/session.h) for a problem of any family on its own
// database connection and compiler, with configs measured in `ssmtune
// worker` processes (a faulting or hanging kernel cannot take the caller
// down). ssmtune_tune and tune on first use both come through here.
// Thread-safe: sessions run one at a time.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "jit/template_sources.h"
#include "ssmtune/status.h"
#include "tuner/family.h"
#include "tuner/measurer.h"
#include "tuner/session.h"
#include "tuner/worker_measurer.h"

namespace ssmtune {

namespace cache {
class DbStack;
}

// Wall seconds per untuned shape (compiling included) from $SSMTUNE_TUNE_ON_FIRST_USE:
// 0 when unset, empty, "0" or "off"; an error for anything but a number >= 0.
Result<double> tune_budget_from_env();

struct LibraryTunerOptions {
  std::string db_path;             // the tuning database or list (required)
  int gpu = 0;                     // the device ordinal workers run on
  std::string worker_exe;          // empty: find_worker_exe() at the first session
  double config_timeout_s = 60;    // one config may take this long in its worker
  bool first_use_progress = true;  // tune on first use says on stderr what it does
  // Makes one session's measurer from the worker options; unset: a
  // WorkerMeasurer (tests pass stand-ins).
  std::function<Result<std::unique_ptr<Measurer>>(const WorkerOptions&)> make_measurer;
};

// What tune on first use did, for the choice's reason.
struct FirstUseResult {
  bool tuned = false;  // a session ran to its end (the database may hold a new best)
  std::string note;    // " (tuned on first use in 12.3 s)" or "; tune on first use failed: ..."
};

class LibraryTuner {
 public:
  // `sources`: the templates the runtime compiles (their hash keys the
  // database). Nothing is opened until the first session.
  LibraryTuner(LibraryTunerOptions options, jit::TemplateSources sources);
  ~LibraryTuner();
  LibraryTuner(const LibraryTuner&) = delete;
  LibraryTuner& operator=(const LibraryTuner&) = delete;

  // One tuning session; options.gpu is this tuner's; config_timeout_s > 0
  // overrides the options' per-config timeout. Errors: the options, the
  // database, no worker program, a worker that cannot start.
  Result<TuneReport> tune(const KernelFamily& family, const FamilyProblem& problem,
                          TuneOptions options, const TuneProgressFn& progress = {},
                          double config_timeout_s = 0);

  // Tune on first use: a halving session of `seconds` (wall time), at most
  // once per problem key in this tuner's life (a second ask, or one after a
  // failure, does nothing). Never an error: a failure is in the note.
  FirstUseResult tune_on_first_use(const KernelFamily& family, const FamilyProblem& problem,
                                   double seconds);

  const LibraryTunerOptions& options() const { return o_; }

 private:
  Status open();  // with mu_ held: the connection, the cubin cache, the compiler
  LibraryTunerOptions o_;
  jit::TemplateSources sources_;
  std::mutex mu_;
  std::unique_ptr<cache::DbStack> db_;
  std::unique_ptr<jit::CubinCache> cubins_;
  std::unique_ptr<jit::Compiler> compiler_;
  std::set<std::string> first_use_asked_;
};

}  // namespace ssmtune
