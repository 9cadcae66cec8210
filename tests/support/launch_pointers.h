// The device pointers a prepared launch takes, in the C ABI's order
// (SSMTUNE_FWD_* / SSMTUNE_BWD_*), from a device problem's tensors.
#pragma once

#include <vector>

#include "tuner/bwd/problem.h"
#include "tuner/fwd/problem.h"

namespace ssmtune::testing {

inline std::vector<const void*> fwd_pointers(const FwdTensors& t) {
  return {t.u.data, t.delta.data,      t.A.data,  t.B.data,   t.C.data,     t.D.data,
          t.z.data, t.delta_bias.data, t.h0.data, t.out.data, t.out_z.data, t.last_state.data};
}

inline std::vector<const void*> bwd_pointers(const bwd::BwdTensors& t) {
  return {t.u.data,  t.delta.data,       t.A.data,  t.B.data,   t.C.data,    t.D.data,
          t.z.data,  t.delta_bias.data,  t.h0.data, t.out.data, t.dout.data, t.dlast.data,
          t.du.data, t.ddelta.data,      t.dA.data, t.dB.data,  t.dC.data,   t.dD.data,
          t.dz.data, t.ddelta_bias.data, t.dh0.data};
}

}  // namespace ssmtune::testing
