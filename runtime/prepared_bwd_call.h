// A prepared backward call (the C ABI's ssmtune_bwd_plan): a backward call's
// layout validated once and bound to its compiled kernels, so a launch only
// checks the pointers it is given, fills the kernel params and enqueues.
// Immutable once made; bind is thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/call_args.h"
#include "runtime/launch_checks.h"
#include "runtime/selector.h"
#include "tuner/bwd/runner.h"

namespace ssmtune {

class Runtime;

inline constexpr int kBwdTensorCount = SSMTUNE_BWD_NUM_TENSORS;

// The layout of a backward call: tensor i is present when its rank is > 0
// (data is ignored). The same checks as read_bwd_call, bar the pointers'.
Result<BwdCallProblem> read_bwd_layout(const ssmtune_bwd_args& layout);

// The cache key of a backward layout (launch_checks.h's layout_key).
std::vector<int64_t> bwd_layout_key(const ssmtune_bwd_args& layout);

class PreparedBwdCall {
 public:
  // `layout` as read_bwd_layout read `args` (args tells which tensors the
  // layout gives, including an `out` that is ignored without z).
  PreparedBwdCall(Runtime* owner, const ssmtune_bwd_args& args, BwdCallProblem layout,
                  BwdChoice choice, std::shared_ptr<const bwd::BwdKernel> kernel);

  // Kernel params for these pointers (in ssmtune_bwd_args order): presence
  // as prepared, element alignment, no output overlapping another tensor;
  // the vector-access switch follows the pointers. Errors name the argument.
  Result<ssmtune_kernels::SsmBwdParams> bind(const void* const* ptrs) const;

  // Caller-provided scratch: the plan's layout (partial sums, checkpoints).
  size_t scratch_bytes() const;
  // The scratch of a launch given saved states: the layout up to the
  // checkpoints, which come last.
  size_t states_scratch_bytes() const;

  // Training: the chunk (timesteps) of the states this plan can take from
  // the forward instead of recomputing them (PreparedCall::states_bytes),
  // or 0 when it takes none (fp64 accumulation, a chunk that is not a power
  // of two, a single chunk).
  int states_interval() const;

  Runtime* owner() const { return owner_; }
  const bwd::BwdProblem& problem() const { return layout_.problem; }
  const BwdChoice& choice() const { return choice_; }
  const bwd::BwdKernel& kernel() const { return *kernel_; }

 private:
  Runtime* owner_;
  BwdCallProblem layout_;
  BwdChoice choice_;
  std::shared_ptr<const bwd::BwdKernel> kernel_;
  std::array<PointerSlot, kBwdTensorCount> slots_;
};

}  // namespace ssmtune
