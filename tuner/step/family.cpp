// The decode-step family: the seam's interface over the step's functions.
#include "tuner/step/family.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tuner/step/config.h"
#include "tuner/step/device_problem.h"
#include "tuner/step/host_inputs.h"
#include "tuner/step/plan.h"
#include "tuner/step/runner.h"
#include "tuner/typed_family.h"

namespace ssmtune {
namespace {

using step::StepConfig;
using step::StepProblem;

// The bench's reference and what scoring needs of it, computed once.
struct StepRef {
  step::StepHostOutputs values;
  double out_floor = 0, out_max = 0, state_floor = 0, state_max = 0;
};

class StepLoaded final : public LoadedConfig {
 public:
  StepLoaded(step::StepKernel kernel, const step::StepDeviceProblem& dp, const StepRef& ref)
      : kernel_(std::move(kernel)),
        dp_(dp),
        ref_(ref),
        params_(step::make_params(dp.problem(), dp.tensors(), kernel_.config())) {}
  const std::vector<jit::KernelImage>& images() const override { return kernel_.images(); }
  // The state is the step's input too: restored before a scored run.
  Status poison(CUstream stream) override { return dp_.reset(stream); }
  Status launch(CUstream stream) override { return kernel_.launch(params_, stream); }
  Result<std::vector<OutputScore>> score() override {
    const StepProblem& p = dp_.problem();
    const bool fp64 = kernel_.config().acc == step::StepAcc::kF64;
    SSMTUNE_ASSIGN_OR_RETURN(std::vector<unsigned char> out, dp_.download_out());
    SSMTUNE_ASSIGN_OR_RETURN(std::vector<unsigned char> state, dp_.download_state());
    std::vector<OutputScore> scores;
    auto add = [&](const char* name, const std::vector<double>& ref, double max_ref,
                   const std::vector<unsigned char>& raw, DType dt, double floor) -> Status {
      if (raw.size() != ref.size() * static_cast<size_t>(dtype_bytes(dt)))
        return Status::internal(std::string("step: ") + name + " holds " +
                                std::to_string(raw.size()) + " bytes for " +
                                std::to_string(ref.size()) + " elements");
      const Tolerance tol = mamba_tolerance(dt);
      scores.push_back(
          make_output_score(name, ssmtune::score(ref, max_ref, raw.data(), dt, tol.rtol, tol.atol),
                            budget_for(dt, fp64, floor), floor));
      return Status::ok();
    };
    SSMTUNE_RETURN_IF_ERROR(
        add("out", ref_.values.out, ref_.out_max, out, p.dtype, ref_.out_floor));
    SSMTUNE_RETURN_IF_ERROR(
        add("state", ref_.values.state, ref_.state_max, state, p.state_dtype, ref_.state_floor));
    return scores;
  }

 private:
  step::StepKernel kernel_;
  const step::StepDeviceProblem& dp_;
  const StepRef& ref_;
  ssmtune_kernels::SsmStepParams params_;
};

class StepBench final : public ProblemBench {
 public:
  StepBench(StepProblem p, step::StepDeviceProblem dp, StepRef ref)
      : p_(p), dp_(std::move(dp)), ref_(std::move(ref)) {}
  const char* reference_kind() const override { return "cpu fp64"; }
  Result<std::unique_ptr<LoadedConfig>> load(const std::string& config,
                                             const jit::CompiledProgram& program) override {
    SSMTUNE_ASSIGN_OR_RETURN(StepConfig c, StepConfig::from_key(config));
    SSMTUNE_ASSIGN_OR_RETURN(step::StepPlan plan, step::plan_step(p_, c));
    SSMTUNE_ASSIGN_OR_RETURN(step::StepKernel k,
                             step::StepKernel::load(c, std::move(plan), program));
    return std::unique_ptr<LoadedConfig>(new StepLoaded(std::move(k), dp_, ref_));
  }

