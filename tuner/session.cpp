// The tuning session.
#include "tuner/session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <set>
#include <thread>

#include "core/scope_exit.h"
#include "tuner/candidate_order.h"
#include "tuner/compile_pipeline.h"
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
  std::vector<std::string> candidate_order(const std::vector<std::string>& legal);
  // Records what the pipeline dropped since the last call; says once when
  // compiling is over.
  Status drain_pipeline();
  std::string summary_line() const;
  // With info_ set: what the store knows, the space pruned before compiling
  // (rows kept for later), the order, and the pipeline compiling in it.
  Status prepare();

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
  double deadline_ = 0;  // start_ + time limit, 0 for none
  std::unique_ptr<CompilePipeline> pipeline_owner_;
  CompilePipeline* pipeline_ = nullptr;   // while the strategy runs
  std::vector<Measurement> stage1_rows_;  // pruned before compiling
  int to_compile_ = 0;
  int dropped_after_compile_ = 0;  // failed or pruned by their resources
  bool compiled_said_ = false, compiling_said_ = false;
  double t_compile_ = 0;
  std::set<std::string> met_, timed_, faulted_, inaccurate_, compile_failed_, measurer_pruned_,
      from_store_;
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
  e.to_compile = to_compile_;
  if (pipeline_ != nullptr) e.compiled = pipeline_->counts().compiled;
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
  std::optional<jit::DeviceInfo> dev = o_.device_hint;
  if (!dev) {
    auto found = jit::query_device(o_.gpu);
    if (!found) return false;  // the measurer reports the real error
    dev = *found;
  }
  const Versions v{dev->driver_version, dev->nvrtc_version, compiler_.sources().hash()};
  // This GPU's entry, else one of an identical GPU (same class: issue 19),
  // whose result serves this one as it is.
  std::optional<BestEntry> found;
  std::string where = "this GPU";
  if (auto b = store_.best(dev->uuid, key_, v); b && b->has_value() && !(*b)->stale) found = **b;
  if (!found) {
    auto peers = store_.class_peers(device_record(*dev));
    for (const std::string& uuid : peers ? *peers : std::vector<std::string>{}) {
      auto b = store_.best(uuid, key_, v);
      if (!b || !b->has_value() || (*b)->stale) continue;
      found = **b;
      where = "an identical GPU (" + uuid + ")";
      break;
    }
  }
  if (!found) return false;
  const BestEntry& e = *found;
  report_.already_tuned = true;
  report_.found = true;
  report_.best_config = e.config_key;
  report_.best_ms = e.median_ms;
  report_.best_rel_l2 = e.rel_l2;
  report_.rule = e.rule;
  emit(TuneEvent::kDone, "already tuned on " + where + ": " + e.config_key +
                             "; --resume measures what is missing, --force measures again");
  return true;
}

TrialResult Session::measure(const std::string& config, double target_ms) {
  TrialResult out;
  met_.insert(config);
  auto it = known_.find(config);
  if (it != known_.end() && !o_.force) {  // resumed: the store already holds it
    from_store_.insert(config);
    out.usable = it->second.status == MeasureStatus::kOk;
    out.median_ms = it->second.median_ms;
    out.spread_ms = it->second.spread_ms;
    return out;
  }
  const double t_measure = now_s();
  Measurement got = measurer_.measure(config, target_ms);
  report_.measure_s += now_s() - t_measure;
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
      timed_.insert(config);
      break;
    case MeasureStatus::kFaulted:
    case MeasureStatus::kLaunchFailed:
      faulted_.insert(config);
      break;
    case MeasureStatus::kInaccurate:
      inaccurate_.insert(config);
      break;
    case MeasureStatus::kCompileFailed:
      compile_failed_.insert(config);
      break;
    case MeasureStatus::kPruned:
      measurer_pruned_.insert(config);
      break;
  }
  Status recorded = record({m});
  if (Status d = drain_pipeline(); recorded && !d) recorded = d;
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

