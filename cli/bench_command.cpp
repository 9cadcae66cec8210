// `ssmtune bench`: times configs of any kernel family at a shape (given by
// key, the family's default, or for the forward one or every algorithm's
// default), after checking each against fp64, and prints the time,
// achieved bandwidth and exp rate beside the floors.
#include <iostream>

#include "cli/commands.h"
#include "cli/gpu_session.h"
#include "cli/problem_options.h"
#include "cli/table.h"
#include "tuner/evaluator.h"
#include "tuner/fwd/family.h"
#include "tuner/fwd/heuristics.h"

namespace ssmtune::cli {
namespace {

struct BenchArgs {
  ProblemArgs problem;
  std::vector<std::string> configs;
  std::vector<std::string> algos;
  bool all = false;
  uint64_t seed = 0;
  double target_ms = 300;
  double copy_gbs = 4220;
  bool saved_states = false;
  std::string format = "table";
};

// The configs to time: those given, the forward's per-algorithm defaults
// asked for, else the family's built-in default.
Result<std::vector<std::string>> configs_to_time(const BenchArgs& a, const ParsedProblem& pp,
                                                 const jit::DeviceInfo& device) {
  const KernelFamily& family = *pp.family;
  std::vector<std::string> configs;
  for (const auto& k : a.configs) {
    SSMTUNE_ASSIGN_OR_RETURN(std::string c, family.canonical_config(k));
    configs.push_back(std::move(c));
  }
  if (!a.algos.empty() || a.all) {
    const FwdProblem* fp = as_fwd(*pp.problem);
    if (fp == nullptr) return Status::internal("--algo on a family other than the forward");
    const size_t smem = device.max_shared_per_block;
    for (const auto& name : a.algos) {
      SSMTUNE_ASSIGN_OR_RETURN(ScanAlgo algo, parse_scan_algo(name));
      configs.push_back(default_config(*fp, algo, AccType::kF32, smem).key());
    }
    if (a.all)
      for (ScanAlgo algo : kAllScanAlgos)
        configs.push_back(default_config(*fp, algo, AccType::kF32, smem).key());
  }
  if (configs.empty()) {
    const DefaultChoice d = family.heuristic_default(*pp.problem, device);
    std::cerr << "bench: no config given; the built-in default: " << d.reason << "\n";
    configs.push_back(d.config);
  }
  return configs;
}

void run(const BenchArgs& a) {
  auto fmt = parse_format(a.format);
  if (!report("bench", fmt.status())) return;
  auto pp = a.problem.any_problem();
  if (!report("bench", pp.status())) return;
  // Keys and names are checked before the GPU is opened: a typo costs no start-up.
  for (const auto& k : a.configs)
    if (!report("bench", pp->family->canonical_config(k).status())) return;
  for (const auto& name : a.algos)
    if (!report("bench", parse_scan_algo(name).status())) return;
  if (a.saved_states && std::string(pp->family->name()) != "bwd") {
    report("bench", Status::invalid_argument(
                        std::string("--saved-states times the backward as training runs it; the ") +
                        pp->family->name() + " family has no saved states"));
    return;
  }
  if ((!a.algos.empty() || a.all) && as_fwd(*pp->problem) == nullptr) {
    report("bench", Status::invalid_argument(
                        std::string("--algo and --all-algorithms name forward algorithms; the ") +
                        pp->family->name() + " family takes --config keys"));
    return;
  }
  auto gpu = GpuSession::open();
  if (!report("bench", gpu.status())) return;
  auto keys = configs_to_time(a, *pp, gpu->device);
  if (!report("bench", keys.status())) return;
  EvalOptions opt;
  opt.seed = a.seed;
  opt.timing.target_ms = a.target_ms;
  opt.states_given = a.saved_states;
  auto ev = Evaluator::create(gpu->device, *gpu->compiler, *pp->family, *pp->problem, opt);
  if (!report("bench", ev.status())) return;
  ev->precompile(*keys);
  // The family's work, over --copy-gbs rather than the default bandwidth.
  const Floors work = pp->problem->floors(gpu->device);
  const double bytes = work.bytes, exps = work.exps;
  const Floors floors = floors_for(bytes, exps, gpu->device, a.copy_gbs);
  std::cerr << "bench " << pp->problem->key() << " on " << gpu->device.name << " ("
            << ev->reference_kind() << " reference, seed " << ev->seed() << "); floors: bytes "
            << floors.bytes_ms * 1e3 << " us at " << a.copy_gbs << " GB/s, exp "
            << floors.exp_ms * 1e3 << " us\n";
  Table t({"config", "status", "median_ms", "spread_ms", "min_ms", "repeats", "gb_per_s",
           "gexp_per_s", "floor_ms", "x_floor", "rel_l2", "worst_output", "verdict", "registers"});
  for (const auto& key : *keys) {
    const EvalResult r = ev->evaluate(key);
    if (r.status != MeasureStatus::kOk && r.status != MeasureStatus::kInaccurate) {
      std::cerr << key << ": " << to_string(r.status) << ": " << r.detail << "\n";
      t.add_row({key, to_string(r.status)});
      exit_code() = 1;
      continue;
    }
    const double ms = r.timing.median_ms;
    int regs = 0;
    for (const auto& k : r.kernels) regs = std::max(regs, k.resources.registers);
    // The output closest to (or furthest past) its budget speaks for the config.
    const OutputScore* worst = headline(r.outputs);
    t.add_row({key, to_string(r.status), ms, r.timing.spread_ms, r.timing.min_ms, r.timing.repeats,
               bytes / (ms * 1e-3) / 1e9, exps / (ms * 1e-3) / 1e9, floors.floor_ms(),
               ms / floors.floor_ms(), worst ? worst->stats.rel_l2 : 0.0,
               worst ? worst->name : std::string("-"), to_string(r.verdict), regs});
  }
  t.print(std::cout, *fmt);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "bench", "Time configs at a shape (checked against fp64 first) beside the floors");
  auto a = std::make_shared<BenchArgs>();
  add_problem_options(cmd, a->problem);
  cmd->add_option("--config", a->configs, "config key(s) to time (see ssmtune db show)");
  cmd->add_option("--algo", a->algos, "time this algorithm's default config");
  cmd->add_flag("--all-algorithms", a->all, "time every algorithm's default config");
  cmd->add_option("--seed", a->seed, "input seed (0: fresh)")->capture_default_str();
  cmd->add_option("--target-ms", a->target_ms, "timed repeats per config, in total ms")
      ->check(CLI::Range(0.001, 1e6))
      ->capture_default_str();
  cmd->add_option("--copy-gbs", a->copy_gbs, "device-to-device bandwidth for the bytes floor")
      ->check(CLI::Range(0.001, 1e6))
      ->capture_default_str();
  cmd->add_flag("--saved-states", a->saved_states,
                "backward: time launches given the states a training forward saved, as "
                "selective_scan_fn's eager training path runs them (configs that take none "
                "recompute)");
  cmd->add_option("--format", a->format, "table, json or csv")->capture_default_str();
  cmd->callback([a] { run(*a); });
}

}  // namespace ssmtune::cli
