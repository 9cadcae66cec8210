// A library call's tensors (the C ABI's ssmtune_fwd_args) read as the
// FwdProblem they pose and the FwdTensors that describe them, validated: the
// problem's sizes come from the tensors' shapes, its flags from which
// optional tensors are present.
#pragma once

#include "ssmtune/ssmtune.h"
#include "tuner/fwd/problem.h"

namespace ssmtune {

struct CallProblem {
  FwdProblem problem;
  FwdTensors tensors;
};

Result<CallProblem> read_call(const ssmtune_fwd_args& args);

// The inverse: C ABI arguments describing `t` (for C++ callers and tests
// that hold FwdTensors).
ssmtune_tensor to_c_tensor(const TensorArg& t);
ssmtune_fwd_args to_c_args(const FwdTensors& t, bool delta_softplus);

}  // namespace ssmtune
