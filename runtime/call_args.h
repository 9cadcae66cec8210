// A library call's tensors (the C ABI's ssmtune_fwd_args, ssmtune_bwd_args)
// read as the problem they pose (FwdProblem, BwdProblem) and the tensors
// that describe them, validated: the problem's sizes come from the tensors'
// shapes, its flags from which optional tensors are present.
#pragma once

#include "ssmtune/ssmtune.h"
#include "tuner/bwd/problem.h"
#include "tuner/fwd/problem.h"

namespace ssmtune {

struct CallProblem {
  FwdProblem problem;
  FwdTensors tensors;
};

Result<CallProblem> read_call(const ssmtune_fwd_args& args);

struct BwdCallProblem {
  bwd::BwdProblem problem;
  bwd::BwdTensors tensors;
};

// has_dlast (and with it the forward's return_last_state) follows dlast's
// presence. `out` is read only with z; given without z it is ignored (not
// checked, left out of the tensors).
Result<BwdCallProblem> read_bwd_call(const ssmtune_bwd_args& args);

// One C tensor as a TensorArg (absent when data is null): dtype code and
// rank checked, errors named after `name`.
Result<TensorArg> from_c_tensor(const ssmtune_tensor& t, const char* name);

// The inverse: C ABI arguments describing `t` (for C++ callers and tests
// that hold FwdTensors).
ssmtune_tensor to_c_tensor(const TensorArg& t);
ssmtune_fwd_args to_c_args(const FwdTensors& t, bool delta_softplus);
ssmtune_bwd_args to_c_args(const bwd::BwdTensors& t, bool delta_softplus);

}  // namespace ssmtune