std::vector<std::string> Session::candidate_order(const std::vector<std::string>& legal) {
  const std::string first = family_.heuristic_default(problem_, info_.device).config;
  std::vector<std::string> order = family_.first_look_order(legal, first);
  // Hints: this problem's rows (any versions: --force, --resume, stale
  // ones), then the nearest tuned problem's. A store that cannot answer
  // leaves the family's order.
  std::vector<std::vector<Measurement>> hints;
  MeasurementFilter f;
  f.family = family_.name();
  f.device_uuid = info_.device.uuid;
  f.problem_key = key_;
  if (auto own = store_.measurements(f)) hints.push_back(std::move(*own));
  if (auto near = nearest_problem_rows(store_, family_, problem_, info_.device.uuid))
    hints.push_back(std::move(*near));
  order = rank_candidates(order, first, hints);
  if (o_.strategy == "random") order = shuffled(order, o_.seed);
  return order;
}

Status Session::drain_pipeline() {
  if (pipeline_ == nullptr) return Status::ok();
  std::vector<Measurement> rows;
  for (const CompileDrop& d : pipeline_->take_dropped()) {
    Measurement m = base(d.config);
    m.status = d.failed ? MeasureStatus::kCompileFailed : MeasureStatus::kPruned;
    m.detail = d.detail;
    rows.push_back(std::move(m));
  }
  Status s = record(rows);
  const PipelineCounts pc = pipeline_->counts();
  if (pc.finished && !compiled_said_ && to_compile_ > 0) {
    compiled_said_ = true;
    char buf[160];
    std::snprintf(
        buf, sizeof buf, "compiled %d in %.1f s (%d failed, %d pruned by resources)%s", pc.compiled,
        now_s() - t_compile_, pc.failed, pc.pruned,
        pc.skipped > 0 ? (", " + std::to_string(pc.skipped) + " not reached").c_str() : "");
    TuneEvent e;
    e.compiled = pc.compiled;
    emit(TuneEvent::kCompiled, buf, e);
  }
  return s;
}

std::string Session::summary_line() const {
  const std::string counts =
      "timed " + std::to_string(report_.measured) + " of " + std::to_string(report_.candidates) +
      (report_.not_reached > 0 ? ", " + std::to_string(report_.not_reached) + " not compiled"
                               : "") +
      (dropped_after_compile_ > 0
           ? ", " + std::to_string(dropped_after_compile_) + " dropped after compiling"
           : "");
  char wall[128];
  std::snprintf(wall, sizeof wall,
                " in %.1f s (setup %.1f s, measuring %.1f s, waiting for compiles %.1f s)",
                now_s() - start_, report_.setup_s, report_.measure_s, report_.compile_wait_s);
  if (report_.cut_short) return "budget cut the search: " + counts + wall;
  return counts + wall;
}

