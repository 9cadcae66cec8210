// The fp64 CPU reference of the selective-scan backward: every gradient of
// the forward of tuner/reference_cpu.h, from the incoming gradients dout and
// dlast, on the already rounded inputs. Thread-safe; the result does not
// depend on the thread count (every sum has one fixed order).
#pragma once

#include <vector>

#include "tuner/fwd/host_inputs.h"

namespace ssmtune::bwd {

// Gradients of the loss with respect to each input, unrounded fp64, in the
// input's layout (tuner/host_inputs.h): du, ddelta, dz (batch, dim, seqlen);
// dA (dim, dstate); dB, dC (batch, groups, dstate, seqlen) when variable,
// else (dim, dstate); dD, ddelta_bias (dim); dh0 (batch, dim, dstate).
// ddelta is with respect to delta as passed (before bias and softplus).
// A tensor the problem lacks (no D, z, bias or initial state) stays empty.
struct BwdHostGrads {
  std::vector<double> du, ddelta, dA, dB, dC, dD, dz, ddelta_bias, dh0;
};

// dout: (batch, dim, seqlen), the gradient of out_z when the problem has z,
// else of out. dlast: (batch, dim, dstate), the gradient of last_state, or
// empty for none (it is used whenever given, whatever return_last_state
// says). in.problem must be valid and the sizes must match; otherwise every
// gradient is returned empty. Parallel over work units on `threads` threads
// (0: all cores).
BwdHostGrads reference_backward_cpu(const FwdHostInputs& in, const std::vector<double>& dout,
                                    const std::vector<double>& dlast, unsigned threads = 0);

// True when in.problem is valid and every input, dout and dlast (or an
// empty dlast) has the size the problem gives it.
bool backward_sizes_match(const FwdHostInputs& in, const std::vector<double>& dout,
                          const std::vector<double>& dlast);

}  // namespace ssmtune::bwd
