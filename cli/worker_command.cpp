// `ssmtune worker` (internal): the evaluation process that a tuning
// session's WorkerMeasurer (tuner/worker_measurer.h) runs configs in, for a
// problem of any family. Greets with its device on stdout, then answers one
// JSON Measurement line per request. After a failed launch it answers and
// exits: the context may hold a sticky error (illegal address), so the
// session starts a fresh one.
#include <iostream>
#include <string>

#include "cache/sqlite_cubin_cache.h"
#include "cli/commands.h"
#include "cli/gpu_session.h"
#include "tuner/evaluator.h"
#include "tuner/records_json.h"
#include "tuner/worker_measurer.h"

namespace ssmtune::cli {
namespace {

struct WorkerArgs {
  std::string problem;
  std::string db;
  uint64_t seed = 0;
  double max_error = 0;
  int gpu = 0;
};

void say(const nlohmann::json& j) { std::cout << j.dump() << std::endl; }

void run(const WorkerArgs& a) {
  auto parsed = parse_any_problem(a.problem);
  if (!parsed) {
    say({{"error", parsed.status().to_string()}});
    exit_code() = 2;
    return;
  }
  std::unique_ptr<cache::SqliteCubinCache> cubins;
  if (!a.db.empty()) {
    auto c = cache::SqliteCubinCache::open(a.db);
    if (!c) {
      say({{"error", c.status().to_string()}});
      exit_code() = 1;
      return;
    }
    cubins = std::move(*c);
  }
  auto gpu = GpuSession::open(a.gpu, cubins.get());
  if (!gpu) {
    say({{"error", gpu.status().to_string()}});
    exit_code() = 1;
    return;
  }
  EvalOptions opt;
  opt.seed = a.seed;
  opt.max_error = a.max_error;
  auto ev = Evaluator::create(gpu->device, *gpu->compiler, *parsed->family, *parsed->problem, opt);
  if (!ev) {
    say({{"error", ev.status().to_string()}});
    exit_code() = 1;
    return;
  }
  say({{"hello", true},
       {"device", to_json(gpu->device)},
       {"seed", ev->seed()},
       {"reference", ev->reference_kind()},
       {"template_hash", gpu->compiler->sources().hash()}});
  std::string line;
  while (std::getline(std::cin, line)) {
    auto req = nlohmann::json::parse(line, nullptr, false);
    if (req.is_discarded() || !req.contains("config") || !req["config"].is_string()) {
      say({{"error", "bad request: " + line}});
      continue;
    }
    auto config = parsed->family->canonical_config(req["config"].get<std::string>());
    if (!config) {
      say({{"error", config.status().to_string()}});
      continue;
    }
    TimingOptions timing = opt.timing;
    if (req.contains("target_ms") && req["target_ms"].is_number())
      timing.target_ms = req["target_ms"].get<double>();
    const EvalResult r = ev->evaluate_with(*config, timing);
    Measurement m = to_measurement(r, parsed->family->name(), parsed->problem->key());
    if (r.status == MeasureStatus::kLaunchFailed) {
      m.status = MeasureStatus::kFaulted;  // the context may be unusable: start over
      say(to_json(m));
      exit_code() = 3;
      return;
    }
    say(to_json(m));
  }
}

}  // namespace

void add_worker_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("worker", "Internal: the evaluation process of ssmtune tune");
  cmd->group("");  // hidden from --help
  auto a = std::make_shared<WorkerArgs>();
  cmd->add_option("--problem", a->problem, "problem key (any family)")->required();
  cmd->add_option("--db", a->db, "tuning database (its cubin cache)");
  cmd->add_option("--seed", a->seed, "input seed");
  cmd->add_option("--max-error", a->max_error, "rel L2 limit");
  cmd->add_option("--gpu", a->gpu, "device ordinal");
  cmd->callback([a] { run(*a); });
}

}  // namespace ssmtune::cli
