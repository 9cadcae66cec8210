// `ssmtune worker` (internal): the evaluation process `ssmtune tune` runs
// configs in. Greets with its device on stdout, then answers one JSON line
// per request. After a failed launch it answers and exits: the context may
// hold a sticky error (illegal address), so the parent starts a fresh one.
#include <cstdlib>
#include <iostream>
#include <string>

#include "../templates/testing/faults_params.cuh"
#include "cache/sqlite_cubin_cache.h"
#include "cli/commands.h"
#include "cli/gpu_session.h"
#include "cli/worker_protocol.h"
#include "jit/module.h"
#include "jit/program_builder.h"
#include "jit/stream.h"

namespace ssmtune::cli {
namespace {

struct WorkerArgs {
  std::string problem;
  std::string db;
  uint64_t seed = 0;
  double max_error = 0;
};

void say(const nlohmann::json& j) { std::cout << j.dump() << std::endl; }

// Test hook: SSMTUNE_FAULT_CONFIG=<config key> makes that config write
// through a bad pointer instead of running, so tests can show a fault is
// recorded and the tune goes on.
EvalResult injected_fault(jit::Compiler& compiler, const jit::DeviceInfo& d,
                          const KernelConfig& c) {
  EvalResult r;
  r.config = c;
  r.status = EvalStatus::kLaunchFailed;
  auto specs =
      jit::make_programs({{"testing/faults.cuh",
                           "ssmtune_kernels::fault<ssmtune_kernels::FaultMode::kIllegalAddress>"}},
                         0, d.arch(), "fault");
  auto program = compiler.compile(specs[0]);
  if (!program) {
    r.detail = program.status().to_string();
    return r;
  }
  auto module = jit::Module::load(program->cubin);
  if (!module) {
    r.detail = module.status().to_string();
    return r;
  }
  auto kernel = module->kernel(program->kernels[0].lowered_name);
  auto stream = jit::Stream::create();
  if (!kernel || !stream) {
    r.detail = "fault kernel setup failed";
    return r;
  }
  ssmtune_kernels::FaultParams p{0x10, 0};
  Status s = kernel->launch(jit::Dim3{1}, jit::Dim3{32}, 0, stream->get(), p);
  if (s) s = stream->synchronize();
  r.detail = s.is_ok() ? "injected fault did not fault" : s.to_string();
  return r;
}

void run(const WorkerArgs& a) {
  auto problem = Problem::from_key(a.problem);
  if (!problem) {
    say({{"error", problem.status().to_string()}});
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
  auto gpu = GpuSession::open(0, cubins.get());
  if (!gpu) {
    say({{"error", gpu.status().to_string()}});
    exit_code() = 1;
    return;
  }
  EvalOptions opt;
  opt.seed = a.seed;
  opt.max_error = a.max_error;
  auto ev = Evaluator::create(gpu->device, *gpu->compiler, *problem, opt);
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
  const char* fault_env = std::getenv("SSMTUNE_FAULT_CONFIG");
  const std::string fault_key = fault_env ? fault_env : "";
  std::string line;
  while (std::getline(std::cin, line)) {
    auto req = nlohmann::json::parse(line, nullptr, false);
    if (req.is_discarded() || !req.contains("config")) {
      say({{"error", "bad request: " + line}});
      continue;
    }
    auto config = KernelConfig::from_key(req["config"].get<std::string>());
    if (!config) {
      say({{"error", config.status().to_string()}});
      continue;
    }
    EvalOptions o = opt;
    o.timing.target_ms = req.value("target_ms", 150.0);
    EvalResult r = config->key() == fault_key ? injected_fault(*gpu->compiler, gpu->device, *config)
                                              : ev->evaluate_with(*config, o.timing);
    nlohmann::json out = to_json(r, ev->reference());
    if (r.status == EvalStatus::kLaunchFailed) {
      out["status"] = "faulted";  // the context may be unusable: start over
      say(out);
      exit_code() = 3;
      return;
    }
    say(out);
  }
}

}  // namespace

void add_worker_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("worker", "Internal: the evaluation process of ssmtune tune");
  cmd->group("");  // hidden from --help
  auto a = std::make_shared<WorkerArgs>();
  cmd->add_option("--problem", a->problem, "problem key")->required();
  cmd->add_option("--db", a->db, "tuning database (its cubin cache)");
  cmd->add_option("--seed", a->seed, "input seed");
  cmd->add_option("--max-error", a->max_error, "rel L2 limit");
  cmd->callback([a] { run(*a); });
}

}  // namespace ssmtune::cli
