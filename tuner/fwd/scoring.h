// Scoring one forward run: out and out_z in the problem's dtype, judged by
// its budget (floor: the larger of their floors), and last_state (fp32) by
// the fp32 budget; allclose counts use mamba_ssm's tolerances. Pure.
#pragma once

#include <vector>

#include "tuner/accuracy.h"
#include "tuner/fwd/problem.h"
#include "tuner/fwd/reference_cpu.h"

namespace ssmtune {

// What scoring needs of a reference besides its values (rounding floors,
// max |ref| per output): a pass over every element, so a bench that scores
// many runs computes it once.
struct FwdRefSummary {
  double floor = 0;       // out's and out_z's, the larger, in the problem's dtype
  double floor_last = 0;  // last_state's, in fp32
  double max_out = 0, max_out_z = 0, max_last = 0;
};
FwdRefSummary summarize_reference(const FwdProblem& p, const FwdHostOutputs& ref);

// Named outputs "out", then "out_z" and "last_state" when the problem has
// them and the pointer is not null.
std::vector<OutputScore> score_fwd_run(const FwdProblem& p, bool acc_is_fp64,
                                       const FwdHostOutputs& ref, const void* out_raw,
                                       const void* out_z_raw, const float* last_state);
// The same with the reference's summary given (the same scores).
std::vector<OutputScore> score_fwd_run(const FwdProblem& p, bool acc_is_fp64,
                                       const FwdHostOutputs& ref, const FwdRefSummary& summary,
                                       const void* out_raw, const void* out_z_raw,
                                       const float* last_state);

// The same run as a struct of its three outputs (tests and the CLI tables
// read them by name); `outputs` holds score_fwd_run's list.
struct FwdRunScore {
  ErrorStats out, out_z, last_state;
  bool has_out_z = false, has_last_state = false;
  Verdict verdict = Verdict::kInside;
  double floor = 0;
  ErrorBudget budget{0, kDefectFactor};
  std::vector<OutputScore> outputs;
};
FwdRunScore score_run(const FwdProblem& p, bool acc_is_fp64, const FwdHostOutputs& ref,
                      const void* out_raw, const void* out_z_raw, const float* last_state);

}  // namespace ssmtune