Status Session::prepare() {
  known_.clear();
  stage1_rows_.clear();
  report_.pruned = 0;
  to_compile_ = 0;
  MeasurementFilter f;
  f.device_uuid = info_.device.uuid;
  f.problem_key = key_;
  f.current =
      Versions{info_.device.driver_version, info_.device.nvrtc_version, info_.template_hash};
  SSMTUNE_ASSIGN_OR_RETURN(auto existing, store_.measurements(f));
  for (const auto& m : existing) {
    auto it = known_.find(m.config_key);
    if (it == known_.end() || m.repeats > it->second.repeats) known_[m.config_key] = m;
  }

  // Stage 1: the space, pruned before compiling (the rows are recorded once
  // the measurer has confirmed the device).
  SpaceOptions so;
  so.include_fp64 = o_.include_fp64;
  const auto space = family_.search_space(problem_, info_.device, so);
  report_.configs = static_cast<int>(space.size());
  std::vector<std::string> legal;
  for (const auto& e : space) {
    if (e.pruned) {
      ++report_.pruned;
      if (known_.count(e.config)) continue;
      Measurement m = base(e.config);
      m.status = MeasureStatus::kPruned;
      m.detail = e.reason;
      stage1_rows_.push_back(m);
    } else {
      legal.push_back(e.config);
    }
  }
  // The heuristic default is what an untuned call runs: a tune always looks
  // at it, so a tuned shape is never slower than an untuned one, even where
  // a family's space does not list it.
  const std::string first = family_.heuristic_default(problem_, info_.device).config;
  const bool listed = std::any_of(space.begin(), space.end(),
                                  [&first](const SpaceEntry& e) { return e.config == first; });
  if (!listed && family_.check_config(problem_, first, info_.device)) {
    legal.insert(legal.begin(), first);
    ++report_.configs;
  }

  // Stage 2: the order to compile and measure in; the pipeline compiles
  // what is not yet measured, in that order, while the strategy measures.
  const std::vector<std::string> candidates = candidate_order(legal);
  report_.candidates = static_cast<int>(candidates.size());
  std::vector<PipelineItem> items;
  for (const auto& c : candidates) {
    PipelineItem item{c, std::nullopt};
    if (!known_.count(c) || o_.force) {
      // A config without a program goes to the measurer, which reports why.
      if (auto spec = program_for(family_, problem_, c, info_.device)) item.spec = std::move(*spec);
    }
    if (item.spec) ++to_compile_;
    items.push_back(std::move(item));
  }
  planned_ = static_cast<int>(candidates.size());
  if (o_.strategy == "halving") planned_ = planned_ * 4 / 3;
  if (o_.budget > 0) planned_ = std::min(planned_, o_.budget);
  // The hooks run on the compile threads: they keep their own copy of the device.
  PipelineHooks hooks;
  const jit::DeviceInfo device = info_.device;
  hooks.compile = [this](const jit::ProgramSpec& spec) { return compiler_.compile(spec); };
  hooks.prune = [this, device](const std::string& c, const jit::CompiledProgram& p) {
    return family_.prune_by_resources(problem_, c, p.kernels, device);
  };
  hooks.rank = [this, device](const std::string& c, const jit::CompiledProgram& p) {
    return family_.resource_rank(problem_, c, p.kernels, device);
  };
  t_compile_ = now_s();
  compiled_said_ = false;
  pipeline_owner_ =
      std::make_unique<CompilePipeline>(std::move(items), hooks, o_.compile_threads, deadline_);
  pipeline_ = pipeline_owner_.get();
  if (compiling_said_) return Status::ok();
  compiling_said_ = true;
  emit(TuneEvent::kCompiling, std::to_string(report_.configs) +
                                  " configs: " + std::to_string(report_.pruned) +
                                  " pruned before compiling; compiling " +
                                  std::to_string(to_compile_) + ", measuring as they are ready...");
  return Status::ok();
}

