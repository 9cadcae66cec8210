// Step layout validation, its key, and binding pointers to a prepared step.
#include "runtime/prepared_step_call.h"

#include <string>

namespace ssmtune {
namespace {

using A = ssmtune_step_args;
using T = step::StepTensors;

constexpr ssmtune_tensor A::*kArgSlots[kStepTensorCount] = {
    &A::state,   &A::x,   &A::dt,           &A::A, &A::B, &A::C, &A::D, &A::z,
    &A::dt_bias, &A::out, &A::state_indices};
constexpr TensorArg T::*kSlots[kStepTensorCount - 1] = {
    &T::state, &T::x, &T::dt, &T::A, &T::B, &T::C, &T::D, &T::z, &T::dt_bias, &T::out};
constexpr const char* kNames[kStepTensorCount] = {
    "state", "x", "dt", "A", "B", "C", "D", "z", "dt_bias", "out", "state_indices"};

}  // namespace

Result<StepCallProblem> read_step_layout(const ssmtune_step_args& layout) {
  ssmtune_step_args a = layout;
  for (int i = 0; i < kStepTensorCount; ++i) {
    ssmtune_tensor& t = a.*kArgSlots[i];
    t.data = t.rank > 0 ? layout_placeholder(i) : nullptr;
  }
  return read_step_call(a);
}

std::vector<int64_t> step_layout_key(const ssmtune_step_args& layout) {
  const ssmtune_tensor* tensors[kStepTensorCount];
  for (int i = 0; i < kStepTensorCount; ++i) tensors[i] = &(layout.*kArgSlots[i]);
  return layout_key(tensors, kStepTensorCount, layout.dt_softplus);
}

PreparedStepCall::PreparedStepCall(Runtime* owner, StepCallProblem layout, StepChoice choice,
                                   std::shared_ptr<const step::StepKernel> kernel)
    : owner_(owner), layout_(layout), choice_(std::move(choice)), kernel_(std::move(kernel)) {
  for (int i = 0; i < kStepTensorCount - 1; ++i) {
    const bool written = i == SSMTUNE_STEP_STATE || i == SSMTUNE_STEP_OUT;
    slots_[static_cast<size_t>(i)] = pointer_slot(layout_.tensors.*kSlots[i], written);
  }
  slots_[SSMTUNE_STEP_STATE_INDICES] =
      pointer_slot(step::index_words(layout_.tensors.state_indices), false);
}

Result<ssmtune_kernels::SsmStepParams> PreparedStepCall::bind(const void* const* ptrs) const {
  SSMTUNE_RETURN_IF_ERROR(check_pointers(slots_.data(), kNames, kStepTensorCount, ptrs));
  step::StepTensors t = layout_.tensors;
  for (int i = 0; i < kStepTensorCount - 1; ++i)
    if (slots_[static_cast<size_t>(i)].present) (t.*kSlots[i]).data = ptrs[i];
  if (t.state_indices.present()) {
    t.state_indices.data = ptrs[SSMTUNE_STEP_STATE_INDICES];
    if (reinterpret_cast<uintptr_t>(t.state_indices.data) %
            static_cast<uintptr_t>(t.state_indices.bytes) !=
        0)
      return Status::invalid_argument("state_indices: pointer is not aligned to " +
                                      std::to_string(t.state_indices.bytes) + " bytes");
  }
  return step::make_params(layout_.problem, t, choice_.config);
}

}  // namespace ssmtune
