// The backward family: the seam's interface over the backward's functions.
#include "tuner/bwd/family.h"

#include <algorithm>
#include <limits>
#include <map>

#include "tuner/bwd/accuracy.h"
#include "tuner/bwd/config.h"
#include "tuner/bwd/device_problem.h"
#include "tuner/bwd/host_grads.h"
#include "tuner/bwd/plan.h"
#include "tuner/bwd/reference_cpu.h"
#include "tuner/bwd/reference_gpu.h"
#include "tuner/bwd/runner.h"
#include "tuner/bwd/states.h"
#include "tuner/fwd/device_problem.h"
#include "tuner/fwd/family.h"
#include "tuner/fwd/host_inputs.h"
#include "tuner/fwd/reference_cpu.h"
#include "tuner/fwd/reference_gpu.h"
#include "tuner/fwd/search_space.h"
#include "tuner/typed_family.h"

namespace ssmtune {
namespace {

using bwd::BwdConfig;
using bwd::BwdProblem;

// The gradients a problem has, in the family's order, with their reference.
std::vector<std::pair<std::string, const std::vector<double>*>> graded(const BwdProblem& p,
                                                                       const bwd::BwdHostGrads& g) {
  std::vector<std::pair<std::string, const std::vector<double>*>> out = {
      {"du", &g.du}, {"ddelta", &g.ddelta}, {"dA", &g.dA}, {"dB", &g.dB}, {"dC", &g.dC}};
  if (p.fwd.has_d) out.push_back({"dD", &g.dD});
  if (p.fwd.has_delta_bias) out.push_back({"ddelta_bias", &g.ddelta_bias});
  if (p.fwd.has_z) out.push_back({"dz", &g.dz});
  if (p.fwd.has_initial_state) out.push_back({"dh0", &g.dh0});
  return out;
}

const std::vector<unsigned char>& bytes_of(const bwd::DeviceGradBytes& b, const std::string& n) {
  if (n == "du") return b.du;
  if (n == "ddelta") return b.ddelta;
  if (n == "dA") return b.dA;
  if (n == "dB") return b.dB;
  if (n == "dC") return b.dC;
  if (n == "dD") return b.dD;
  if (n == "ddelta_bias") return b.ddelta_bias;
  if (n == "dz") return b.dz;
  return b.dh0;
}

// Per graded output, what scoring needs of its reference besides the values
// (its rounding floor and max |ref|): computed once per bench.
struct RefStats {
  double floor = 0, max_abs = 0;
};
using RefStatsMap = std::map<std::string, RefStats>;

class BwdLoaded final : public LoadedConfig {
 public:
  // states_given: launches read the states a forward would have saved (the
  // checkpoints this config's first launch computes, left in its scratch).
  BwdLoaded(bwd::BwdKernel kernel, const bwd::BwdDeviceProblem& dp, const bwd::BwdHostGrads& ref,
            const RefStatsMap& stats, bool fp64, bool states_given)
      : kernel_(std::move(kernel)),
        dp_(dp),
        ref_(ref),
        stats_(stats),
        params_(bwd::make_params(dp.problem(), dp.tensors())),
        fp64_(fp64),
        states_given_(states_given) {}
  const std::vector<jit::KernelImage>& images() const override { return kernel_.images(); }
  Status poison(CUstream stream) override { return dp_.poison_outputs(stream); }
  Status launch(CUstream stream) override {
    if (!states_given_) return kernel_.launch(params_, stream, scratch_);
    if (!states_ready_) {
      SSMTUNE_RETURN_IF_ERROR(kernel_.launch(params_, stream, scratch_));
      states_ready_ = true;
    }
    const auto* states =
        reinterpret_cast<const void*>(scratch_.base() + kernel_.plan().scratch.ckpt);
    return kernel_.launch(params_, stream, scratch_, states);
  }
  Result<std::vector<OutputScore>> score() override {
    SSMTUNE_ASSIGN_OR_RETURN(bwd::DeviceGradBytes got, dp_.download());
    const BwdProblem& p = dp_.problem();
    std::vector<OutputScore> out;
    for (const auto& [name, ref] : graded(p, ref_)) {
      const DType dt = bwd::bwd_grad_dtype(name, p.fwd);
      const std::vector<unsigned char>& raw = bytes_of(got, name);
      if (raw.size() != ref->size() * static_cast<size_t>(dtype_bytes(dt)))
        return Status::internal("backward: " + name + " holds " + std::to_string(raw.size()) +
                                " bytes for " + std::to_string(ref->size()) + " elements");
      const Tolerance tol = mamba_tolerance(dt);
      const auto st = stats_.find(name);
      const RefStats rs =
          st != stats_.end() ? st->second : RefStats{rounding_floor(*ref, dt), max_abs(*ref)};
      out.push_back(make_output_score(
          name, ssmtune::score(*ref, rs.max_abs, raw.data(), dt, tol.rtol, tol.atol),
          bwd::bwd_budget_for(name, p.fwd.dtype, fp64_, rs.floor), rs.floor));
    }
    return out;
  }

