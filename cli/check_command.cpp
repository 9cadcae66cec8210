// `ssmtune check`: every algorithm and accumulation dtype at one shape
// against fp64, with each one's errors and whether it is inside its budget,
// at the precision limit, or a defect.
#include <cstdio>
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

struct CheckArgs {
  ProblemArgs problem{"", 8, 256, 1024, 4};  // the seed's shape
  uint64_t seed = 0;
  std::string distribution = "mamba";
  bool time = false;
  std::string format = "table";
};

std::vector<FwdConfig> check_configs(const FwdProblem& p, size_t max_shared) {
  std::vector<FwdConfig> out;
  for (ScanAlgo a : kAllScanAlgos) {
    for (AccType acc : {AccType::kF32, AccType::kF64})
      out.push_back(default_config(p, a, acc, max_shared));
    FwdConfig c = default_config(p, a, AccType::kF32, max_shared);
    c.exp_mode = ExpMode::kAccurate;
    out.push_back(c);
    c.exp_mode = ExpMode::kPoly;
    c.poly_share = 2;
    out.push_back(c);
  }
  return out;
}

void run(const CheckArgs& a) {
  auto fmt = parse_format(a.format);
  if (!report("check", fmt.status())) return;
  auto p = a.problem.problem();
  if (!report("check", p.status())) return;
  auto dist = parse_distribution(a.distribution);
  if (!report("check", dist.status())) return;
  auto gpu = GpuSession::open();
  if (!report("check", gpu.status())) return;
  EvalOptions opt;
  opt.seed = a.seed;
  opt.distribution = *dist;
  opt.time = a.time;
  auto ev = Evaluator::create(gpu->device, *gpu->compiler, fwd_family(), FwdFamilyProblem(*p), opt);
  if (!report("check", ev.status())) return;
  const auto configs = check_configs(*p, gpu->device.max_shared_per_block);
  std::cerr << "check " << p->key() << " on " << gpu->device.name << ": " << configs.size()
            << " configs against the " << ev->reference_kind() << " reference, inputs "
            << a.distribution << " seed " << ev->seed() << "\n";
  std::vector<std::string> keys;
  keys.reserve(configs.size());
  for (const auto& c : configs) keys.push_back(c.key());
  ev->precompile(keys);
  Table t({"algorithm", "acc", "exp", "config", "rel_l2", "max_abs_rel", "max_rel", "nan_inf",
           "unwritten", "allclose_fail", "budget", "verdict", "median_ms"});
  int defects = 0;
  for (const auto& c : configs) {
    const EvalResult r = ev->evaluate(c.key());
    const bool ran = r.status == MeasureStatus::kOk || r.status == MeasureStatus::kInaccurate;
    std::string verdict = ran ? to_string(r.verdict) : to_string(r.status);
    if (!ran || r.verdict == Verdict::kDefect) ++defects;
    if (!ran) std::cerr << c.key() << ": " << r.detail << "\n";
    // One row per config: the headline output's numbers, the counts over all outputs.
    const OutputScore* h = headline(r.outputs);
    int64_t nan_inf = 0, unwritten = 0, allclose = 0;
    for (const auto& o : r.outputs) {
      nan_inf += o.stats.nan_inf;
      unwritten += o.stats.unwritten;
      allclose += o.stats.allclose_failures;
    }
    const bool have = ran && h != nullptr;
    t.add_row({to_string(c.algo), to_string(c.acc), to_string(c.exp_mode), c.key(),
               have ? nlohmann::json(h->stats.rel_l2) : nlohmann::json(),
               have ? nlohmann::json(h->stats.max_abs_over_max_ref) : nlohmann::json(),
               have ? nlohmann::json(h->stats.max_rel) : nlohmann::json(), nan_inf, unwritten,
               allclose, have ? nlohmann::json(h->budget.rel_l2) : nlohmann::json(), verdict,
               a.time && ran ? nlohmann::json(r.timing.median_ms) : nlohmann::json()});
  }
  t.print(std::cout, *fmt);
  if (defects) {
    std::cerr << defects << " config(s) failed or are defects\n";
    exit_code() = 1;
  }
}

}  // namespace

void add_check_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "check",
      "Run every algorithm and accumulation dtype at a shape and score each against "
      "fp64: inside its budget, at the precision limit, or a defect");
  auto a = std::make_shared<CheckArgs>();
  add_problem_options(cmd, a->problem);
  cmd->add_option("--seed", a->seed, "input seed (0: fresh)")->capture_default_str();
  cmd->add_option("--distribution", a->distribution, "mamba, slow-decay or large")
      ->capture_default_str();
  cmd->add_flag("--time", a->time, "also time each config");
  cmd->add_option("--format", a->format, "table, json or csv")->capture_default_str();
  cmd->callback([a] { run(*a); });
}

}  // namespace ssmtune::cli
