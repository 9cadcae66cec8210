// Decode-step plans.
#include "tuner/step/plan.h"

#include <sstream>

namespace ssmtune::step {
std::string traits_expression(const StepProblem& p, const StepConfig& c) {
  auto b = [](bool v) { return v ? "true" : "false"; };
  std::ostringstream os;
  os << "ssmtune_kernels::StepTraits<" << cuda_type_name(p.dtype) << ", "
     << cuda_type_name(p.state_dtype) << ", " << (c.acc == StepAcc::kF64 ? "double" : "float")
     << ", " << p.dstate << ", " << c.d_step << ", " << c.lanes << ", " << c.vec << ", "
     << b(p.has_d) << ", " << b(p.has_z) << ", " << b(p.has_dt_bias) << ", " << b(p.softplus)
     << ", " << b(p.has_indices) << ">";
  return os.str();
}

Result<StepPlan> plan_step(const StepProblem& p, const StepConfig& c) {
  SSMTUNE_RETURN_IF_ERROR(p.validate());
  SSMTUNE_RETURN_IF_ERROR(check_config(p, c));
  const int64_t tiles = (p.headdim + c.d_step - 1) / c.d_step;
  if (tiles * p.heads > 2147483647)
    return Status::invalid_argument("config " + c.key() + ": " + std::to_string(tiles * p.heads) +
                                    " blocks over the grid's x limit");
  StepPlan plan;
  plan.kernel = {kStepHeader, "ssmtune_kernels::ssm_step<" + traits_expression(p, c) + ">"};
  plan.grid = jit::Dim3{static_cast<unsigned>(tiles * p.heads), static_cast<unsigned>(p.batch)};
  plan.block = jit::Dim3{static_cast<unsigned>(c.threads())};
  return plan;
}

}  // namespace ssmtune::step
