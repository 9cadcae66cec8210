// Accuracy of one kernel run against the fp64 reference: error statistics
// of each output (with unwritten and non-finite elements told apart through
// a poison pattern written before the run), mamba_ssm's tolerances, the
// error budgets of docs/accuracy.md, and the verdict. Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tuner/dtype.h"

namespace ssmtune {

// Quiet NaNs with a payload no arithmetic produces (NaNs computed on the GPU
// carry the canonical payload), written into every output before a kernel
// runs: an element still holding these bits was never written.
inline constexpr uint32_t kPoisonF32 = 0x7FC0ADDEu;
inline constexpr uint16_t kPoisonF16 = 0x7E5Au;
inline constexpr uint16_t kPoisonBF16 = 0x7FDAu;
// The little-endian bytes of one poisoned element of `dtype`.
std::vector<unsigned char> poison_pattern(DType dtype);

struct ErrorStats {
  int64_t count = 0;      // elements compared
  int64_t unwritten = 0;  // raw bits equal to the poison pattern
  int64_t nan_inf = 0;    // other non-finite values
  double rel_l2 = 0;      // ||got - ref|| / ||ref||; +inf if any element is unwritten or non-finite
  double max_abs = 0;     // max |got - ref| over finite elements
  double max_abs_over_max_ref = 0;  // max_abs / max |ref|
  double max_rel = 0;  // max |got - ref| / |ref| over elements with |ref| > 1e-3 * max |ref|
  int64_t allclose_failures = 0;  // elements failing |got - ref| <= atol + rtol * |ref| (as torch;
                                  // unwritten and non-finite elements fail)
};

// `raw` holds ref.size() elements of `dtype` as downloaded from the device.
ErrorStats score(const std::vector<double>& ref, const void* raw, DType dtype, double rtol,
                 double atol);
// The same with max |ref| given (max_abs(ref)): a bench that scores many
// runs against one reference computes it once.
ErrorStats score(const std::vector<double>& ref, double max_abs_ref, const void* raw, DType dtype,
                 double rtol, double atol);
// max |v| (0 for none), in parallel.
double max_abs(const std::vector<double>& v);
// Already decoded values (no poison check: unwritten stays 0, NaN/Inf count
// in nan_inf). got.size() must equal ref.size().
ErrorStats score(const std::vector<double>& ref, const std::vector<double>& got, double rtol,
                 double atol);

// mamba_ssm's test tolerances for the forward outputs, per input dtype:
// fp32 rtol 6e-4 atol 2e-3; fp16 3e-3, 5e-3; bf16 3e-2, 5e-2.
struct Tolerance {
  double rtol, atol;
};
Tolerance mamba_tolerance(DType dtype);

// Rel. L2 error of `ref` rounded to `dtype` against `ref`: the error of an
// exact result stored in that dtype, below which no kernel can go (on randn-like
// data about 1.7e-3 for bf16, 2.1e-4 for fp16, 2.5e-8 for fp32).
double rounding_floor(const std::vector<double>& ref, DType dtype);

// Largest rel. L2 error a config may have and still be selected, and the
// factor past which its error is a defect (a bug), not precision.
struct ErrorBudget {
  double rel_l2;
  double defect_factor;
};
// rel_l2: the arithmetic budget of the accumulation dtype plus 1.5 * floor
// for the output rounding. defect_factor: 10 for fp32 accumulation; for fp64
// it is scaled so that the defect line is the fp32 one (10 * the fp32
// budget): an fp64 config as imprecise as an fp32 one is outside, not
// broken. The numbers and their reasons are in docs/accuracy.md.
inline constexpr double kAccBudgetF32 = 1e-4;
inline constexpr double kAccBudgetF64 = 1e-6;
inline constexpr double kDefectFactor = 10;
ErrorBudget budget_for(DType input, bool acc_is_fp64, double floor);

enum class Verdict {
  kInside,   // within the budget
  kAtLimit,  // within 1.25 * floor: the error is the output rounding itself
  kOutside,  // over the budget (precision: not selected)
  kDefect,   // unwritten or non-finite elements, or over defect_factor * budget
};
const char* to_string(Verdict v);  // "inside", "at-limit", "outside", "defect"

// floor as rounding_floor gives it for the output's dtype; pass 0 to never
// report at-limit.
Verdict classify(const ErrorStats& stats, const ErrorBudget& budget, double floor);
// The worse of two verdicts: defect > outside > inside > at-limit.
Verdict worst(Verdict a, Verdict b);

// One named output of a run ("out", "du", ...) scored against fp64: its
// statistics, the budget and floor it was judged by, and the verdict.
struct OutputScore {
  std::string name;
  ErrorStats stats;
  ErrorBudget budget{0, kDefectFactor};
  double floor = 0;
  Verdict verdict = Verdict::kInside;
};
// Scores `stats` against (budget, floor) under `name`.
OutputScore make_output_score(std::string name, const ErrorStats& stats, const ErrorBudget& budget,
                              double floor);
// The worst verdict over the outputs (kInside for none).
Verdict worst_verdict(const std::vector<OutputScore>& outputs);
// The output with the largest rel_l2 / budget (null for none).
const OutputScore* headline(const std::vector<OutputScore>& outputs);

}  // namespace ssmtune
