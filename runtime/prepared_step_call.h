// A prepared decode step (the C ABI's ssmtune_step_plan): a step call's
// layout validated once and bound to its compiled kernel, so a launch only
// checks the pointers it is given, fills the kernel params and enqueues one
// kernel (a decode loop makes this call per layer and token). Immutable
// once made; bind is thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/launch_checks.h"
#include "runtime/selector.h"
#include "runtime/step_call_args.h"
#include "tuner/step/runner.h"

namespace ssmtune {

class Runtime;

inline constexpr int kStepTensorCount = SSMTUNE_STEP_NUM_TENSORS;

// The layout of a step call: tensor i is present when its rank is > 0 (data
// is ignored). The same checks as read_step_call, bar the pointers'.
Result<StepCallProblem> read_step_layout(const ssmtune_step_args& layout);

// The cache key of a step layout (launch_checks.h's layout_key).
std::vector<int64_t> step_layout_key(const ssmtune_step_args& layout);

class PreparedStepCall {
 public:
  PreparedStepCall(Runtime* owner, StepCallProblem layout, StepChoice choice,
                   std::shared_ptr<const step::StepKernel> kernel);

  // Kernel params for these pointers (in ssmtune_step_args order): presence
  // as prepared, alignment (the indices' to their element size), the state
  // and out overlapping nothing; the vector switches follow the pointers.
  // Errors name the argument.
  Result<ssmtune_kernels::SsmStepParams> bind(const void* const* ptrs) const;

  Runtime* owner() const { return owner_; }
  const step::StepProblem& problem() const { return layout_.problem; }
  const StepChoice& choice() const { return choice_; }
  const step::StepKernel& kernel() const { return *kernel_; }

 private:
  Runtime* owner_;
  StepCallProblem layout_;
  StepChoice choice_;
  std::shared_ptr<const step::StepKernel> kernel_;
  std::array<PointerSlot, kStepTensorCount> slots_;
};

}  // namespace ssmtune
