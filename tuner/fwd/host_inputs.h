// Seeded random inputs of a forward problem, on the host, each value already
// rounded to the dtype it is stored in (so a kernel reads exactly the values
// the fp64 reference uses), and the byte encoding of those values. Values;
// make_inputs is deterministic for a seed and independent of thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tuner/family.h"
#include "tuner/fwd/problem.h"

namespace ssmtune {

// Every tensor contiguous (row-major) in the shapes of tuner/problem.h:
// u, delta, z (batch, dim, seqlen); A (dim, dstate); B, C (batch, groups,
// dstate, seqlen) when variable, else (dim, dstate); D, delta_bias (dim);
// h0 (batch, dim, dstate). Absent tensors are empty.
struct FwdHostInputs {
  FwdProblem problem;
  std::vector<double> u, delta, A, B, C, D, z, delta_bias, h0;
};

// Generated in chunks of fixed size, each from its own mt19937_64 seeded
// from (seed, tensor, chunk), on up to `threads` threads (0: all cores); the
// values do not depend on the thread count. An invalid problem gets no
// tensors (all empty).
FwdHostInputs make_inputs(const FwdProblem& p, uint64_t seed,
                          InputDistribution dist = InputDistribution::kMamba, unsigned threads = 0);

}  // namespace ssmtune
