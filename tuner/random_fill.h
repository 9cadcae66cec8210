// Seeded random tensors on the host, each value rounded to the dtype it is
// stored in: a portable normal sampler over mt19937_64 (std::
// normal_distribution differs between standard libraries), drawn in chunks
// of fixed size, each from its own generator seeded from (seed, the
// tensor's position in the list, chunk), so the values do not depend on
// the thread count. Shared by every family's inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tuner/dtype.h"

namespace ssmtune {

enum class Sampler { kNormal, kUniform };

// out[i] = round_to(scale * draw + offset, dtype), draw ~ N(0, 1) or U[0, 1).
struct RandomTensor {
  std::vector<double>* out;
  size_t count;
  Sampler sampler;
  double scale;
  DType dtype;
  double offset = 0;
};

// Resizes and fills every tensor, on up to `threads` threads (0: all cores).
// The list's i-th tensor draws from stream i + 1 of `seed`.
void fill_random(const std::vector<RandomTensor>& tensors, uint64_t seed, unsigned threads = 0);

// Resizes and fills one tensor from stream `stream` of `seed`, on the
// calling thread (for a tensor drawn apart from a list, e.g. an incoming
// gradient; give it a stream no list position uses).
void fill_random_stream(const RandomTensor& tensor, uint64_t seed, uint64_t stream);

}  // namespace ssmtune
