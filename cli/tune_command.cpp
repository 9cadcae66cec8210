// `ssmtune tune`: tunes the forward kernel for one shape (or every shape of
// a file) on device 0 and records every measurement, and the selected best,
// in the tuning database. Configs run in a worker process so a fault or a
// hang is recorded and the run goes on.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "cache/db_path.h"
#include "cache/sqlite_cubin_cache.h"
#include "cache/tuning_db.h"
#include "cli/commands.h"
#include "cli/problem_options.h"
#include "cli/progress_line.h"
#include "cli/table.h"
#include "cli/worker_client.h"
#include "cli/worker_protocol.h"
#include "jit/device.h"
#include "jit/program_builder.h"
#include "tuner/fwd_plan.h"
#include "tuner/heuristics.h"
#include "tuner/search_space.h"
#include "tuner/selection.h"
#include "tuner/strategy.h"

namespace ssmtune::cli {
namespace {

struct TuneArgs {
  ProblemArgs problem;
  std::string shapes;
  std::string strategy = "halving";
  int budget = 0;
  double time_limit = 0;
  double max_error = 0;
  double timeout = 60;
  uint64_t seed = 0;
  bool force = false;
  bool resume = false;
  bool no_fp64 = false;
  std::string db;
  std::string format = "table";
};

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "ssmtune";
}

Result<std::vector<Problem>> load_shapes(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::io_error("cannot read shapes file '" + path + "'");
  std::vector<Problem> out;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    line.erase(0, line.find_first_not_of(" \t"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (line.empty()) continue;
    auto p = Problem::from_key(line);
    if (!p) return p.status().with_context(path + ":" + std::to_string(n));
    out.push_back(*p);
  }
  if (out.empty()) return Status::invalid_argument("shapes file '" + path + "' lists no problem");
  return out;
}

struct Counts {
  int total = 0, pruned = 0, compile_failed = 0, timed = 0, faulted = 0, inaccurate = 0,
      skipped = 0;
};

class Tuner {
 public:
  Tuner(const TuneArgs& a, cache::TuningDb& db, std::string db_path)
      : a_(a), db_(db), db_path_(std::move(db_path)) {}

  // Tunes one problem; the summary row goes to `table`.
  Status tune(const Problem& p, Table& table);

 private:
  Status start_worker(const Problem& p);
  // True (and the table row written) when the database already holds a
  // current best entry for `p` on device 0 and neither --force nor --resume
  // asks for more: a tuned shape costs no worker, compile or measurement.
  bool already_tuned(const Problem& p, Table& table);
  cache::Measurement base_measurement(const Problem& p, const KernelConfig& c) const;
  TrialResult measure(const Problem& p, const KernelConfig& c, double target_ms);

  const TuneArgs& a_;
  cache::TuningDb& db_;
  std::string db_path_;
  std::optional<WorkerClient> worker_;
  jit::DeviceInfo device_;
  std::string template_hash_;
  std::map<std::string, cache::Measurement> known_;  // config -> newest non-stale measurement
  Counts counts_;
  double start_ = 0;
  std::optional<ProgressLine> progress_;  // compiled / timed of planned, best, ETA
};

Status Tuner::start_worker(const Problem& p) {
  std::vector<std::string> argv = {self_exe(), "worker", "--problem", p.key(),
                                   "--db",     db_path_, "--seed",    std::to_string(a_.seed)};
  if (a_.max_error > 0) {
    argv.push_back("--max-error");
    argv.push_back(std::to_string(a_.max_error));
  }
  SSMTUNE_ASSIGN_OR_RETURN(WorkerClient w, WorkerClient::spawn(argv));
  // The greeting comes after the inputs and the fp64 reference are ready.
  SSMTUNE_ASSIGN_OR_RETURN(nlohmann::json hello, w.read(600));
  if (hello.contains("error"))
    return Status::cuda_error(hello["error"].get<std::string>()).with_context("worker");
  device_ = device_from_json(hello["device"]);
  template_hash_ = hello.value("template_hash", "");
  worker_ = std::move(w);
  return Status::ok();
}

cache::Measurement Tuner::base_measurement(const Problem& p, const KernelConfig& c) const {
  cache::Measurement m;
  m.device_uuid = device_.uuid;
  m.problem_key = p.key();
  m.config_key = c.key();
  m.template_hash = template_hash_;
  m.driver_version = device_.driver_version;
  m.nvrtc_version = device_.nvrtc_version;
  m.timestamp = static_cast<int64_t>(std::time(nullptr));
  return m;
}

TrialResult Tuner::measure(const Problem& p, const KernelConfig& c, double target_ms) {
  TrialResult out;
  auto it = known_.find(c.key());
  if (it != known_.end() && !a_.force) {  // resumed: the database already holds it
    ++counts_.skipped;
    out.usable = it->second.status == cache::MeasureStatus::kOk;
    out.median_ms = it->second.median_ms;
    out.spread_ms = it->second.spread_ms;
    return out;
  }
  cache::Measurement m = base_measurement(p, c);
  Status s = worker_ ? Status::ok() : start_worker(p);
  nlohmann::json reply;
  if (s) s = worker_->send({{"config", c.key()}, {"target_ms", target_ms}});
  if (s) {
    auto r = worker_->read(a_.timeout);
    if (r) {
      reply = *r;
    } else {
      s = r.status();
    }
  }
  if (!s || reply.contains("error")) {
    m.status = cache::MeasureStatus::kFaulted;
    m.detail = !s ? s.to_string() : reply["error"].get<std::string>();
    worker_.reset();  // a fresh worker for the next config
    ++counts_.faulted;
  } else {
    const WorkerResult w = worker_result_from_json(reply);
    auto st = cache::parse_measure_status(w.status);
    m.status = st ? *st : cache::MeasureStatus::kFaulted;
    m.detail = w.detail;
    m.median_ms = w.median_ms;
    m.spread_ms = w.spread_ms;
    m.min_ms = w.min_ms;
    m.repeats = w.repeats;
    m.rel_l2 = w.rel_l2;
    m.max_abs_rel = w.max_abs_rel;
    m.max_rel = w.max_rel;
    m.nan_inf = w.nan_inf;
    m.unwritten = w.unwritten;
    m.verdict = w.verdict;
    m.error_budget = w.budget;
    m.registers = w.registers;
    m.spill_bytes = w.spill_bytes;
    m.shared_bytes = w.shared_bytes;
    if (m.status == cache::MeasureStatus::kFaulted) {
      worker_.reset();
      ++counts_.faulted;
    }
    if (m.status == cache::MeasureStatus::kOk) ++counts_.timed;
    if (m.status == cache::MeasureStatus::kInaccurate) ++counts_.inaccurate;
    if (m.status == cache::MeasureStatus::kCompileFailed) ++counts_.compile_failed;
  }
  if (Status ws = db_.add_measurement(m); !ws)
    std::fprintf(stderr, "\nssmtune tune: recording %s failed: %s\n", c.key().c_str(),
                 ws.to_string().c_str());
  out.usable = m.status == cache::MeasureStatus::kOk;
  out.median_ms = m.median_ms;
  out.spread_ms = m.spread_ms;
  if (progress_) progress_->on_timed(c.key(), m.median_ms, out.usable);
  return out;
}

bool Tuner::already_tuned(const Problem& p, Table& table) {
  if (a_.force || a_.resume) return false;
  auto dev = jit::query_device(0);
  auto sources = jit::TemplateSources::load_default();
  if (!dev || !sources) return false;  // the worker reports the real error
  const cache::Versions v{dev->driver_version, dev->nvrtc_version, sources->hash()};
  auto b = db_.best(dev->uuid, p.key(), v);
  if (!b || !b->has_value() || (*b)->stale) return false;
  const cache::BestEntry& e = **b;
  std::fprintf(stderr,
               "[tune %s] already tuned on this GPU: %s (%.4f ms); --resume measures what is "
               "missing, --force measures again\n",
               p.key().c_str(), e.config_key.c_str(), e.median_ms);
  table.add_row({p.key(), nlohmann::json(), nlohmann::json(), 0, 0, 0, 0, 0, nlohmann::json(),
                 e.config_key, e.median_ms, e.rel_l2, now_s() - start_});
  return true;
}

Status Tuner::tune(const Problem& p, Table& table) {
  start_ = now_s();
  if (already_tuned(p, table)) return Status::ok();
  counts_ = {};
  known_.clear();
  worker_.reset();
  std::fprintf(stderr, "[tune %s] starting the worker (inputs, fp64 reference)...\n",
               p.key().c_str());
  SSMTUNE_RETURN_IF_ERROR(start_worker(p));
  SSMTUNE_RETURN_IF_ERROR(db_.upsert_device(cache::device_record(device_)));
  const cache::Versions versions{device_.driver_version, device_.nvrtc_version, template_hash_};

  cache::MeasurementFilter f;
  f.device_uuid = device_.uuid;
  f.problem_key = p.key();
  f.current = versions;
  SSMTUNE_ASSIGN_OR_RETURN(auto existing, db_.measurements(f));
  for (const auto& m : existing) {
    auto it = known_.find(m.config_key);
    if (it == known_.end() || m.repeats > it->second.repeats) known_[m.config_key] = m;
  }

  // Stage 1: the space, pruned before compiling.
  const auto space = search_space(p, device_, SpaceOptions{!a_.no_fp64, true});
  counts_.total = static_cast<int>(space.size());
  std::vector<cache::Measurement> pruned;
  std::vector<KernelConfig> legal;
  for (const auto& e : space) {
    if (e.pruned) {
      ++counts_.pruned;
      if (known_.count(e.config.key())) continue;
      cache::Measurement m = base_measurement(p, e.config);
      m.status = cache::MeasureStatus::kPruned;
      m.detail = e.reason;
      pruned.push_back(m);
    } else {
      legal.push_back(e.config);
    }
  }
  // Stage 2: compile what is not yet measured (in parallel, into the
  // database's cubin cache, which the worker reads), prune by resources.
  auto cubins = cache::SqliteCubinCache::open(db_path_);
  if (!cubins) return cubins.status();
  SSMTUNE_ASSIGN_OR_RETURN(jit::TemplateSources sources, jit::TemplateSources::load_default());
  jit::Compiler compiler(sources, cubins->get());
  std::vector<KernelConfig> to_compile;
  std::vector<jit::ProgramSpec> specs;
  for (const auto& c : legal) {
    if (known_.count(c.key()) && !a_.force) continue;
    auto plan = plan_fwd(p, c, device_.max_shared_per_block);
    if (!plan) continue;
    to_compile.push_back(c);
    specs.push_back(jit::make_programs(plan->kernels, 0, device_.arch(), "ssm_fwd")[0]);
  }
  const double t_compile = now_s();
  std::fprintf(stderr, "[tune %s] %d configs: %d pruned before compiling; compiling %zu...\n",
               p.key().c_str(), counts_.total, counts_.pruned, specs.size());
  progress_.emplace(ProgressLine::for_stderr("tune " + p.key()));
  // Until the compiler has pruned, every config to compile is a planned timing.
  progress_->start(static_cast<int>(specs.size()), static_cast<int>(specs.size()), a_.time_limit);
  auto programs = compiler.compile_all(specs);
  progress_->on_compiled(static_cast<int>(programs.size()));
  std::set<std::string> dropped;
  for (size_t i = 0; i < programs.size(); ++i) {
    cache::Measurement m = base_measurement(p, to_compile[i]);
    if (!programs[i]) {
      m.status = cache::MeasureStatus::kCompileFailed;
      m.detail = programs[i].status().message().substr(0, 2000);
      ++counts_.compile_failed;
    } else {
      const std::string why = prune_by_resources(to_compile[i], programs[i]->kernels, device_);
      if (why.empty()) continue;
      m.status = cache::MeasureStatus::kPruned;
      m.detail = why;
      ++counts_.pruned;
    }
    dropped.insert(to_compile[i].key());
    pruned.push_back(m);
  }
  SSMTUNE_RETURN_IF_ERROR(db_.add_measurements(pruned));
  std::fprintf(stderr, "%s[tune %s] compiled in %.1f s; %zu dropped after compiling\n",
               isatty(STDERR_FILENO) ? "\n" : "", p.key().c_str(), now_s() - t_compile,
               dropped.size());

  std::vector<KernelConfig> kept;
  for (const auto& c : legal)
    if (!dropped.count(c.key())) kept.push_back(c);
  const std::vector<KernelConfig> candidates = first_look_order(
      kept, heuristic_default(p, device_.sm_count, device_.max_shared_per_block).config.key());
  // --budget caps what is measured, so it caps the plan too.
  auto plan = [this](size_t n) {
    const int k = static_cast<int>(n);
    return a_.budget > 0 ? std::min(k, a_.budget) : k;
  };
  progress_->replan(plan(candidates.size()));
  Budget budget;
  budget.max_configs = a_.budget;
  budget.max_seconds = a_.time_limit;
  MeasureFn fn = [&](const KernelConfig& c, double t) { return measure(p, c, t); };
  if (a_.strategy == "exhaustive") {
    run_exhaustive(candidates, fn, budget);
  } else if (a_.strategy == "random") {
    run_random(candidates, fn, budget, a_.seed);
  } else {
    // An estimate: the rungs re-measure survivors (the line never shows more
    // done than planned).
    progress_->replan(plan(candidates.size() * 4 / 3));
    run_halving(candidates, fn, budget);
  }
  progress_->finish();
  progress_.reset();
  worker_.reset();

  // Selection over every non-stale measurement of this problem here; the
  // most careful measurement of each config stands for it.
  SSMTUNE_ASSIGN_OR_RETURN(auto all, db_.measurements(f));
  std::map<std::string, cache::Measurement> per_config;
  for (const auto& m : all) {
    auto it = per_config.find(m.config_key);
    if (it == per_config.end() || m.repeats > it->second.repeats) per_config[m.config_key] = m;
  }
  std::vector<cache::Measurement> ms;
  for (auto& [k, m] : per_config) ms.push_back(m);
  const Selection sel = select_best(ms, a_.max_error);
  const double wall = now_s() - start_;
  if (sel.found) {
    cache::BestEntry b;
    b.device_uuid = device_.uuid;
    b.problem_key = p.key();
    b.config_key = sel.best.config_key;
    b.median_ms = sel.best.median_ms;
    b.spread_ms = sel.best.spread_ms;
    b.rel_l2 = sel.best.rel_l2;
    b.template_hash = template_hash_;
    b.driver_version = device_.driver_version;
    b.nvrtc_version = device_.nvrtc_version;
    b.timestamp = static_cast<int64_t>(std::time(nullptr));
    b.rule = sel.rule;
    SSMTUNE_RETURN_IF_ERROR(db_.set_best(b));
  }
  for (const auto& m : ms)
    if (m.verdict == "defect")
      std::fprintf(stderr, "[tune %s] DEFECT: %s is far outside its budget (rel L2 %.3g): %s\n",
                   p.key().c_str(), m.config_key.c_str(), m.rel_l2, m.detail.c_str());
  table.add_row({p.key(), counts_.total, counts_.pruned, static_cast<int>(specs.size()),
                 counts_.compile_failed, counts_.timed, counts_.faulted, counts_.inaccurate,
                 counts_.skipped, sel.found ? sel.best.config_key : "(none)",
                 sel.found ? nlohmann::json(sel.best.median_ms) : nlohmann::json(),
                 sel.found ? nlohmann::json(sel.best.rel_l2) : nlohmann::json(), wall});
  return Status::ok();
}

void run(const TuneArgs& a) {
  auto fmt = parse_format(a.format);
  if (!report("tune", fmt.status())) return;
  if (a.strategy != "halving" && a.strategy != "exhaustive" && a.strategy != "random") {
    report("tune", Status::invalid_argument("unknown strategy '" + a.strategy +
                                            "' (expected halving, exhaustive or random)"));
    return;
  }
  std::vector<Problem> problems;
  if (!a.shapes.empty()) {
    auto ps = load_shapes(a.shapes);
    if (!report("tune", ps.status())) return;
    problems = *ps;
  } else {
    auto p = a.problem.problem();
    if (!report("tune", p.status())) return;
    problems.push_back(*p);
  }
  const std::string path = cache::resolve_db_path(a.db);
  auto db = cache::TuningDb::open(path, cache::OpenMode::kReadWrite);
  if (!report("tune", db.status())) return;
  Tuner tuner(a, *db, path);
  Table t({"problem", "configs", "pruned", "compiled", "compile_failed", "timed", "faulted",
           "inaccurate", "from_db", "best", "best_ms", "best_rel_l2", "wall_s"});
  for (const auto& p : problems) {
    if (!report("tune", tuner.tune(p, t).with_context(p.key()))) return;
  }
  std::fprintf(stderr, "tuning database: %s\n", path.c_str());
  t.print(std::cout, *fmt);
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "tune", "Tune the forward kernel for a shape on this GPU and record it in the database");
  auto a = std::make_shared<TuneArgs>();
  add_problem_options(cmd, a->problem);
  cmd->add_option("--shapes", a->shapes, "file of problem keys, one per line (# comments)");
  cmd->add_option("--strategy", a->strategy, "halving, exhaustive or random")
      ->capture_default_str();
  cmd->add_option("--budget", a->budget, "most configs to measure (0: no limit)")
      ->capture_default_str();
  cmd->add_option("--time-limit", a->time_limit, "seconds of measuring (0: no limit)")
      ->capture_default_str();
  cmd->add_option("--max-error", a->max_error, "tighter rel L2 budget than the dtype's default");
  cmd->add_option("--timeout", a->timeout, "seconds one config may take before it is killed")
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "input seed (0: fresh)")->capture_default_str();
  cmd->add_flag("--force", a->force, "re-measure configs the database already holds");
  cmd->add_flag("--resume", a->resume,
                "tune a shape the database already has a best entry for, measuring only the "
                "configs it lacks");
  cmd->add_flag("--no-fp64", a->no_fp64, "leave fp64-accumulation configs out");
  cmd->add_option("--db", a->db, "tuning database (default: $SSMTUNE_DB or the cache dir)");
  cmd->add_option("--format", a->format, "table, json or csv")->capture_default_str();
  cmd->callback([a] { run(*a); });
}

}  // namespace ssmtune::cli
