// Problems by shape, for tests: the four sizes, the dtype and the groups;
// every flag at its default.
#pragma once

#include <cstdint>

#include "tuner/fwd/problem.h"

namespace ssmtune::testing {

inline FwdProblem shape(int64_t batch, int64_t dim, int64_t seqlen, int64_t dstate,
                        DType dtype = DType::kF32, int64_t groups = 1) {
  FwdProblem p;
  p.batch = batch;
  p.dim = dim;
  p.seqlen = seqlen;
  p.dstate = dstate;
  p.dtype = dtype;
  p.groups = groups;
  return p;
}

}  // namespace ssmtune::testing
