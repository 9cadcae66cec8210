// `ssmtune tune`: tunes one shape (or every shape of a file, or one shard of
// them), of any kernel family, on one GPU, or spread over several
// (cli/tune_on_gpus.h), through the library's tuning session
// (tuner/session.h), with configs run in worker processes, and prints one
// summary row per shape.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <set>

#include "cache/db_path.h"
#include "cache/db_stack.h"
#include "cache/sqlite_cubin_cache.h"
#include "cache/tuning_db.h"
#include "cli/commands.h"
#include "cli/gpu_list.h"
#include "cli/option_checks.h"
#include "cli/problem_options.h"
#include "cli/progress_line.h"
#include "cli/shard.h"
#include "cli/table.h"
#include "cli/tune_on_gpus.h"
#include "jit/compiler.h"
#include "jit/driver.h"
#include "jit/template_sources.h"
#include "tuner/session.h"
#include "tuner/worker_measurer.h"

namespace ssmtune::cli {
namespace {

struct TuneArgs {
  ProblemArgs problem;
  std::string shapes;
  TuneOptions tune;
  double timeout = 60;
  uint64_t input_seed = 0;
  bool no_fp64 = false;
  std::string db;
  std::string shard;  // "I/N"; empty: every shape
  std::string gpus;   // "all" or "0,2,..."; empty: --gpu alone
  std::string format = "table";
};

std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "ssmtune";
}

Result<std::vector<ParsedProblem>> load_shapes(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::io_error("cannot read shapes file '" + path + "'");
  std::vector<ParsedProblem> out;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    line.erase(0, line.find_first_not_of(" \t"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (line.empty()) continue;
    auto p = parse_any_problem(line);
    if (!p) return p.status().with_context(path + ":" + std::to_string(n));
    out.push_back(std::move(*p));
  }
  if (out.empty()) return Status::invalid_argument("shapes file '" + path + "' lists no problem");
  return out;
}

// Progress on stderr: the stage lines as they come, then the progress line
// (live on a terminal, plain lines otherwise) while configs are measured.
class TuneProgress {
 public:
  explicit TuneProgress(double time_limit_s) : time_limit_s_(time_limit_s) {}
  void operator()(const TuneEvent& e) {
    // Compiling and measuring overlap: the line starts with compiling.
    if (e.kind == TuneEvent::kCompiling) {
      if (!e.message.empty()) say(e);
      line_.emplace(ProgressLine::for_stderr("tune " + e.problem));
      line_->start(planned_ = e.planned, e.to_compile, time_limit_s_);
      compiled_ = 0;
      return;
    }
    if (line_ && e.compiled > compiled_) {
      line_->on_compiled(e.compiled - compiled_);
      compiled_ = e.compiled;
    }
    if (e.kind == TuneEvent::kMeasured) {
      if (!line_) return;
      if (e.planned != planned_) line_->replan(planned_ = e.planned);
      line_->on_timed(e.config, e.ms, e.usable);
      if (!e.message.empty()) say(e);
      return;
    }
    if (e.kind == TuneEvent::kCompiled) return;  // the summary says how compiling went
    if (e.kind == TuneEvent::kDone && line_) {
      line_->finish();
      line_.reset();
    }
    if (!e.message.empty()) say(e);
  }

 private:
  static void say(const TuneEvent& e) {
    std::fprintf(stderr, "[tune %s] %s\n", e.problem.c_str(), e.message.c_str());
    std::fflush(stderr);
  }
  double time_limit_s_;
  int planned_ = 0, compiled_ = 0;
  std::optional<ProgressLine> line_;
};

// Keeps shard `shard` of `problems` (in the shard's order), saying so on stderr.
Status keep_shard(const std::string& shard, std::vector<ParsedProblem>& problems) {
  SSMTUNE_ASSIGN_OR_RETURN(const Shard s, parse_shard(shard));
  std::vector<std::string> keys;
  keys.reserve(problems.size());
  for (const auto& p : problems) keys.push_back(p.problem->key());
  std::vector<ParsedProblem> kept;
  for (size_t i : shard_positions(keys, s)) kept.push_back(std::move(problems[i]));
  const size_t distinct = std::set<std::string>(keys.begin(), keys.end()).size();
  std::fprintf(stderr, "shard %d/%d: %zu of %zu shapes%s\n", s.index, s.count, kept.size(),
               distinct, kept.empty() ? ": nothing to tune" : "");
  problems = std::move(kept);
  return Status::ok();
}

const std::vector<std::string> kColumns{
    "problem",     "configs", "pruned",     "compiled", "not_reached", "compile_failed",
    "timed",       "faulted", "inaccurate", "from_db",  "best",        "best_ms",
    "best_rel_l2", "wall_s",  "cut_short",  "setup_s",  "measure_s",   "compile_wait_s"};
// The column of the selected config (a failed or skipped shape's note).
constexpr size_t kBestColumn = 10;

std::vector<nlohmann::json> summary_row(const TuneReport& r) {
  if (r.already_tuned)
    return {r.problem_key,
            nlohmann::json(),
            nlohmann::json(),
            0,
            0,
            0,
            0,
            0,
            0,
            nlohmann::json(),
            r.best_config,
            r.best_ms,
            r.best_rel_l2,
            r.wall_s,
            false,
            nlohmann::json(),
            nlohmann::json(),
            nlohmann::json()};
  return {r.problem_key,
          r.configs,
          r.pruned,
          r.compiled,
          r.not_reached,
          r.compile_failed,
          r.timed,
          r.faulted,
          r.inaccurate,
          r.from_store,
          r.found ? r.best_config : "(none)",
          r.found ? nlohmann::json(r.best_ms) : nlohmann::json(),
          r.found ? nlohmann::json(r.best_rel_l2) : nlohmann::json(),
          r.wall_s,
          r.cut_short,
          r.setup_s,
          r.measure_s,
          r.compile_wait_s};
}

// --gpus: the shapes spread over the GPUs; a row per shape with its GPU.
void run_on_gpus(const TuneArgs& a, const std::vector<ParsedProblem>& problems,
                 const std::string& list, const TuneOptions& opt, const WorkerOptions& wo,
                 Format fmt) {
  auto devices = jit::list_devices();
  if (!report("tune", devices.status())) return;
  auto gpus = parse_gpu_list(a.gpus, static_cast<int>(devices->size()));
  if (!report("tune", gpus.status())) return;
  GpuTuneJob job;
  job.problems = &problems;
  job.db_list = list;
  job.options = opt;
  job.worker = wo;
  const GpuTuneResult r = tune_on_gpus(job, *gpus);
  std::vector<std::string> columns = kColumns;
  columns.insert(columns.begin() + 1, "gpu");
  Table t(columns);
  for (size_t i = 0; i < problems.size(); ++i) {
    const TaskOutcome& o = r.schedule.tasks[i];
    std::vector<nlohmann::json> row;
    if (r.reports[i]) {
      row = summary_row(*r.reports[i]);
    } else {
      row.assign(kColumns.size(), nlohmann::json());
      row[0] = problems[i].problem->key();
      row[kBestColumn] = o.ran ? "(failed)" : "(not run)";
    }
    row.insert(row.begin() + 1, o.ran ? nlohmann::json(o.gpu) : nlohmann::json());
    t.add_row(row);
  }
  std::fprintf(stderr, "tuning database: %s\n", list.c_str());
  t.print(std::cout, fmt);
  const ScheduleReport& s = r.schedule;
  if (s.failed() > 0 || s.not_run() > 0 || !s.gpu_errors.empty())
    report("tune", s.first_error().with_context(std::to_string(s.failed()) + " shapes failed, " +
                                                std::to_string(s.not_run()) + " not run"));
}

void run(const TuneArgs& a) {
  auto fmt = parse_format(a.format);
  if (!report("tune", fmt.status())) return;
  if (!report("tune", validate(a.tune))) return;
  std::vector<ParsedProblem> problems;
  if (!a.shapes.empty()) {
    auto ps = load_shapes(a.shapes);
    if (!report("tune", ps.status())) return;
    problems = std::move(*ps);
  } else {
    auto p = a.problem.any_problem();
    if (!report("tune", p.status())) return;
    problems.push_back(std::move(*p));
  }
  if (!a.shard.empty() && !report("tune", keep_shard(a.shard, problems))) return;
  auto paths = cache::resolve_db_paths(a.db);
  if (!report("tune", paths.status())) return;
  // No driver: say so before anything (the database) is created.
  if (auto drv = jit::Driver::get(); !report("tune", drv.status())) return;
  const std::string list = cache::resolve_db_path(a.db);
  // Writes go to the local database; shared layers (read-only) count for
  // the already-tuned check and the cubins.
  auto db = cache::DbStack::open(*paths, cache::OpenMode::kReadWrite);
  if (!report("tune", db.status())) return;
  WorkerOptions wo;
  wo.exe = self_exe();
  wo.db_path = list;
  wo.seed = a.input_seed;
  wo.max_error = a.tune.max_error;
  wo.timeout_s = a.timeout;
  wo.gpu = a.tune.gpu;
  TuneOptions opt = a.tune;
  opt.seed = a.input_seed;
  opt.include_fp64 = !a.no_fp64;
  // Each GPU opens its own connections and compiler.
  if (!a.gpus.empty()) return run_on_gpus(a, problems, list, opt, wo, *fmt);
  auto cubins = cache::SqliteCubinCache::open(list);
  if (!report("tune", cubins.status())) return;
  auto sources = jit::TemplateSources::load_default();
  if (!report("tune", sources.status())) return;
  jit::Compiler compiler(*sources, cubins->get());
  Table t(kColumns);
  for (const auto& p : problems) {
    WorkerMeasurer measurer(wo);
    TuneProgress progress(opt.time_limit);
    auto r = tune_problem(*db, compiler, measurer, *p.family, *p.problem, opt, std::ref(progress));
    if (!report("tune", r.status().with_context(p.problem->key()))) return;
    for (const auto& d : r->defects)
      std::fprintf(stderr, "[tune %s] DEFECT: %s\n", r->problem_key.c_str(), d.c_str());
    t.add_row(summary_row(*r));
  }
  std::fprintf(stderr, "tuning database: %s\n", list.c_str());
  t.print(std::cout, *fmt);
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "tune", "Tune a kernel family for a shape on this GPU and record it in the database");
  auto a = std::make_shared<TuneArgs>();
  add_problem_options(cmd, a->problem);
  cmd->add_option("--shapes", a->shapes, "file of problem keys, one per line (# comments)");
  cmd->add_option("--strategy", a->tune.strategy, "halving, exhaustive or random")
      ->capture_default_str();
  cmd->add_option("--budget", a->tune.budget, "most configs to measure (0: no limit)")
      ->check(non_negative())
      ->capture_default_str();
  cmd->add_option("--time-limit", a->tune.time_limit,
                  "wall seconds per shape, worker start and compiling included (0: no limit)")
      ->check(non_negative())
      ->capture_default_str();
  cmd->add_option("--max-error", a->tune.max_error,
                  "tighter rel L2 budget than the dtype's default")
      ->check(non_negative());
  cmd->add_option("--timeout", a->timeout, "seconds one config may take before it is killed")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  cmd->add_option("--seed", a->input_seed, "input seed (0: fresh)")->capture_default_str();
  auto* gpu = cmd->add_option("--gpu", a->tune.gpu, "device ordinal")->capture_default_str();
  cmd->add_option("--gpus", a->gpus,
                  "tune on several GPUs: 'all' or ordinals (0,2,...); one worker per GPU, each "
                  "taking the next shape of the list when it finishes one, all into one database")
      ->excludes(gpu);
  cmd->add_option("--shard", a->shard,
                  "tune shard I of N (0-based, e.g. 3/8): the distinct problem keys of the list "
                  "sorted bytewise, every N-th from the I-th; for a job array whose shard "
                  "databases 'ssmtune db merge' gathers");
  cmd->add_flag("--force", a->tune.force, "re-measure configs the database already holds");
  cmd->add_flag("--resume", a->tune.resume,
                "tune a shape the database already has a best entry for, measuring only the "
                "configs it lacks");
  cmd->add_flag("--no-fp64", a->no_fp64, "leave fp64-accumulation configs out");
  cmd->add_option("--db", a->db,
                  "tuning database, or LOCAL:SHARED... (writes go to LOCAL; read-only shared "
                  "layers count as already tuned) (default: $SSMTUNE_DB or the cache dir)");
  cmd->add_option("--format", a->format, "table, json or csv")->capture_default_str();
  cmd->callback([a] { run(*a); });
}

}  // namespace ssmtune::cli
