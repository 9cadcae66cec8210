// A prepared forward call (the C ABI's ssmtune_fwd_plan): a call's layout
// (shapes, strides, dtypes, flags) validated once and bound to its compiled
// kernel, so a launch only checks the pointers it is given, fills the
// kernel params and enqueues. Immutable once made; launch is thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/call_args.h"
#include "runtime/launch_checks.h"
#include "runtime/selector.h"
#include "tuner/fwd/runner.h"

namespace ssmtune {

class Runtime;

inline constexpr int kFwdTensorCount = SSMTUNE_FWD_NUM_TENSORS;

// The layout of a call: tensor i is present when its rank is > 0 (data is
// ignored). The same checks as read_call, bar the pointers'.
Result<CallProblem> read_layout(const ssmtune_fwd_args& layout);

// The cache key of a layout: ranks, dtypes, shapes and strides of the
// present tensors, and the softplus flag.
std::vector<int64_t> layout_key(const ssmtune_fwd_args& layout);

class PreparedCall {
 public:
  PreparedCall(Runtime* owner, CallProblem layout, ConfigChoice choice,
               std::shared_ptr<const FwdKernel> kernel);

  // Kernel params for these pointers (in ssmtune_fwd_args order): presence
  // as prepared, element alignment, no output overlapping another tensor;
  // vec4 and align16 follow the pointers. Each error names the argument.
  Result<ssmtune_kernels::SsmFwdParams> bind(const void* const* ptrs) const;

  // Caller-provided scratch layout: carries, then the flag words at
  // flags_offset(); 0 bytes when the config needs none.
  size_t scratch_bytes() const;
  size_t flags_offset() const;

  // Training: the bytes of the states a launch saves for a backward whose
  // chunk is `interval` timesteps (PreparedBwdCall::states_interval); 0
  // when there are none to save (one chunk), the interval is not a power
  // of two >= 4, or this config's algorithm cannot save them.
  size_t states_bytes(int interval) const;

  Runtime* owner() const { return owner_; }
  const FwdProblem& problem() const { return layout_.problem; }
  const ConfigChoice& choice() const { return choice_; }
  const FwdKernel& kernel() const { return *kernel_; }
  const std::shared_ptr<const FwdKernel>& kernel_ptr() const { return kernel_; }

 private:
  Runtime* owner_;
  CallProblem layout_;
  ConfigChoice choice_;
  std::shared_ptr<const FwdKernel> kernel_;
  std::array<PointerSlot, kFwdTensorCount> slots_;
};

}  // namespace ssmtune
