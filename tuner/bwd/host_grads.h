// The incoming gradients of a backward problem, on the host: seeded randn
// dout (gradient of out_z, or of out without z) rounded to the input dtype,
// and dlast (gradient of last_state) rounded to fp32, as the kernels read
// them. Deterministic for a seed; values only.
#pragma once

#include <cstdint>
#include <vector>

#include "tuner/fwd/problem.h"

namespace ssmtune::bwd {

// (batch, dim, seqlen), randn rounded to p.dtype. Empty for an invalid problem.
std::vector<double> make_dout(const FwdProblem& p, uint64_t seed);
// (batch, dim, dstate), randn rounded to fp32; empty unless p.return_last_state
// (without it no gradient flows in through the last state).
std::vector<double> make_dlast(const FwdProblem& p, uint64_t seed);

}  // namespace ssmtune::bwd
