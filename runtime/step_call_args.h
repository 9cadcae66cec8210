// A decode-step call's tensors (the C ABI's ssmtune_step_args) read as the
// StepProblem they pose and the StepTensors that describe them, validated:
// sizes from the shapes (x gives batch, heads and headdim; the state
// dstate; B the groups), the dtypes from x and the state, the flags from
// which optional tensors are present.
#pragma once

#include "ssmtune/ssmtune.h"
#include "tuner/step/problem.h"

namespace ssmtune {

struct StepCallProblem {
  step::StepProblem problem;
  step::StepTensors tensors;
};

Result<StepCallProblem> read_step_call(const ssmtune_step_args& args);

// The inverse, for C++ callers and tests that hold StepTensors.
ssmtune_step_args to_c_args(const step::StepTensors& t, bool dt_softplus);

}  // namespace ssmtune
