// Forward run scoring.
#include "tuner/fwd/scoring.h"

#include <algorithm>

namespace ssmtune {

FwdRefSummary summarize_reference(const FwdProblem& p, const FwdHostOutputs& ref) {
  FwdRefSummary s;
  s.floor = rounding_floor(ref.out, p.dtype);
  s.max_out = max_abs(ref.out);
  if (p.has_z) {
    s.floor = std::max(s.floor, rounding_floor(ref.out_z, p.dtype));
    s.max_out_z = max_abs(ref.out_z);
  }
  if (p.return_last_state) {
    s.floor_last = rounding_floor(ref.last_state, DType::kF32);
    s.max_last = max_abs(ref.last_state);
  }
  return s;
}

std::vector<OutputScore> score_fwd_run(const FwdProblem& p, bool acc_is_fp64,
                                       const FwdHostOutputs& ref, const void* out_raw,
                                       const void* out_z_raw, const float* last_state) {
  FwdRefSummary summary = summarize_reference(p, ref);
  if (p.has_z && out_z_raw == nullptr) summary.floor = rounding_floor(ref.out, p.dtype);
  return score_fwd_run(p, acc_is_fp64, ref, summary, out_raw, out_z_raw, last_state);
}

std::vector<OutputScore> score_fwd_run(const FwdProblem& p, bool acc_is_fp64,
                                       const FwdHostOutputs& ref, const FwdRefSummary& summary,
                                       const void* out_raw, const void* out_z_raw,
                                       const float* last_state) {
  std::vector<OutputScore> r;
  const Tolerance tol = mamba_tolerance(p.dtype);
  const bool has_out_z = p.has_z && out_z_raw != nullptr;
  const double floor = summary.floor;
  const ErrorBudget budget = budget_for(p.dtype, acc_is_fp64, floor);
  r.push_back(make_output_score(
      "out", score(ref.out, summary.max_out, out_raw, p.dtype, tol.rtol, tol.atol), budget, floor));
  if (has_out_z)
    r.push_back(make_output_score(
        "out_z", score(ref.out_z, summary.max_out_z, out_z_raw, p.dtype, tol.rtol, tol.atol),
        budget, floor));
  if (p.return_last_state && last_state != nullptr) {
    const Tolerance t32 = mamba_tolerance(DType::kF32);
    const double floor32 = summary.floor_last;
    r.push_back(make_output_score(
        "last_state",
        score(ref.last_state, summary.max_last, last_state, DType::kF32, t32.rtol, t32.atol),
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
