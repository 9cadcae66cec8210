// Launching decode-step configs: StepKernel is a config's kernel loaded from
// a compiled program; it needs no scratch and launches once per call.
// Move-only; may launch from several threads at once.
#pragma once

#include <vector>

#include "jit/compiler.h"
#include "jit/module.h"
#include "ssm/step/step_params.cuh"
#include "tuner/step/plan.h"

namespace ssmtune::step {

// Kernel params from validated tensors, with the vector paths turned on
// where the state (and A) rows are aligned for the config's vector.
ssmtune_kernels::SsmStepParams make_params(const StepProblem& p, const StepTensors& t,
                                           const StepConfig& c);

class StepKernel {
 public:
  static Result<StepKernel> load(StepConfig config, StepPlan plan,
                                 const jit::CompiledProgram& program);
  // Enqueues the kernel only: safe in graph capture.
  Status launch(const ssmtune_kernels::SsmStepParams& params, CUstream stream) const;

  const StepConfig& config() const { return config_; }
  const StepPlan& plan() const { return plan_; }
  const std::vector<jit::KernelImage>& images() const { return images_; }

 private:
  StepKernel(StepConfig config, StepPlan plan, jit::Module module)
      : config_(config), plan_(std::move(plan)), module_(std::move(module)) {}
  StepConfig config_;
  StepPlan plan_;
  jit::Module module_;
  jit::Kernel kernel_;
  std::vector<jit::KernelImage> images_;
};

// Compiles (through the compiler's cache) and loads one config.
Result<StepKernel> build_step_kernel(jit::Compiler& compiler, const StepProblem& p,
                                     const StepConfig& c, const std::string& arch);

}  // namespace ssmtune::step
