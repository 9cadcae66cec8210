// The backward budgets; their numbers and reasons are in docs/accuracy.md.
#include "tuner/bwd/accuracy.h"

namespace ssmtune::bwd {

bool is_bwd_grad(const std::string& grad) {
  for (const char* name : kBwdGradNames)
    if (grad == name) return true;
  return false;
}

bool is_bwd_sum_grad(const std::string& grad) {
  return grad == "dA" || grad == "dB" || grad == "dC" || grad == "dD" || grad == "ddelta_bias" ||
         grad == "dh0";
}

DType bwd_grad_dtype(const std::string& grad, const FwdProblem& p) {
  if (grad == "du" || grad == "ddelta" || grad == "dz") return p.dtype;
  if (grad == "dB") return p.variable_b ? p.dtype : DType::kF32;
  if (grad == "dC") return p.variable_c ? p.dtype : DType::kF32;
  return DType::kF32;
}

ErrorBudget bwd_budget_for(const std::string& grad, DType /*input*/, bool acc_fp64, double floor) {
  // As the forward: half inputs are computed in fp32 (or fp64) like fp32
  // ones; the input dtype changes only the rounding of the stored gradient.
  const bool sum = is_bwd_sum_grad(grad);
  // dz is dout * y * silu'(z) with y the saved forward output, stored in the
  // input dtype: it carries y's rounding as well as its own (measured on the
  // H200: fp16 dz at 1.6 x its floor with fp64 accumulation, the fp64
  // reference using the exact y), so two floors.
  const double floors = grad == "dz" ? 2.5 : 1.5;
  const double f32 = (sum ? kBwdSumBudgetF32 : kBwdElementBudgetF32) + floors * floor;
  if (!acc_fp64) return {f32, kDefectFactor};
  const double f64 = (sum ? kBwdSumBudgetF64 : kBwdElementBudgetF64) + floors * floor;
  return {f64, kDefectFactor * f32 / f64};
}

}  // namespace ssmtune::bwd
