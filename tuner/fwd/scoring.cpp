// Forward run scoring.
#include "tuner/fwd/scoring.h"

#include <algorithm>

namespace ssmtune {

std::vector<OutputScore> score_fwd_run(const FwdProblem& p, bool acc_is_fp64,
                                       const FwdHostOutputs& ref, const void* out_raw,
                                       const void* out_z_raw, const float* last_state) {
  std::vector<OutputScore> r;
  const Tolerance tol = mamba_tolerance(p.dtype);
  const bool has_out_z = p.has_z && out_z_raw != nullptr;
  double floor = rounding_floor(ref.out, p.dtype);
  if (has_out_z) floor = std::max(floor, rounding_floor(ref.out_z, p.dtype));
  const ErrorBudget budget = budget_for(p.dtype, acc_is_fp64, floor);
  r.push_back(make_output_score("out", score(ref.out, out_raw, p.dtype, tol.rtol, tol.atol), budget,
                                floor));
  if (has_out_z)
    r.push_back(make_output_score("out_z", score(ref.out_z, out_z_raw, p.dtype, tol.rtol, tol.atol),
                                  budget, floor));
  if (p.return_last_state && last_state != nullptr) {
    const Tolerance t32 = mamba_tolerance(DType::kF32);
    const double floor32 = rounding_floor(ref.last_state, DType::kF32);
    r.push_back(make_output_score(
        "last_state", score(ref.last_state, last_state, DType::kF32, t32.rtol, t32.atol),
        budget_for(DType::kF32, acc_is_fp64, floor32), floor32));
  }
  return r;
}

FwdRunScore score_run(const FwdProblem& p, bool acc_is_fp64, const FwdHostOutputs& ref,
                      const void* out_raw, const void* out_z_raw, const float* last_state) {
  FwdRunScore r;
  r.outputs = score_fwd_run(p, acc_is_fp64, ref, out_raw, out_z_raw, last_state);
  r.verdict = worst_verdict(r.outputs);
  for (const OutputScore& o : r.outputs) {
    if (o.name == "out") {
      r.out = o.stats;
      r.floor = o.floor;
      r.budget = o.budget;
    } else if (o.name == "out_z") {
      r.out_z = o.stats;
      r.has_out_z = true;
    } else {
      r.last_state = o.stats;
      r.has_last_state = true;
    }
  }
  return r;
}

}  // namespace ssmtune