 private:
  bwd::BwdKernel kernel_;
  const bwd::BwdDeviceProblem& dp_;
  const bwd::BwdHostGrads& ref_;
  const RefStatsMap& stats_;
  ssmtune_kernels::SsmBwdParams params_;
  bwd::BwdScratch scratch_;
  bool fp64_;
  bool states_given_;
  bool states_ready_ = false;
};

class BwdBench final : public ProblemBench {
 public:
  BwdBench(BwdProblem p, bwd::BwdDeviceProblem dp, bwd::BwdHostGrads ref, bool gpu_ref,
           bool states_given)
      : p_(p),
        dp_(std::move(dp)),
        ref_(std::move(ref)),
        gpu_ref_(gpu_ref),
        states_given_(states_given) {
    for (const auto& [name, r] : graded(p_, ref_))
      stats_[name] = {rounding_floor(*r, bwd::bwd_grad_dtype(name, p_.fwd)), max_abs(*r)};
  }
  const char* reference_kind() const override { return gpu_ref_ ? "gpu fp64" : "cpu fp64"; }
  Result<std::unique_ptr<LoadedConfig>> load(const std::string& config,
                                             const jit::CompiledProgram& program) override {
    SSMTUNE_ASSIGN_OR_RETURN(BwdConfig c, BwdConfig::from_key(config));
    SSMTUNE_ASSIGN_OR_RETURN(bwd::BwdPlan plan, bwd::plan_bwd(p_, c));
    // Configs that take no saved states (fp64, a chunk that is no interval,
    // one chunk) recompute, as a training step would run them.
    const bool states = states_given_ && bwd::states_interval(c, plan) > 0;
    SSMTUNE_ASSIGN_OR_RETURN(bwd::BwdKernel k, bwd::BwdKernel::load(std::move(plan), program));
    return std::unique_ptr<LoadedConfig>(
        new BwdLoaded(std::move(k), dp_, ref_, stats_, c.acc == bwd::BwdAcc::kF64, states));
  }

