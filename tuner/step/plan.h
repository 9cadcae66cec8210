// What one StepConfig runs for one StepProblem: the kernel instantiation
// (the one function that builds its name expression) and its launch. Pure
// functions; thread-safe.
#pragma once

#include <string>

#include "jit/module.h"
#include "jit/program_builder.h"
#include "tuner/step/config.h"

namespace ssmtune::step {

// The header every step kernel is instantiated from.
inline constexpr const char* kStepHeader = "ssm/step/step_all.cuh";

struct StepPlan {
  jit::Instantiation kernel;
  jit::Dim3 grid, block;  // grid: (headdim tiles x heads, batch)
};

// "ssmtune_kernels::StepTraits<__nv_bfloat16, float, float, 16, 32, 4, 4, ...>".
std::string traits_expression(const StepProblem& p, const StepConfig& c);

Result<StepPlan> plan_step(const StepProblem& p, const StepConfig& c);

}  // namespace ssmtune::step
