// The fp64 CPU reference of the forward selective scan (mamba_ssm's
// selective_scan_fn): a direct loop over time and states per (batch, dim)
// row, in double precision, on the already rounded inputs. Thread-safe; the
// result does not depend on the thread count.
#pragma once

#include <vector>

#include "tuner/fwd/host_inputs.h"

namespace ssmtune {

// out = y and out_z = y * silu(z) are (batch, dim, seqlen); last_state is
// (batch, dim, dstate). out_z and last_state are empty unless has_z and
// return_last_state. All unrounded fp64.
struct FwdHostOutputs {
  std::vector<double> out, out_z, last_state;
};

// `in` as make_inputs builds it (sizes matching in.problem, which must be
// valid). Parallel over rows on `threads` threads (0: all cores).
FwdHostOutputs reference_fwd(const FwdHostInputs& in, unsigned threads = 0);

}  // namespace ssmtune