 private:
  BwdProblem p_;
  bwd::BwdDeviceProblem dp_;
  bwd::BwdHostGrads ref_;
  RefStatsMap stats_;
  bool gpu_ref_;
  bool states_given_;
};

class BwdFamily final : public TypedFamily<BwdProblem, BwdFamilyProblem, BwdConfig> {
 public:
  const char* name() const override { return "bwd"; }
  const char* summary() const override {
    return "the selective-scan backward (du, ddelta, dA, dB, dC, dD, dz, ddelta_bias, dh0)";
  }
  Status check_config(const FamilyProblem& problem, const std::string& config,
                      const jit::DeviceInfo& device) const override {
    SSMTUNE_ASSIGN_OR_RETURN(BwdConfig c, BwdConfig::from_key(config));
    return bwd::check_config(get(problem), c, device.max_shared_per_block);
  }
  std::vector<SpaceEntry> search_space(const FamilyProblem& problem, const jit::DeviceInfo& device,
                                       const SpaceOptions& options) const override {
    std::vector<SpaceEntry> out;
    for (const BwdConfig& c : bwd::search_space(get(problem), device.max_shared_per_block))
      out.push_back(space_entry(c.key(), c.acc == bwd::BwdAcc::kF64, options));
    return out;
  }
  DefaultChoice heuristic_default(const FamilyProblem& problem,
                                  const jit::DeviceInfo& device) const override {
    const bwd::BwdDefault d = bwd::default_config(get(problem), bwd::BwdAcc::kF32,
                                                  device.max_shared_per_block, device.sm_count);
    return {d.config.key(), d.reason};
  }
  std::vector<std::string> first_look_order(const std::vector<std::string>& candidates,
                                            const std::string& first) const override {
    return default_first_look(candidates, first);
  }
  std::string prune_by_resources(const FamilyProblem& /*problem*/, const std::string& config,
                                 const std::vector<jit::KernelImage>& kernels,
                                 const jit::DeviceInfo& device) const override {
    auto c = BwdConfig::from_key(config);
    if (!c) return c.status().message();
    if (std::string why = spill_reason(kernels); !why.empty()) return why;
    for (const auto& k : kernels) {
      const auto& r = k.resources;
      if (r.registers > 0 && r.registers * c->threads > device.registers_per_sm)
        return "registers: " + std::to_string(r.registers) + " x " + std::to_string(c->threads) +
               " threads exceed the SM's register file";
    }
    return {};
  }
  bool is_fp64_anchor(const std::string& config) const override {
    auto c = BwdConfig::from_key(config);
    return c && c->acc == bwd::BwdAcc::kF64;
  }
  Result<std::vector<jit::Instantiation>> instantiations(
      const FamilyProblem& problem, const std::string& config,
      const jit::DeviceInfo& device) const override {
    SSMTUNE_ASSIGN_OR_RETURN(BwdConfig c, BwdConfig::from_key(config));
    SSMTUNE_ASSIGN_OR_RETURN(bwd::BwdPlan plan,
                             bwd::plan_bwd(get(problem), c, device.max_shared_per_block));
    return plan.kernels;
  }
  Result<std::unique_ptr<ProblemBench>> make_bench(const FamilyProblem& problem,
                                                   const jit::DeviceInfo& device,
                                                   jit::Compiler& compiler,
                                                   const BenchOptions& options,
                                                   CUstream stream) const override {
    const BwdProblem& p = get(problem);
    const FwdHostInputs in = make_inputs(p.fwd, options.seed, options.distribution);
    const std::vector<double> dout = bwd::make_dout(p.fwd, options.seed + 1);
    const std::vector<double> dlast =
        p.has_dlast ? bwd::make_dlast(p.fwd, options.seed + 2) : std::vector<double>{};
    // The CPU backward costs about three forward references.
    const double work = 3.0 * double(p.fwd.batch) * p.fwd.dim * p.fwd.seqlen * p.fwd.dstate;
    const bool gpu_ref = work > options.cpu_reference_limit;
    // The saved forward output y (before the z gate) that the backward reads with z.
    std::vector<double> y;
    if (p.fwd.has_z) {
      if (!gpu_ref) {
        y = reference_fwd(in).out;
      } else {
        SSMTUNE_ASSIGN_OR_RETURN(FwdDeviceProblem fdp, FwdDeviceProblem::upload(in));
        SSMTUNE_ASSIGN_OR_RETURN(FwdHostOutputs fo,
                                 reference_fwd_gpu(compiler, device.arch(), fdp, stream));
        y = std::move(fo.out);
      }
    }
    SSMTUNE_ASSIGN_OR_RETURN(bwd::BwdDeviceProblem dp,
                             bwd::BwdDeviceProblem::upload(in, p.has_dlast, y, dout, dlast));
    bwd::BwdHostGrads ref;
    if (gpu_ref) {
      SSMTUNE_ASSIGN_OR_RETURN(
          ref, bwd::reference_backward_gpu(in, dout, dlast, device, compiler, stream));
    } else {
      ref = bwd::reference_backward_cpu(in, dout, dlast);
    }
    return std::unique_ptr<ProblemBench>(
        new BwdBench(p, std::move(dp), std::move(ref), gpu_ref, options.states_given));
  }
};

}  // namespace

std::string BwdFamilyProblem::class_key() const {
  return p_.fwd.family_key() + (p_.has_dlast ? ".dlast" : "");
}

double BwdFamilyProblem::distance(const FamilyProblem& other) const {
  const BwdProblem* o = as_bwd(other);
  if (o == nullptr || o->fwd.groups != p_.fwd.groups || o->has_dlast != p_.has_dlast ||
      o->fwd.family_key() != p_.fwd.family_key())
    return std::numeric_limits<double>::infinity();
  return fwd_problem_distance(p_.fwd, o->fwd);
}

Floors BwdFamilyProblem::floors(const jit::DeviceInfo& device) const {
  return floors_for(p_.min_bytes(), p_.exp_count(), device);
}

const BwdProblem* as_bwd(const FamilyProblem& p) {
  const auto* f = dynamic_cast<const BwdFamilyProblem*>(&p);
  return f ? &f->get() : nullptr;
}

const KernelFamily& bwd_family() {
  static const BwdFamily kFamily;
  return kFamily;
}

}  // namespace ssmtune
