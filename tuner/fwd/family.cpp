// The forward family: the seam's interface over the forward's own functions.
#include "tuner/fwd/family.h"

#include <cmath>
#include <limits>

#include "tuner/fwd/device_problem.h"
#include "tuner/fwd/heuristics.h"
#include "tuner/fwd/host_inputs.h"
#include "tuner/fwd/plan.h"
#include "tuner/fwd/reference_cpu.h"
#include "tuner/fwd/reference_gpu.h"
#include "tuner/fwd/runner.h"
#include "tuner/fwd/scoring.h"
#include "tuner/fwd/search_space.h"
#include "tuner/typed_family.h"

namespace ssmtune {
namespace {

// A config's kernels launched on the bench's tensors with scratch sized
// for its plan.
// Host copies of the outputs, kept by the bench between configs.
struct HostOutputBuffers {
  std::vector<unsigned char> out, out_z;
  std::vector<float> last;
};

class FwdLoaded final : public LoadedConfig {
 public:
  FwdLoaded(FwdKernel kernel, const FwdProblem& p, const FwdDeviceProblem& dp,
            const FwdHostOutputs& ref, const FwdRefSummary& summary, HostOutputBuffers& host,
            bool fp64)
      : kernel_(std::move(kernel)),
        p_(p),
        dp_(dp),
        ref_(ref),
        summary_(summary),
        host_(host),
        params_(make_params(p, dp.tensors())),
        fp64_(fp64) {}
  const std::vector<jit::KernelImage>& images() const override { return kernel_.images(); }
  Status poison(CUstream stream) override { return dp_.poison_outputs(stream); }
  Status launch(CUstream stream) override { return kernel_.launch(params_, stream, scratch_); }
  Result<std::vector<OutputScore>> score() override {
    SSMTUNE_RETURN_IF_ERROR(dp_.download_outputs(host_.out, host_.out_z, host_.last));
    return score_fwd_run(p_, fp64_, ref_, summary_, host_.out.data(),
                         p_.has_z ? host_.out_z.data() : nullptr,
                         p_.return_last_state ? host_.last.data() : nullptr);
  }

 private:
  FwdKernel kernel_;
  const FwdProblem& p_;
  const FwdDeviceProblem& dp_;
  const FwdHostOutputs& ref_;
  const FwdRefSummary& summary_;  // the bench's: floors and max |ref|, computed once
  HostOutputBuffers& host_;       // the bench's
  ssmtune_kernels::SsmFwdParams params_;
  FwdScratch scratch_;
  bool fp64_;
};

class FwdBench final : public ProblemBench {
 public:
  FwdBench(FwdProblem p, FwdDeviceProblem dp) : p_(p), dp_(std::move(dp)) {}
  const char* reference_kind() const override { return gpu_ref_ ? "gpu fp64" : "cpu fp64"; }
  Result<std::unique_ptr<LoadedConfig>> load(const std::string& config,
                                             const jit::CompiledProgram& program) override {
    SSMTUNE_ASSIGN_OR_RETURN(FwdConfig c, FwdConfig::from_key(config));
    SSMTUNE_ASSIGN_OR_RETURN(FwdPlan plan, plan_fwd(p_, c));
    SSMTUNE_ASSIGN_OR_RETURN(FwdKernel k, FwdKernel::load(std::move(plan), program));
    return std::unique_ptr<LoadedConfig>(
        new FwdLoaded(std::move(k), p_, dp_, ref_, summary_, host_, c.acc == AccType::kF64));
  }

