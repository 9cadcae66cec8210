// The problem a backward selective scan solves: the forward FwdProblem (sizes,
// dtype, flags) plus whether a gradient flows in through last_state, and
// the device tensors of one backward call, validated against it. Values;
// thread-safe.
#pragma once

#include <string>

#include "ssmtune/status.h"
#include "tuner/fwd/problem.h"

namespace ssmtune::bwd {

struct BwdProblem {
  FwdProblem fwd;
  bool has_dlast = false;  // needs fwd.return_last_state

  // The forward's rules, and dlast only with return_last_state.
  Status validate() const;
  // "bwd:" + the forward key (+ ".dlast"), e.g. "bwd:b8.d1536.l2048.n16.g1.bf16.vB.vC.last.dlast".
  std::string key() const;
  static Result<BwdProblem> from_key(const std::string& key);

  // The backward's floor: every input read once and every gradient written
  // once, bytes (no checkpoints, no partials); and one exp per (batch, dim,
  // dstate, seqlen).
  double min_bytes() const;
  double exp_count() const { return fwd.exp_count(); }
};

bool operator==(const BwdProblem& a, const BwdProblem& b);

// Inputs: the forward's (u, delta, A, B, C, D, z, delta_bias, h0), `out`
// (the saved forward output y before the z gate, needed with z), dout
// (gradient of out_z with z, else of out; input dtype) and dlast ((batch,
// dim, dstate) fp32, with has_dlast). Outputs: du, ddelta, dz in the input
// dtype; dB/dC like B/C (input dtype when variable, fp32 (dim, dstate) when
// constant); dA (dim, dstate), dD, ddelta_bias (dim), dh0 (batch, dim,
// dstate) fp32. dD, dz, ddelta_bias, dh0 are present exactly when D, z,
// delta_bias, h0 are.
struct BwdTensors {
  TensorArg u, delta, A, B, C, D, z, delta_bias, h0, out, dout, dlast;
  TensorArg du, ddelta, dA, dB, dC, dD, dz, ddelta_bias, dh0;
};

// Presence, rank, shape, dtype, contiguity of the last dimension, pointer
// alignment and non-overlap of outputs with every other tensor; each error
// names the argument ("dB: expected shape (2, 1, 16, 64), got ...").
Status validate_bwd_tensors(const BwdProblem& p, const BwdTensors& t);

}  // namespace ssmtune::bwd