Result<TuneReport> Session::run() {
  start_ = now_s();
  if (o_.time_limit > 0) deadline_ = start_ + o_.time_limit;
  report_.problem_key = key_;
  if (already_tuned()) {
    report_.wall_s = now_s() - start_;
    return report_;
  }
  emit(TuneEvent::kStart, "starting the worker (inputs, fp64 reference)...");
  // Where the device is known before the worker is ready (given, or this
  // process sees the GPU), compiling starts while the worker starts; a
  // worker that reports another device or templates makes it start over.
  std::optional<jit::DeviceInfo> early = o_.device_hint;
  if (!early)
    if (auto d = jit::query_device(o_.gpu)) early = *d;
  Result<MeasurerInfo> started = Status::internal("the measurer was not started");
  if (early) {
    info_ = MeasurerInfo{};
    info_.device = *early;
    info_.template_hash = compiler_.sources().hash();
    Status prepared = Status::ok();
    {
      std::thread worker([this, &started] { started = measurer_.start(key_); });
      const ScopeExit join([&worker] { worker.join(); });
      prepared = prepare();
    }
    if (!started) {
      pipeline_owner_.reset();
      return started.status();
    }
    const MeasurerInfo& got = *started;
    const bool same = got.device.uuid == early->uuid && got.template_hash == info_.template_hash &&
                      got.device.cc_major == early->cc_major &&
                      got.device.cc_minor == early->cc_minor &&
                      got.device.sm_count == early->sm_count &&
                      got.device.max_shared_per_block == early->max_shared_per_block &&
                      got.device.max_shared_per_sm == early->max_shared_per_sm &&
                      got.device.max_threads_per_sm == early->max_threads_per_sm &&
                      got.device.registers_per_sm == early->registers_per_sm &&
                      got.device.driver_version == early->driver_version &&
                      got.device.nvrtc_version == early->nvrtc_version;
    info_ = got;
    if (!same) {
      pipeline_owner_.reset();  // compiled for another device: start over
      prepared = prepare();
    }
    if (!prepared) {
      measurer_.stop();
      return prepared;
    }
  } else {
    SSMTUNE_ASSIGN_OR_RETURN(info_, measurer_.start(key_));
    if (Status s = prepare(); !s) {
      measurer_.stop();
      return s;
    }
  }
  const ScopeExit stop([this] { measurer_.stop(); });
  CompilePipeline& pipeline = *pipeline_owner_;
  const ScopeExit unset_pipeline([this] { pipeline_ = nullptr; });
  SSMTUNE_RETURN_IF_ERROR(store_.upsert_device(device_record(info_.device)));
  SSMTUNE_RETURN_IF_ERROR(record(stage1_rows_));
  const Versions versions{info_.device.driver_version, info_.device.nvrtc_version,
                          info_.template_hash};
  MeasurementFilter f;
  f.device_uuid = info_.device.uuid;
  f.problem_key = key_;
  f.current = versions;

  // Stage 3: the strategy, the default first, under what is left of the budget.
  report_.setup_s = now_s() - start_;
  Budget budget;
  budget.max_configs = o_.budget;
  if (deadline_ > 0) budget.max_seconds = std::max(1e-3, deadline_ - now_s());
  if (o_.cancel != nullptr) {
    const std::atomic<bool>* cancel = o_.cancel;
    budget.stop = [cancel] { return cancel->load(); };
  }
  MeasureFn fn = [this](const std::string& c, double t) { return measure(c, t); };
  if (o_.strategy == "halving") {
    run_halving(pipeline, fn, budget);
  } else {
    run_exhaustive(pipeline, fn, budget);  // random: over the shuffled order
  }
  pipeline.close();
  pipeline.wait();  // compiles in flight (few: the deadline skips late ones)
  SSMTUNE_RETURN_IF_ERROR(drain_pipeline());
  const PipelineCounts pc = pipeline.counts();
  report_.compile_wait_s = pc.waited_s;
  report_.compiled = pc.compiled;
  report_.not_reached = pc.skipped;
  report_.compile_failed = pc.failed + static_cast<int>(compile_failed_.size());
  report_.pruned += pc.pruned + static_cast<int>(measurer_pruned_.size());
  report_.timed = static_cast<int>(timed_.size());
  report_.faulted = static_cast<int>(faulted_.size());
  report_.inaccurate = static_cast<int>(inaccurate_.size());
  report_.from_store = static_cast<int>(from_store_.size());
  report_.measured = static_cast<int>(met_.size());
  report_.cancelled = o_.cancel != nullptr && o_.cancel->load();
  // Cut short: some candidate fit to time was never met.
  report_.cut_short = report_.cancelled ||
                      static_cast<int>(met_.size()) + pc.failed + pc.pruned < report_.candidates;
  dropped_after_compile_ = pc.failed + pc.pruned;

  // Selection over every current measurement of this problem here; the
  // most careful measurement of each config stands for it.
  SSMTUNE_ASSIGN_OR_RETURN(auto all, store_.measurements(f));
  std::map<std::string, Measurement> per_config;
  for (const auto& m : all) {
    auto it = per_config.find(m.config_key);
    if (it == per_config.end() || m.repeats > it->second.repeats) per_config[m.config_key] = m;
  }
  std::vector<Measurement> ms;
  ms.reserve(per_config.size());
  for (auto& [k, m] : per_config) ms.push_back(std::move(m));
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
  report_.summary = summary_line();
  emit(TuneEvent::kDone, report_.cancelled
                             ? "cancelled: the best so far is recorded; " + report_.summary
                             : report_.summary);
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