  FwdProblem p_;
  FwdDeviceProblem dp_;
  FwdHostOutputs ref_;
  FwdRefSummary summary_;
  HostOutputBuffers host_;
  bool gpu_ref_ = false;
};

class FwdFamily final : public TypedFamily<FwdProblem, FwdFamilyProblem, FwdConfig> {
 public:
  const char* name() const override { return "fwd"; }
  const char* summary() const override {
    return "the selective-scan forward (out, out_z, last_state)";
  }
  Status check_config(const FamilyProblem& problem, const std::string& config,
                      const jit::DeviceInfo& device) const override {
    SSMTUNE_ASSIGN_OR_RETURN(FwdConfig c, FwdConfig::from_key(config));
    return ssmtune::check_config(get(problem), c, device.max_shared_per_block);
  }
  std::vector<SpaceEntry> search_space(const FamilyProblem& problem, const jit::DeviceInfo& device,
                                       const SpaceOptions& options) const override {
    std::vector<SpaceEntry> out;
    for (const FwdSpaceEntry& e : ssmtune::search_space(get(problem), device, options))
      out.push_back({e.config.key(), e.pruned, e.reason});
    return out;
  }
  DefaultChoice heuristic_default(const FamilyProblem& problem,
                                  const jit::DeviceInfo& device) const override {
    const FwdDefaultChoice d =
        ssmtune::heuristic_default(get(problem), device.sm_count, device.max_shared_per_block);
    return {d.config.key(), d.reason};
  }
  std::vector<std::string> first_look_order(const std::vector<std::string>& candidates,
                                            const std::string& first) const override {
    std::vector<FwdConfig> cs;
    for (const auto& k : candidates)
      if (auto c = FwdConfig::from_key(k)) cs.push_back(*c);
    std::vector<std::string> out;
    for (const FwdConfig& c : ssmtune::first_look_order(cs, first)) out.push_back(c.key());
    return out;
  }
  std::string prune_by_resources(const FamilyProblem& problem, const std::string& config,
                                 const std::vector<jit::KernelImage>& kernels,
                                 const jit::DeviceInfo& device) const override {
    auto c = FwdConfig::from_key(config);
    if (!c) return c.status().message();
    return ssmtune::prune_by_resources(get(problem), *c, kernels, device);
  }
  int resource_rank(const FamilyProblem& problem, const std::string& config,
                    const std::vector<jit::KernelImage>& kernels,
                    const jit::DeviceInfo& device) const override {
    auto c = FwdConfig::from_key(config);
    return c ? ssmtune::resource_rank(get(problem), *c, kernels, device) : 0;
  }
  bool is_fp64_anchor(const std::string& config) const override {
    auto c = FwdConfig::from_key(config);
    return c && c->acc == AccType::kF64;
  }
  Result<std::vector<jit::Instantiation>> instantiations(
      const FamilyProblem& problem, const std::string& config,
      const jit::DeviceInfo& device) const override {
    SSMTUNE_ASSIGN_OR_RETURN(FwdConfig c, FwdConfig::from_key(config));
    SSMTUNE_ASSIGN_OR_RETURN(FwdPlan plan, plan_fwd(get(problem), c, device.max_shared_per_block));
    return plan.kernels;
  }
  Result<std::unique_ptr<ProblemBench>> make_bench(const FamilyProblem& problem,
                                                   const jit::DeviceInfo& device,
                                                   jit::Compiler& compiler,
                                                   const BenchOptions& options,
                                                   CUstream stream) const override {
    const FwdProblem& p = get(problem);
    const FwdHostInputs inputs = make_inputs(p, options.seed, options.distribution);
    SSMTUNE_ASSIGN_OR_RETURN(FwdDeviceProblem dp, FwdDeviceProblem::upload(inputs));
    auto bench = std::make_unique<FwdBench>(p, std::move(dp));
    const double work = double(p.batch) * p.dim * p.seqlen * p.dstate;
    if (work <= options.cpu_reference_limit) {
      bench->ref_ = reference_fwd(inputs);
    } else {
      bench->gpu_ref_ = true;
      SSMTUNE_ASSIGN_OR_RETURN(bench->ref_,
                               reference_fwd_gpu(compiler, device.arch(), bench->dp_, stream));
    }
    bench->summary_ = summarize_reference(p, bench->ref_);
    return std::unique_ptr<ProblemBench>(std::move(bench));
  }
};

}  // namespace

std::string FwdFamilyProblem::class_key() const { return p_.family_key(); }

double fwd_problem_distance(const FwdProblem& a, const FwdProblem& b) {
  auto d = [](int64_t x, int64_t y) {
    const double l = std::log2(static_cast<double>(x)) - std::log2(static_cast<double>(y));
    return l * l;
  };
  return std::sqrt(d(a.batch, b.batch) + d(a.dim, b.dim) + d(a.seqlen, b.seqlen) +
                   d(a.dstate, b.dstate));
}

double FwdFamilyProblem::distance(const FamilyProblem& other) const {
  const FwdProblem* o = as_fwd(other);
  if (o == nullptr || o->groups != p_.groups || o->family_key() != p_.family_key())
    return std::numeric_limits<double>::infinity();
  return fwd_problem_distance(p_, *o);
}

Floors FwdFamilyProblem::floors(const jit::DeviceInfo& device) const {
  return floors_for(p_.min_bytes(), p_.exp_count(), device);
}

const FwdProblem* as_fwd(const FamilyProblem& p) {
  const auto* f = dynamic_cast<const FwdFamilyProblem*>(&p);
  return f ? &f->get() : nullptr;
}

const KernelFamily& fwd_family() {
  static const FwdFamily kFamily;
  return kFamily;
}

}  // namespace ssmtune
