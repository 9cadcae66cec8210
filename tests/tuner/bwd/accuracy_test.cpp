// The backward's per-gradient dtypes and budgets.
#include "tuner/bwd/accuracy.h"

#include <catch2/catch.hpp>

#include "support/problems.h"

namespace ssmtune::bwd {
namespace {

TEST_CASE("backward gradients are stored in the dtypes the kernels write", "[bwd]") {
  FwdProblem p = testing::shape(2, 8, 16, 4, DType::kBF16);
  for (const char* g : {"du", "ddelta", "dz", "dB", "dC"})
    CHECK(bwd_grad_dtype(g, p) == DType::kBF16);
  for (const char* g : {"dA", "dD", "ddelta_bias", "dh0"})
    CHECK(bwd_grad_dtype(g, p) == DType::kF32);
  p.variable_b = false;
  CHECK(bwd_grad_dtype("dB", p) == DType::kF32);
  CHECK(bwd_grad_dtype("dC", p) == DType::kBF16);
  p.variable_c = false;
  CHECK(bwd_grad_dtype("dC", p) == DType::kF32);
}

TEST_CASE("backward budgets: element and sum gradients, floors, defect lines", "[bwd]") {
  for (const char* g : kBwdGradNames) CHECK(is_bwd_grad(g));
  CHECK_FALSE(is_bwd_grad("out"));
  CHECK_FALSE(is_bwd_sum_grad("du"));
  CHECK(is_bwd_sum_grad("dA"));

  // fp32 inputs, fp32 accumulation: the floor (~2.5e-8) barely counts.
  const ErrorBudget du = bwd_budget_for("du", DType::kF32, false, 2.5e-8);
  CHECK(du.rel_l2 == Approx(kBwdElementBudgetF32 + 3.75e-8));
  CHECK(du.defect_factor == kDefectFactor);
  // The forward's own budget for one-recurrence-deep gradients.
  CHECK(kBwdElementBudgetF32 == kAccBudgetF32);
  const ErrorBudget dA = bwd_budget_for("dA", DType::kF32, false, 2.5e-8);
  CHECK(dA.rel_l2 > du.rel_l2);
  CHECK(dA.rel_l2 == Approx(kBwdSumBudgetF32 + 3.75e-8));

  // bf16: the floor of the stored gradient dominates.
  const double floor = 1.7e-3;
  const ErrorBudget h = bwd_budget_for("dB", DType::kBF16, false, floor);
  CHECK(h.rel_l2 == Approx(kBwdSumBudgetF32 + 1.5 * floor));

  // fp64 accumulation: a tighter budget, the defect line where fp32's is.
  for (const char* g : kBwdGradNames) {
    INFO(g);
    const ErrorBudget b32 = bwd_budget_for(g, DType::kF16, false, 2e-4);
    const ErrorBudget b64 = bwd_budget_for(g, DType::kF16, true, 2e-4);
    CHECK(b64.rel_l2 < b32.rel_l2);
    CHECK(b64.rel_l2 * b64.defect_factor == Approx(b32.rel_l2 * b32.defect_factor));
  }
  // Unknown names get the element budget.
  CHECK(bwd_budget_for("dq", DType::kF32, false, 0).rel_l2 == kBwdElementBudgetF32);
}

}  // namespace
}  // namespace ssmtune::bwd
