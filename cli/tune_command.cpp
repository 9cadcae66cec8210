// `ssmtune tune`: tunes one shape (or every shape of a file), of any kernel
// family, on one GPU through the library's tuning session
// (tuner/session.h), with configs run in worker processes, and prints one
// summary row per shape.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>

#include "cache/db_path.h"
#include "cache/sqlite_cubin_cache.h"
#include "cache/tuning_db.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/problem_options.h"
#include "cli/progress_line.h"
#include "cli/table.h"
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
  // No driver: say so before anything (the database) is created.
  if (auto drv = jit::Driver::get(); !report("tune", drv.status())) return;
  const std::string path = cache::resolve_db_path(a.db);
  auto db = cache::TuningDb::open(path, cache::OpenMode::kReadWrite);
  if (!report("tune", db.status())) return;
  auto cubins = cache::SqliteCubinCache::open(path);
  if (!report("tune", cubins.status())) return;
  auto sources = jit::TemplateSources::load_default();
  if (!report("tune", sources.status())) return;
  jit::Compiler compiler(*sources, cubins->get());
  WorkerOptions wo;
  wo.exe = self_exe();
  wo.db_path = path;
  wo.seed = a.input_seed;
  wo.max_error = a.tune.max_error;
  wo.timeout_s = a.timeout;
  wo.gpu = a.tune.gpu;
  TuneOptions opt = a.tune;
  opt.seed = a.input_seed;
  opt.include_fp64 = !a.no_fp64;
  Table t({"problem", "configs", "pruned", "compiled", "not_reached", "compile_failed", "timed",
           "faulted", "inaccurate", "from_db", "best", "best_ms", "best_rel_l2", "wall_s",
           "cut_short"});
  for (const auto& p : problems) {
    WorkerMeasurer measurer(wo);
    TuneProgress progress(opt.time_limit);
    auto r = tune_problem(*db, compiler, measurer, *p.family, *p.problem, opt, std::ref(progress));
    if (!report("tune", r.status().with_context(p.problem->key()))) return;
    for (const auto& d : r->defects)
      std::fprintf(stderr, "[tune %s] DEFECT: %s\n", r->problem_key.c_str(), d.c_str());
    if (r->already_tuned) {
      t.add_row({r->problem_key, nlohmann::json(), nlohmann::json(), 0, 0, 0, 0, 0, 0,
                 nlohmann::json(), r->best_config, r->best_ms, r->best_rel_l2, r->wall_s, false});
      continue;
    }
    t.add_row(
        {r->problem_key, r->configs, r->pruned, r->compiled, r->not_reached, r->compile_failed,
         r->timed, r->faulted, r->inaccurate, r->from_store, r->found ? r->best_config : "(none)",
         r->found ? nlohmann::json(r->best_ms) : nlohmann::json(),
         r->found ? nlohmann::json(r->best_rel_l2) : nlohmann::json(), r->wall_s, r->cut_short});
  }
  std::fprintf(stderr, "tuning database: %s\n", path.c_str());
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
  cmd->add_option("--gpu", a->tune.gpu, "device ordinal")->capture_default_str();
  cmd->add_flag("--force", a->tune.force, "re-measure configs the database already holds");
  cmd->add_flag("--resume", a->tune.resume,
                "tune a shape the database already has a best entry for, measuring only the "
                "configs it lacks");
  cmd->add_flag("--no-fp64", a->no_fp64, "leave fp64-accumulation configs out");
  cmd->add_option("--db", a->db, "tuning database (default: $SSMTUNE_DB or the cache dir)");
  cmd->add_option("--format", a->format, "table, json or csv")->capture_default_str();
  cmd->callback([a] { run(*a); });
}

}  // namespace ssmtune::cli
