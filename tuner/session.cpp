// The tuning session.
#include "tuner/session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <set>

#include "tuner/selection.h"
#include "tuner/strategy.h"

namespace ssmtune {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

class Session {
 public:
  Session(TuningStore& store, jit::Compiler& compiler, Measurer& measurer,
          const KernelFamily& family, const FamilyProblem& problem, const TuneOptions& o,
          const TuneProgressFn& progress)
      : store_(store),
        compiler_(compiler),
        measurer_(measurer),
        family_(family),
        problem_(problem),
        o_(o),
        progress_(progress),
        key_(problem.key()) {}

  Result<TuneReport> run();

 private:
  bool already_tuned();
  Measurement base(const std::string& config) const;
  TrialResult measure(const std::string& config, double target_ms);
  void emit(TuneEvent::Kind kind, const std::string& message = "", TuneEvent e = {});
  Status record(const std::vector<Measurement>& ms);

  TuningStore& store_;
  jit::Compiler& compiler_;
  Measurer& measurer_;
  const KernelFamily& family_;
  const FamilyProblem& problem_;
  const TuneOptions& o_;
  const TuneProgressFn& progress_;
  std::string key_;
  MeasurerInfo info_;
  std::map<std::string, Measurement> known_;  // config -> most careful current measurement
  TuneReport report_;
  int done_ = 0, planned_ = 0;
  double start_ = 0;
  std::string best_key_;
  double best_ms_ = 0;
};

void Session::emit(TuneEvent::Kind kind, const std::string& message, TuneEvent e) {
  if (!progress_) return;
  e.kind = kind;
  e.problem = key_;
  e.message = message;
  // Halving's plan is an estimate (rungs re-measure survivors): never more done than planned.
  planned_ = std::max(planned_, done_);
  e.done = done_;
  e.planned = planned_;
  e.best_config = best_key_;
  e.best_ms = best_ms_;
  e.elapsed_s = now_s() - start_;
  progress_(e);
}

Measurement Session::base(const std::string& config) const {
  Measurement m;
  m.family = family_.name();
  m.device_uuid = info_.device.uuid;
  m.problem_key = key_;
  m.config_key = config;
  m.template_hash = info_.template_hash;
  m.driver_version = info_.device.driver_version;
  m.nvrtc_version = info_.device.nvrtc_version;
  m.timestamp = static_cast<int64_t>(std::time(nullptr));
  return m;
}

Status Session::record(const std::vector<Measurement>& given) {
  if (given.empty()) return Status::ok();
  // Text from a run (a log excerpt cut mid-character, a driver message) as
  // the store accepts it: it refuses control characters and invalid UTF-8.
  std::vector<Measurement> ms = given;
  for (Measurement& m : ms) {
    m.detail = printable_text(m.detail);
    m.verdict = printable_text(m.verdict, false);
    for (OutputError& e : m.errors) e.verdict = printable_text(e.verdict, false);
  }
  return store_.add_measurements(ms).with_context("recording measurements of " + key_);
}

bool Session::already_tuned() {
  if (o_.force || o_.resume) return false;
  auto dev = jit::query_device(o_.gpu);
  if (!dev) return false;  // the measurer reports the real error
  const Versions v{dev->driver_version, dev->nvrtc_version, compiler_.sources().hash()};
  auto b = store_.best(dev->uuid, key_, v);
  if (!b || !b->has_value() || (*b)->stale) return false;
  const BestEntry& e = **b;
  report_.already_tuned = true;
  report_.found = true;
  report_.best_config = e.config_key;
  report_.best_ms = e.median_ms;
  report_.best_rel_l2 = e.rel_l2;
  report_.rule = e.rule;
  emit(TuneEvent::kDone, "already tuned on this GPU: " + e.config_key +
                             "; --resume measures what is missing, --force measures again");
  return true;
}

TrialResult Session::measure(const std::string& config, double target_ms) {
  TrialResult out;
  auto it = known_.find(config);
  if (it != known_.end() && !o_.force) {  // resumed: the store already holds it
    ++report_.from_store;
    out.usable = it->second.status == MeasureStatus::kOk;
    out.median_ms = it->second.median_ms;
    out.spread_ms = it->second.spread_ms;
    return out;
  }
  Measurement got = measurer_.measure(config, target_ms);
  Measurement m = base(config);
  // The measurer's numbers and errors; identity and versions are the session's.
  m.status = got.status;
  m.detail = got.detail;
  m.median_ms = got.median_ms;
  m.spread_ms = got.spread_ms;
  m.min_ms = got.min_ms;
  m.repeats = got.repeats;
  m.errors = got.errors;
  m.rel_l2 = got.rel_l2;
  m.error_budget = got.error_budget;
  m.verdict = got.verdict;
  m.nan_inf = got.nan_inf;
  m.unwritten = got.unwritten;
  m.registers = got.registers;
  m.spill_bytes = got.spill_bytes;
  m.shared_bytes = got.shared_bytes;
  switch (m.status) {
    case MeasureStatus::kOk:
      ++report_.timed;
      break;
    case MeasureStatus::kFaulted:
    case MeasureStatus::kLaunchFailed:
      ++report_.faulted;
      break;
    case MeasureStatus::kInaccurate:
      ++report_.inaccurate;
      break;
    case MeasureStatus::kCompileFailed:
      ++report_.compile_failed;
      break;
    case MeasureStatus::kPruned:
      ++report_.pruned;
      break;
  }
  const Status recorded = record({m});
  out.usable = m.status == MeasureStatus::kOk;
  out.median_ms = m.median_ms;
  out.spread_ms = m.spread_ms;
  ++done_;
  if (out.usable && (best_ms_ == 0 || m.median_ms < best_ms_)) {
    best_ms_ = m.median_ms;
    best_key_ = config;
  }
  TuneEvent e;
  e.config = config;
  e.ms = m.median_ms;
  e.usable = out.usable;
  emit(TuneEvent::kMeasured, recorded ? "" : recorded.to_string(), e);
  return out;
}

Result<TuneReport> Session::run() {
  start_ = now_s();
  report_.problem_key = key_;
  if (already_tuned()) {
    report_.wall_s = now_s() - start_;
    return report_;
  }
  emit(TuneEvent::kStart, "starting the worker (inputs, fp64 reference)...");
  SSMTUNE_ASSIGN_OR_RETURN(info_, measurer_.start(key_));
  struct StopGuard {
    Measurer& m;
    ~StopGuard() { m.stop(); }
  } guard{measurer_};
  SSMTUNE_RETURN_IF_ERROR(store_.upsert_device(device_record(info_.device)));
  const Versions versions{info_.device.driver_version, info_.device.nvrtc_version,
                          info_.template_hash};
  MeasurementFilter f;
  f.device_uuid = info_.device.uuid;
  f.problem_key = key_;
  f.current = versions;
  SSMTUNE_ASSIGN_OR_RETURN(auto existing, store_.measurements(f));
  for (const auto& m : existing) {
    auto it = known_.find(m.config_key);
    if (it == known_.end() || m.repeats > it->second.repeats) known_[m.config_key] = m;
  }

  // Stage 1: the space, pruned before compiling.
  SpaceOptions so;
  so.include_fp64 = o_.include_fp64;
  const auto space = family_.search_space(problem_, info_.device, so);
  report_.configs = static_cast<int>(space.size());
  std::vector<Measurement> dropped_rows;
  std::vector<std::string> legal;
  for (const auto& e : space) {
    if (e.pruned) {
      ++report_.pruned;
      if (known_.count(e.config)) continue;
      Measurement m = base(e.config);
      m.status = MeasureStatus::kPruned;
      m.detail = e.reason;
      dropped_rows.push_back(m);
    } else {
      legal.push_back(e.config);
    }
  }
  // Stage 2: compile what is not yet measured, in parallel, into the
  // compiler's cache (which the measurer reads); prune by resources.
  std::vector<std::string> to_compile;
  std::vector<jit::ProgramSpec> specs;
  for (const auto& c : legal) {
    if (known_.count(c) && !o_.force) continue;
    auto spec = program_for(family_, problem_, c, info_.device);
    if (!spec) continue;
    to_compile.push_back(c);
    specs.push_back(*spec);
  }
  const double t_compile = now_s();
  TuneEvent compiling;
  compiling.compiled = static_cast<int>(specs.size());
  emit(TuneEvent::kCompiling,
       std::to_string(report_.configs) + " configs: " + std::to_string(report_.pruned) +
           " pruned before compiling; compiling " + std::to_string(specs.size()) + "...",
       compiling);
  auto programs = compiler_.compile_all(specs);
  report_.compiled = static_cast<int>(specs.size());
  std::set<std::string> dropped;
  for (size_t i = 0; i < programs.size(); ++i) {
    Measurement m = base(to_compile[i]);
    if (!programs[i]) {
      m.status = MeasureStatus::kCompileFailed;
      m.detail = programs[i].status().message().substr(0, 2000);
      ++report_.compile_failed;
    } else {
      const std::string why =
          family_.prune_by_resources(problem_, to_compile[i], programs[i]->kernels, info_.device);
      if (why.empty()) continue;
      m.status = MeasureStatus::kPruned;
      m.detail = why;
      ++report_.pruned;
    }
    dropped.insert(to_compile[i]);
    dropped_rows.push_back(m);
  }
  SSMTUNE_RETURN_IF_ERROR(record(dropped_rows));
  char buf[96];
  std::snprintf(buf, sizeof buf, "compiled in %.1f s; %zu dropped after compiling",
                now_s() - t_compile, dropped.size());
  const std::string compiled_line = buf;

  // Stage 3: the strategy, the default first.
  std::vector<std::string> kept;
  for (const auto& c : legal)
    if (!dropped.count(c)) kept.push_back(c);
  const std::vector<std::string> candidates =
      family_.first_look_order(kept, family_.heuristic_default(problem_, info_.device).config);
  planned_ = static_cast<int>(candidates.size());
  if (o_.strategy == "halving") planned_ = planned_ * 4 / 3;
  if (o_.budget > 0) planned_ = std::min(planned_, o_.budget);
  TuneEvent compiled;
  compiled.compiled = static_cast<int>(specs.size());
  emit(TuneEvent::kCompiled, compiled_line, compiled);
  Budget budget;
  budget.max_configs = o_.budget;
  budget.max_seconds = o_.time_limit;
  if (o_.cancel != nullptr) {
    const std::atomic<bool>* cancel = o_.cancel;
    budget.stop = [cancel] { return cancel->load(); };
  }
  MeasureFn fn = [this](const std::string& c, double t) { return measure(c, t); };
  const double t_measure = now_s();
  std::vector<Trial> trials;
  if (o_.strategy == "exhaustive") {
    trials = run_exhaustive(candidates, fn, budget);
  } else if (o_.strategy == "random") {
    trials = run_random(candidates, fn, budget, o_.seed);
  } else {
    trials = run_halving(candidates, fn, budget);
  }
  std::set<std::string> met;
  for (const auto& t : trials) met.insert(t.config);
  report_.cancelled = o_.cancel != nullptr && o_.cancel->load();
  report_.cut_short = report_.cancelled ||
                      (o_.time_limit > 0 && now_s() - t_measure >= o_.time_limit) ||
                      (o_.budget > 0 && static_cast<int>(met.size()) >= o_.budget &&
                       met.size() < candidates.size());

  // Selection over every current measurement of this problem here; the
  // most careful measurement of each config stands for it.
  SSMTUNE_ASSIGN_OR_RETURN(auto all, store_.measurements(f));
  std::map<std::string, Measurement> per_config;
  for (const auto& m : all) {
    auto it = per_config.find(m.config_key);
    if (it == per_config.end() || m.repeats > it->second.repeats) per_config[m.config_key] = m;
  }
  std::vector<Measurement> ms;
  for (auto& [k, m] : per_config) ms.push_back(m);
  const Selection sel = select_best(ms, o_.max_error);
  if (sel.found) {
    BestEntry b;
    b.family = family_.name();
    b.device_uuid = info_.device.uuid;
    b.problem_key = key_;
    b.config_key = sel.best.config_key;
    b.median_ms = sel.best.median_ms;
    b.spread_ms = sel.best.spread_ms;
    b.rel_l2 = sel.best.rel_l2;
    b.template_hash = info_.template_hash;
    b.driver_version = info_.device.driver_version;
    b.nvrtc_version = info_.device.nvrtc_version;
    b.timestamp = static_cast<int64_t>(std::time(nullptr));
    b.rule = sel.rule;
    SSMTUNE_RETURN_IF_ERROR(store_.set_best(b));
    report_.found = true;
    report_.best_config = b.config_key;
    report_.best_ms = b.median_ms;
    report_.best_rel_l2 = b.rel_l2;
    report_.rule = b.rule;
  }
  for (const auto& m : ms)
    if (m.verdict == "defect")
      report_.defects.push_back(m.config_key + " is far outside its budget (rel L2 " +
                                std::to_string(m.rel_l2) + "): " + m.detail);
  report_.wall_s = now_s() - start_;
  emit(TuneEvent::kDone, report_.cancelled   ? "cancelled: the best so far is recorded"
                         : report_.cut_short ? "the budget ended the search early"
                                             : "");
  return report_;
}

}  // namespace

Status validate(const TuneOptions& o) {
  if (o.strategy != "halving" && o.strategy != "exhaustive" && o.strategy != "random")
    return Status::invalid_argument("unknown strategy '" + o.strategy +
                                    "' (expected halving, exhaustive or random)");
  if (o.budget < 0) return Status::invalid_argument("budget must be >= 0");
  if (!(o.time_limit >= 0) || std::isinf(o.time_limit))
    return Status::invalid_argument("time limit must be a finite number of seconds >= 0");
  if (!(o.max_error >= 0) || std::isinf(o.max_error))
    return Status::invalid_argument("max error must be a finite number >= 0");
  return Status::ok();
}

Result<TuneReport> tune_problem(TuningStore& store, jit::Compiler& compiler, Measurer& measurer,
                                const KernelFamily& family, const FamilyProblem& problem,
                                const TuneOptions& options, const TuneProgressFn& progress) {
  SSMTUNE_RETURN_IF_ERROR(validate(options));
  Session s(store, compiler, measurer, family, problem, options, progress);
  return s.run();
}

}  // namespace ssmtune