 private:
  StepProblem p_;
  step::StepDeviceProblem dp_;
  StepRef ref_;
};

class StepFamily final : public TypedFamily<StepProblem, StepFamilyProblem, StepConfig> {
 public:
  const char* name() const override { return "step"; }
  const char* summary() const override {
    return "the decode step (one token; the state updated in place; out)";
  }
  Status check_config(const FamilyProblem& problem, const std::string& config,
                      const jit::DeviceInfo& /*device*/) const override {
    SSMTUNE_ASSIGN_OR_RETURN(StepConfig c, StepConfig::from_key(config));
    return step::check_config(get(problem), c);
  }
  std::vector<SpaceEntry> search_space(const FamilyProblem& problem,
                                       const jit::DeviceInfo& /*device*/,
                                       const SpaceOptions& options) const override {
    std::vector<SpaceEntry> out;
    for (const StepConfig& c : step::search_space(get(problem)))
      out.push_back(space_entry(c.key(), c.acc == step::StepAcc::kF64, options));
    return out;
  }
  DefaultChoice heuristic_default(const FamilyProblem& problem,
                                  const jit::DeviceInfo& device) const override {
    const step::StepDefault d =
        step::default_config(get(problem), step::StepAcc::kF32, device.sm_count);
    return {d.config.key(), d.reason};
  }
  std::vector<std::string> first_look_order(const std::vector<std::string>& candidates,
                                            const std::string& first) const override {
    return default_first_look(candidates, first);
  }
  std::string prune_by_resources(const FamilyProblem& /*problem*/, const std::string& /*config*/,
                                 const std::vector<jit::KernelImage>& kernels,
                                 const jit::DeviceInfo& /*device*/) const override {
    return spill_reason(kernels);
  }
  bool is_fp64_anchor(const std::string& config) const override {
    auto c = StepConfig::from_key(config);
    return c && c->acc == step::StepAcc::kF64;
  }
  Result<std::vector<jit::Instantiation>> instantiations(
      const FamilyProblem& problem, const std::string& config,
      const jit::DeviceInfo& /*device*/) const override {
    SSMTUNE_ASSIGN_OR_RETURN(StepConfig c, StepConfig::from_key(config));
    SSMTUNE_ASSIGN_OR_RETURN(step::StepPlan plan, step::plan_step(get(problem), c));
    return std::vector<jit::Instantiation>{plan.kernel};
  }
  Result<std::unique_ptr<ProblemBench>> make_bench(const FamilyProblem& problem,
                                                   const jit::DeviceInfo& /*device*/,
                                                   jit::Compiler& /*compiler*/,
                                                   const BenchOptions& options,
                                                   CUstream /*stream*/) const override {
    const StepProblem& p = get(problem);
    const step::StepHostInputs in = step::make_step_inputs(p, options.seed, options.distribution);
    StepRef ref;
    ref.values = step::reference_step(in);
    ref.out_floor = rounding_floor(ref.values.out, p.dtype);
    ref.out_max = max_abs(ref.values.out);
    ref.state_floor = rounding_floor(ref.values.state, p.state_dtype);
    ref.state_max = max_abs(ref.values.state);
    SSMTUNE_ASSIGN_OR_RETURN(step::StepDeviceProblem dp, step::StepDeviceProblem::upload(in));
    return std::unique_ptr<ProblemBench>(new StepBench(p, std::move(dp), std::move(ref)));
  }
};

}  // namespace

double StepFamilyProblem::distance(const FamilyProblem& other) const {
  const StepProblem* o = as_step(other);
  if (o == nullptr || o->class_key() != p_.class_key() || o->groups != p_.groups ||
      o->heads != p_.heads)
    return std::numeric_limits<double>::infinity();
  auto d = [](int64_t x, int64_t y) {
    const double l = std::log2(static_cast<double>(x)) - std::log2(static_cast<double>(y));
    return l * l;
  };
  return std::sqrt(d(p_.batch, o->batch) + d(p_.headdim, o->headdim));
}

Floors StepFamilyProblem::floors(const jit::DeviceInfo& device) const {
  return floors_for(p_.min_bytes(), p_.exp_count(), device);
}

const StepProblem* as_step(const FamilyProblem& p) {
  const auto* f = dynamic_cast<const StepFamilyProblem*>(&p);
  return f ? &f->get() : nullptr;
}

const KernelFamily& step_family() {
  static const StepFamily kFamily;
  return kFamily;
}

}  // namespace ssmtune
