// Seeded random inputs of a forward problem, on the host, each value already
// rounded to the dtype it is stored in (so a kernel reads exactly the values
// the fp64 reference uses), and the byte encoding of those values. Values;
// make_inputs is deterministic for a seed and independent of thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tuner/problem.h"

namespace ssmtune {

// Every tensor contiguous (row-major) in the shapes of tuner/problem.h:
// u, delta, z (batch, dim, seqlen); A (dim, dstate); B, C (batch, groups,
// dstate, seqlen) when variable, else (dim, dstate); D, delta_bias (dim);
// h0 (batch, dim, dstate). Absent tensors are empty.
struct HostInputs {
  Problem problem;
  std::vector<double> u, delta, A, B, C, D, z, delta_bias, h0;
};

enum class InputDistribution {
  kMamba,      // mamba_ssm's test: u, B, C, z, D, h0 ~ randn; delta, delta_bias ~ 0.5 * rand;
               // A ~ -0.5 * rand
  kSlowDecay,  // kMamba with A ~ -1e-3 * rand: exp(delta * A) close to 1, the state remembers
               // thousands of steps (the hard case for accumulation error)
  kLarge,      // kMamba with u, B, C ~ 4 * randn and delta ~ 2 * rand (stress ranges)
};
const char* to_string(InputDistribution d);  // "mamba", "slow-decay", "large"

// Generated in chunks of fixed size, each from its own mt19937_64 seeded
// from (seed, tensor, chunk), on up to `threads` threads (0: all cores); the
// values do not depend on the thread count. An invalid problem gets no
// tensors (all empty).
HostInputs make_inputs(const Problem& p, uint64_t seed,
                       InputDistribution dist = InputDistribution::kMamba, unsigned threads = 0);

// Values as little-endian fp32/fp16/bf16 bytes, rounded to nearest even.
std::vector<unsigned char> encode(const std::vector<double>& values, DType dtype);
// `count` elements of `dtype` from little-endian bytes, exactly.
std::vector<double> decode(const void* bytes, size_t count, DType dtype);

// x rounded to `dtype` (the value encode then decode gives).
double round_to(double x, DType dtype);

}  // namespace ssmtune
