// Config evaluation.
#include "tuner/evaluator.h"

#include <random>

#include "jit/program_builder.h"
#include "tuner/reference_cpu.h"
#include "tuner/reference_gpu.h"

namespace ssmtune {

const char* to_string(EvalStatus s) {
  switch (s) {
    case EvalStatus::kOk:
      return "ok";
    case EvalStatus::kPruned:
      return "pruned";
    case EvalStatus::kCompileFailed:
      return "compile_failed";
    case EvalStatus::kLaunchFailed:
      return "launch_failed";
    case EvalStatus::kInaccurate:
      return "inaccurate";
  }
  return "?";
}

Floors floors(const Problem& p, const jit::DeviceInfo& device, double copy_gbs) {
  Floors f;
  f.bytes_ms = p.min_bytes() / (copy_gbs * 1e9) * 1e3;
  const double exp_rate = 16.0 * device.sm_count * device.sm_clock_khz * 1e3;
  f.exp_ms = p.exp_count() / exp_rate * 1e3;
  return f;
}

Result<Evaluator> Evaluator::create(const jit::DeviceInfo& device, jit::Compiler& compiler,
                                    const Problem& problem, const EvalOptions& options) {
  SSMTUNE_RETURN_IF_ERROR(problem.validate());
  const uint64_t seed = options.seed != 0 ? options.seed : std::random_device{}();
  const HostInputs inputs = make_inputs(problem, seed, options.distribution);
  SSMTUNE_ASSIGN_OR_RETURN(DeviceProblem dp, DeviceProblem::upload(inputs));
  SSMTUNE_ASSIGN_OR_RETURN(jit::Stream stream, jit::Stream::create());
  SSMTUNE_ASSIGN_OR_RETURN(GpuTimer timer, GpuTimer::create(device));
  Evaluator e(device, compiler, problem, options, std::move(dp), std::move(stream),
              std::move(timer));
  e.seed_ = seed;
  const double work = double(problem.batch) * problem.dim * problem.seqlen * problem.dstate;
  if (work <= options.cpu_reference_limit) {
    e.reference_ = reference_fwd(inputs);
  } else {
    e.gpu_reference_ = true;
    SSMTUNE_ASSIGN_OR_RETURN(e.reference_,
                             reference_fwd_gpu(compiler, device.arch(), e.dp_, e.stream_.get()));
  }
  return e;
}

void Evaluator::precompile(const std::vector<KernelConfig>& configs) {
  // One program per config keeps each config's cache key independent of the
  // others it was compiled with.
  std::vector<jit::ProgramSpec> specs;
  for (const auto& c : configs) {
    auto plan = plan_fwd(problem_, c, device_.max_shared_per_block);
    if (!plan) continue;
    specs.push_back(jit::make_programs(plan->kernels, 0, device_.arch(), "ssm_fwd")[0]);
  }
  compiler_->compile_all(specs);
}

EvalResult Evaluator::evaluate_with(const KernelConfig& c, const TimingOptions& timing) {
  EvalResult r;
  r.config = c;
  auto plan = plan_fwd(problem_, c, device_.max_shared_per_block);
  if (!plan) {
    r.status = EvalStatus::kPruned;
    r.detail = plan.status().message();
    return r;
  }
  auto specs = jit::make_programs(plan->kernels, 0, device_.arch(), "ssm_fwd");
  auto program = compiler_->compile(specs.at(0));
  if (!program) {
    r.status = EvalStatus::kCompileFailed;
    r.detail = program.status().message().substr(0, 4000);
    return r;
  }
  r.compile_seconds = program->compile_seconds;
  auto kernel = FwdKernel::load(std::move(plan).value(), *program);
  if (!kernel) {
    r.status = EvalStatus::kLaunchFailed;
    r.detail = kernel.status().to_string();
    return r;
  }
  r.kernels = kernel->images();
  const auto params = make_params(problem_, dp_.tensors());
  auto fail = [&r](const Status& s) {
    r.status = EvalStatus::kLaunchFailed;
    r.detail = s.to_string();
    return r;
  };
  auto seen = scored_.find(c.key());
  if (seen != scored_.end()) {
    r.score = seen->second.first;
    r.status = seen->second.second.status;
    r.detail = seen->second.second.detail;
  } else {
    if (Status s = dp_.poison_outputs(stream_.get()); !s) return fail(s);
    if (Status s = kernel->launch(params, stream_.get(), scratch_); !s) return fail(s);
    if (Status s = stream_.synchronize(); !s) return fail(s);
    auto out = dp_.download_out();
    auto out_z = dp_.download_out_z();
    auto last = dp_.download_last_state();
    if (!out) return fail(out.status());
    if (!out_z) return fail(out_z.status());
    if (!last) return fail(last.status());
    r.score = score_run(problem_, c.acc == AccType::kF64, reference_, out->data(),
                        problem_.has_z ? out_z->data() : nullptr,
                        problem_.return_last_state ? last->data() : nullptr);
    const bool accurate =
        r.score.verdict == Verdict::kInside || r.score.verdict == Verdict::kAtLimit;
    const bool within_max = options_.max_error <= 0 || r.score.out.rel_l2 <= options_.max_error;
    if (!accurate || !within_max) {
      r.status = EvalStatus::kInaccurate;
      r.detail = std::string(to_string(r.score.verdict)) + ": rel L2 " +
                 std::to_string(r.score.out.rel_l2) + " (budget " +
                 std::to_string(within_max ? r.score.budget.rel_l2 : options_.max_error) + ")";
    }
    scored_[c.key()] = {r.score, r};
  }
  if (options_.time) {
    auto t = timer_.time([&](CUstream s) { return kernel->launch(params, s, scratch_); },
                         stream_.get(), timing);
    if (!t) return fail(t.status());
    r.timing = *t;
  }
  return r;
}

}  // namespace ssmtune
