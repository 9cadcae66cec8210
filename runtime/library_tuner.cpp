// In-process tuning sessions for the runtime.
#include "runtime/library_tuner.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cache/db_stack.h"
#include "cache/sqlite_cubin_cache.h"
#include "cache/tuning_db.h"
#include "jit/compiler.h"

namespace ssmtune {

Result<double> tune_budget_from_env() {
  const char* v = std::getenv("SSMTUNE_TUNE_ON_FIRST_USE");
  if (v == nullptr || *v == '\0' || std::strcmp(v, "off") == 0) return 0.0;
  char* end = nullptr;
  errno = 0;
  const double s = std::strtod(v, &end);
  if (errno != 0 || end == v || *end != '\0' || !(s >= 0) || s > 86400)
    return Status::invalid_argument(std::string("SSMTUNE_TUNE_ON_FIRST_USE must be seconds "
                                                "(a number from 0 to 86400) or 'off', got '") +
                                    v + "'");
  return s;
}

LibraryTuner::LibraryTuner(LibraryTunerOptions options, jit::TemplateSources sources)
    : o_(std::move(options)), sources_(std::move(sources)) {}

LibraryTuner::~LibraryTuner() = default;

Status LibraryTuner::open() {
  if (compiler_) return Status::ok();
  if (o_.db_path.empty())
    return Status::invalid_argument("tuning needs a tuning database (the runtime has none)");
  if (o_.worker_exe.empty()) {
    SSMTUNE_ASSIGN_OR_RETURN(o_.worker_exe, find_worker_exe());
  }
  // Its own connections: a session writes for minutes while the runtime's
  // connection keeps answering selections.
  // A list: writes go to the local database, the already-tuned check and
  // the cubins read the shared layers too.
  SSMTUNE_ASSIGN_OR_RETURN(const cache::DbPathList paths, cache::split_db_paths(o_.db_path));
  SSMTUNE_ASSIGN_OR_RETURN(cache::DbStack db,
                           cache::DbStack::open(paths, cache::OpenMode::kReadWrite));
  SSMTUNE_ASSIGN_OR_RETURN(auto cubins, cache::SqliteCubinCache::open(o_.db_path));
  db_ = std::make_unique<cache::DbStack>(std::move(db));
  cubins_ = std::move(cubins);
  // Every hardware thread: a session compiles its space while it measures.
  compiler_ = std::make_unique<jit::Compiler>(sources_, cubins_.get());
  return Status::ok();
}

Result<TuneReport> LibraryTuner::tune(const KernelFamily& family, const FamilyProblem& problem,
                                      TuneOptions options, const TuneProgressFn& progress,
                                      double config_timeout_s) {
  if (!(config_timeout_s >= 0))
    return Status::invalid_argument("the per-config timeout must be >= 0 seconds");
  SSMTUNE_RETURN_IF_ERROR(validate(options));
  std::lock_guard<std::mutex> lock(mu_);
  SSMTUNE_RETURN_IF_ERROR(open());
  options.gpu = o_.gpu;
  WorkerOptions wo;
  wo.exe = o_.worker_exe;
  wo.db_path = o_.db_path;
  wo.seed = options.seed;
  wo.max_error = options.max_error;
  wo.timeout_s = config_timeout_s > 0 ? config_timeout_s : o_.config_timeout_s;
  wo.gpu = o_.gpu;
  std::unique_ptr<Measurer> measurer;
  if (o_.make_measurer) {
    SSMTUNE_ASSIGN_OR_RETURN(measurer, o_.make_measurer(wo));
  } else {
    measurer = std::make_unique<WorkerMeasurer>(wo);
  }
  return tune_problem(*db_, *compiler_, *measurer, family, problem, options, progress);
}

FirstUseResult LibraryTuner::tune_on_first_use(const KernelFamily& family,
                                               const FamilyProblem& problem, double seconds) {
  FirstUseResult out;
  const std::string key = problem.key();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!first_use_asked_.insert(key).second) return out;
  }
  TuneOptions o;
  o.time_limit = seconds;
  const bool say = o_.first_use_progress;
  auto progress = [say, seconds](const TuneEvent& e) {
    if (!say) return;
    if (e.kind == TuneEvent::kStart)
      std::fprintf(stderr, "ssmtune: tuning %s on first use (at most %.0f s)...\n",
                   e.problem.c_str(), seconds);
    else if (e.kind == TuneEvent::kDone && !e.best_config.empty())
      std::fprintf(stderr, "ssmtune: tuned %s in %.1f s: %s (%.4f ms)\n", e.problem.c_str(),
                   e.elapsed_s, e.best_config.c_str(), e.best_ms);
  };
  auto r = tune(family, problem, o, progress);
  if (!r) {
    out.note = "; tune on first use failed: " + r.status().to_string();
    return out;
  }
  out.tuned = true;
  char note[160];
  if (r->already_tuned)
    std::snprintf(note, sizeof note, " (tuned by another process meanwhile)");
  else if (!r->found)
    std::snprintf(note, sizeof note, " (tuned on first use in %.1f s: no usable config found)",
                  r->wall_s);
  else
    std::snprintf(note, sizeof note, " (tuned on first use in %.1f s)", r->wall_s);
  out.note = note;
  return out;
}

}  // namespace ssmtune
