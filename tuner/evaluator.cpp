// Config evaluation for any family.
#include "tuner/evaluator.h"

#include <algorithm>
#include <random>

namespace ssmtune {

const OutputScore* EvalResult::output(const std::string& name) const {
  for (const auto& o : outputs)
    if (o.name == name) return &o;
  return nullptr;
}

Measurement to_measurement(const EvalResult& r, const std::string& family,
                           const std::string& problem_key) {
  Measurement m;
  m.family = family;
  m.problem_key = problem_key;
  m.config_key = r.config;
  m.status = r.status;
  m.detail = r.detail;
  m.median_ms = r.timing.median_ms;
  m.spread_ms = r.timing.spread_ms;
  m.min_ms = r.timing.min_ms;
  m.repeats = r.timing.repeats;
  for (const auto& k : r.kernels) {
    m.registers = std::max<int64_t>(m.registers, k.resources.registers);
    m.spill_bytes = std::max<int64_t>(m.spill_bytes,
                                      k.resources.spill_store_bytes + k.resources.spill_load_bytes);
    m.shared_bytes = std::max<int64_t>(m.shared_bytes, k.resources.shared_bytes);
  }
  for (const OutputScore& o : r.outputs) {
    OutputError e;
    e.output = o.name;
    e.rel_l2 = o.stats.rel_l2;
    e.max_abs_rel = o.stats.max_abs_over_max_ref;
    e.max_rel = o.stats.max_rel;
    e.nan_inf = o.stats.nan_inf;
    e.unwritten = o.stats.unwritten;
    e.budget = o.budget.rel_l2;
    e.verdict = to_string(o.verdict);
    m.errors.push_back(e);
  }
  summarize_errors(m);
  return m;
}

Result<Evaluator> Evaluator::create(const jit::DeviceInfo& device, jit::Compiler& compiler,
                                    const KernelFamily& family, const FamilyProblem& problem,
                                    const EvalOptions& options) {
  Evaluator e;
  e.device_ = device;
  e.compiler_ = &compiler;
  e.family_ = &family;
  // A private copy of the problem: the caller's may not outlive us.
  SSMTUNE_ASSIGN_OR_RETURN(e.problem_, family.parse_problem(problem.key()));
  e.options_ = options;
  e.seed_ = options.seed != 0 ? options.seed : std::random_device{}();
  SSMTUNE_ASSIGN_OR_RETURN(jit::Stream stream, jit::Stream::create());
  e.stream_ = std::make_unique<jit::Stream>(std::move(stream));
  SSMTUNE_ASSIGN_OR_RETURN(GpuTimer timer, GpuTimer::create(device));
  e.timer_ = std::make_unique<GpuTimer>(std::move(timer));
  BenchOptions bo;
  bo.seed = e.seed_;
  bo.distribution = options.distribution;
  bo.cpu_reference_limit = options.cpu_reference_limit;
  bo.states_given = options.states_given;
  SSMTUNE_ASSIGN_OR_RETURN(e.bench_,
                           family.make_bench(*e.problem_, device, compiler, bo, e.stream_->get()));
  return e;
}

void Evaluator::precompile(const std::vector<std::string>& configs) {
  // One program per config keeps each config's cache key independent of the
  // others it was compiled with.
  std::vector<jit::ProgramSpec> specs;
  for (const auto& c : configs)
    if (auto spec = program_for(*family_, *problem_, c, device_)) specs.push_back(*spec);
  compiler_->compile_all(specs);
}

EvalResult Evaluator::evaluate_with(const std::string& config, const TimingOptions& timing) {
  EvalResult r;
  r.config = config;
  if (Status s = family_->check_config(*problem_, config, device_); !s) {
    r.status = MeasureStatus::kPruned;
    r.detail = s.message();
    return r;
  }
  auto spec = program_for(*family_, *problem_, config, device_);
  if (!spec) {
    r.status = MeasureStatus::kPruned;
    r.detail = spec.status().message();
    return r;
  }
  auto program = compiler_->compile(*spec);
  if (!program) {
    r.status = MeasureStatus::kCompileFailed;
    r.detail = program.status().message().substr(0, 4000);
    return r;
  }
  r.compile_seconds = program->compile_seconds;
  auto loaded = bench_->load(config, *program);
  if (!loaded) {
    r.status = MeasureStatus::kLaunchFailed;
    r.detail = loaded.status().to_string();
    return r;
  }
  LoadedConfig& k = **loaded;
  r.kernels = k.images();
  auto fail = [&r](const Status& s) {
    r.status = MeasureStatus::kLaunchFailed;
    r.detail = s.to_string();
    return r;
  };
  const CUstream stream = stream_->get();
  auto seen = scored_.find(config);
  if (seen != scored_.end()) {
    r.outputs = seen->second.outputs;
    r.verdict = seen->second.verdict;
    r.status = seen->second.status;
    r.detail = seen->second.detail;
  } else {
    if (Status s = k.poison(stream); !s) return fail(s);
    if (Status s = k.launch(stream); !s) return fail(s);
    if (Status s = stream_->synchronize(); !s) return fail(s);
    auto outputs = k.score();
    if (!outputs) return fail(outputs.status());
    r.outputs = std::move(*outputs);
    r.verdict = worst_verdict(r.outputs);
    const bool accurate = r.verdict == Verdict::kInside || r.verdict == Verdict::kAtLimit;
    const OutputScore* over = nullptr;
    if (options_.max_error > 0)
      for (const auto& o : r.outputs)
        if (!(o.stats.rel_l2 <= options_.max_error)) over = over ? over : &o;
    if (!accurate || over != nullptr) {
      const OutputScore* h = over ? over : headline(r.outputs);
      r.status = MeasureStatus::kInaccurate;
      r.detail = std::string(to_string(r.verdict)) + ": " + (h ? h->name : "?") + " rel L2 " +
                 std::to_string(h ? h->stats.rel_l2 : 0) + " (budget " +
                 std::to_string(over ? options_.max_error : (h ? h->budget.rel_l2 : 0)) + ")";
    }
    scored_[config] = r;
  }
  if (options_.time) {
    auto t = timer_->time([&k](CUstream s) { return k.launch(s); }, stream, timing);
    if (!t) return fail(t.status());
    r.timing = *t;
  }
  return r;
}

}  // namespace ssmtune
