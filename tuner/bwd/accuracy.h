// Error budgets of the backward's gradients (docs/accuracy.md, "Backward"):
// which dtype each gradient is stored in, and the rel-L2 budget it is held
// to, per gradient tensor, on top of the forward's scoring (tuner/accuracy.h).
// Pure functions.
#pragma once

#include <string>

#include "tuner/accuracy.h"
#include "tuner/fwd/problem.h"

namespace ssmtune::bwd {

// The gradients, by the names of BwdHostGrads' members.
inline constexpr const char* kBwdGradNames[] = {"du", "ddelta",      "dA", "dB", "dC",
                                                "dD", "ddelta_bias", "dz", "dh0"};

// Arithmetic budgets (fp32 accumulation, then fp64) of the gradients that
// are one recurrence deep per element (du, ddelta, dz: the forward's own
// budget), and of those that sum along the whole sequence or over
// channels and batches, or end the reverse scan (dA, dB, dC, dD,
// ddelta_bias, dh0).
inline constexpr double kBwdElementBudgetF32 = 1e-4;
inline constexpr double kBwdSumBudgetF32 = 3e-4;
inline constexpr double kBwdElementBudgetF64 = 1e-6;
inline constexpr double kBwdSumBudgetF64 = 3e-6;

// True for the names in kBwdGradNames.
bool is_bwd_grad(const std::string& grad);
// True for the gradients with the looser (sum) budget.
bool is_bwd_sum_grad(const std::string& grad);

// The dtype a kernel stores `grad` in: du, ddelta, dz and variable dB/dC in
// the input dtype; dA, dD, ddelta_bias, dh0 and constant dB/dC in fp32.
// This is the dtype whose rounding_floor applies to it.
DType bwd_grad_dtype(const std::string& grad, const FwdProblem& p);

// rel_l2: the gradient's arithmetic budget plus 1.5 * floor (floor:
// rounding_floor of the fp64 gradient in bwd_grad_dtype). defect_factor: 10
// with fp32 accumulation; with fp64 scaled so that the defect line is the
// fp32 one (as budget_for does). The input dtype enters only through the
// floor. A name outside kBwdGradNames gets the element budget.
ErrorBudget bwd_budget_for(const std::string& grad, DType input, bool acc_fp64, double floor);

}  // namespace ssmtune::bwd
