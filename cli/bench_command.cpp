// `ssmtune bench`: times configs at a shape (one given by key, one
// algorithm's default, or every algorithm's), after checking each against
// fp64, and prints the time, achieved bandwidth and exp rate beside the
// floors.
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
  std::string format = "table";
};

void run(const BenchArgs& a) {
  auto fmt = parse_format(a.format);
  if (!report("bench", fmt.status())) return;
  auto p = a.problem.problem();
  if (!report("bench", p.status())) return;
  std::vector<FwdConfig> configs;
  for (const auto& k : a.configs) {
    auto c = FwdConfig::from_key(k);
    if (!report("bench", c.status())) return;
    configs.push_back(*c);
  }
  auto gpu = GpuSession::open();
  if (!report("bench", gpu.status())) return;
  const size_t smem = gpu->device.max_shared_per_block;
  for (const auto& name : a.algos) {
    auto algo = parse_scan_algo(name);
    if (!report("bench", algo.status())) return;
    configs.push_back(default_config(*p, *algo, AccType::kF32, smem));
  }
  if (a.all)
    for (ScanAlgo algo : kAllScanAlgos)
      configs.push_back(default_config(*p, algo, AccType::kF32, smem));
  if (configs.empty()) {
    const auto d = heuristic_default(*p, gpu->device.sm_count, smem);
    std::cerr << "bench: no config given; the built-in default: " << d.reason << "\n";
    configs.push_back(d.config);
  }
  EvalOptions opt;
  opt.seed = a.seed;
  opt.timing.target_ms = a.target_ms;
  auto ev = Evaluator::create(gpu->device, *gpu->compiler, fwd_family(), FwdFamilyProblem(*p), opt);
  if (!report("bench", ev.status())) return;
  std::vector<std::string> keys;
  for (const auto& c : configs) keys.push_back(c.key());
  ev->precompile(keys);
  const Floors f = floors_for(p->min_bytes(), p->exp_count(), gpu->device, a.copy_gbs);
  std::cerr << "bench " << p->key() << " on " << gpu->device.name << " (" << ev->reference_kind()
            << " reference, seed " << ev->seed() << "); floors: bytes " << f.bytes_ms * 1e3
            << " us at " << a.copy_gbs << " GB/s, exp " << f.exp_ms * 1e3 << " us\n";
  Table t({"config", "status", "median_ms", "spread_ms", "min_ms", "repeats", "gb_per_s",
           "gexp_per_s", "floor_ms", "x_floor", "rel_l2", "verdict", "registers"});
  for (const auto& c : configs) {
    const EvalResult r = ev->evaluate(c.key());
    if (r.status != MeasureStatus::kOk && r.status != MeasureStatus::kInaccurate) {
      std::cerr << c.key() << ": " << to_string(r.status) << ": " << r.detail << "\n";
      t.add_row({c.key(), to_string(r.status)});
      exit_code() = 1;
      continue;
    }
    const double ms = r.timing.median_ms;
    int regs = 0;
    for (const auto& k : r.kernels) regs = std::max(regs, k.resources.registers);
    t.add_row({c.key(), to_string(r.status), ms, r.timing.spread_ms, r.timing.min_ms,
               r.timing.repeats, p->min_bytes() / (ms * 1e-3) / 1e9,
               p->exp_count() / (ms * 1e-3) / 1e9, f.floor_ms(), ms / f.floor_ms(),
               r.output("out") ? r.output("out")->stats.rel_l2 : 0.0, to_string(r.verdict), regs});
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
  cmd->add_option("--format", a->format, "table, json or csv")->capture_default_str();
  cmd->callback([a] { run(*a); });
}

}  // namespace ssmtune::cli
