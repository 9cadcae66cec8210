// Problems by shape, for tests: the forward's four sizes, the dtype and the
// groups, every flag at its default, and its flags from a bit mask; the decode step's sizes,
// dtypes, the block's flags (D, z, dt_bias, softplus) together, and state indices.
#pragma once

#include <cstdint>

#include "tuner/fwd/problem.h"
#include "tuner/step/problem.h"

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

// The scan's eight flags from the bits of `mask` (0 to 255 gives every
// combination), lowest first: variable B, variable C, D, z, delta_bias,
// softplus, the last state, an initial state.
inline void set_flags(FwdProblem& p, int mask) {
  bool* flags[] = {&p.variable_b,
                   &p.variable_c,
                   &p.has_d,
                   &p.has_z,
                   &p.has_delta_bias,
                   &p.delta_softplus,
                   &p.return_last_state,
                   &p.has_initial_state};
  for (int i = 0; i < 8; ++i) *flags[i] = ((mask >> i) & 1) != 0;
}

inline step::StepProblem step_problem(int64_t batch, int64_t heads, int64_t headdim, int64_t dstate,
                                      int64_t groups, DType dt, DType state_dt, bool flags,
                                      bool indices = false) {
  step::StepProblem p;
  p.batch = batch;
  p.heads = heads;
  p.headdim = headdim;
  p.dstate = dstate;
  p.groups = groups;
  p.dtype = dt;
  p.state_dtype = state_dt;
  p.has_d = p.has_z = p.has_dt_bias = p.softplus = flags;
  p.has_indices = indices;
  return p;
}

}  // namespace ssmtune::testing
