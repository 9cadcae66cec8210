// Backward layout validation, its key, and binding pointers to a prepared call.
#include "runtime/prepared_bwd_call.h"

#include "runtime/saved_states.h"

namespace ssmtune {
namespace {

using A = ssmtune_bwd_args;
using T = bwd::BwdTensors;

constexpr ssmtune_tensor A::*kArgSlots[kBwdTensorCount] = {
    &A::u,          &A::delta, &A::A,   &A::B,    &A::C,     &A::D,           &A::z,
    &A::delta_bias, &A::h0,    &A::out, &A::dout, &A::dlast, &A::du,          &A::ddelta,
    &A::dA,         &A::dB,    &A::dC,  &A::dD,   &A::dz,    &A::ddelta_bias, &A::dh0};
constexpr TensorArg T::*kSlots[kBwdTensorCount] = {
    &T::u,          &T::delta, &T::A,   &T::B,    &T::C,     &T::D,           &T::z,
    &T::delta_bias, &T::h0,    &T::out, &T::dout, &T::dlast, &T::du,          &T::ddelta,
    &T::dA,         &T::dB,    &T::dC,  &T::dD,   &T::dz,    &T::ddelta_bias, &T::dh0};
constexpr const char* kNames[kBwdTensorCount] = {
    "u",     "delta", "A",      "B",  "C",  "D",  "z",  "delta_bias", "h0",          "out", "dout",
    "dlast", "du",    "ddelta", "dA", "dB", "dC", "dD", "dz",         "ddelta_bias", "dh0"};
constexpr int kFirstOutput = SSMTUNE_BWD_DU;

}  // namespace

Result<BwdCallProblem> read_bwd_layout(const ssmtune_bwd_args& layout) {
  ssmtune_bwd_args a = layout;
  for (int i = 0; i < kBwdTensorCount; ++i) {
    ssmtune_tensor& t = a.*kArgSlots[i];
    t.data = t.rank > 0 ? layout_placeholder(i) : nullptr;
  }
  return read_bwd_call(a);
}

std::vector<int64_t> bwd_layout_key(const ssmtune_bwd_args& layout) {
  const ssmtune_tensor* tensors[kBwdTensorCount];
  for (int i = 0; i < kBwdTensorCount; ++i) tensors[i] = &(layout.*kArgSlots[i]);
  return layout_key(tensors, kBwdTensorCount, layout.delta_softplus);
}

PreparedBwdCall::PreparedBwdCall(Runtime* owner, const ssmtune_bwd_args& args,
                                 BwdCallProblem layout, BwdChoice choice,
                                 std::shared_ptr<const bwd::BwdKernel> kernel)
    : owner_(owner), layout_(layout), choice_(std::move(choice)), kernel_(std::move(kernel)) {
  for (int i = 0; i < kBwdTensorCount; ++i) {
    slots_[i] = pointer_slot(layout_.tensors.*kSlots[i], i >= kFirstOutput);
    if (!slots_[i].present && (args.*kArgSlots[i]).rank > 0) {
      slots_[i].present = true;  // given but unused (out without z): a pointer is expected
      slots_[i].ignored = true;
    }
  }
}

size_t PreparedBwdCall::scratch_bytes() const {
  return static_cast<size_t>(kernel_->plan().scratch.bytes);
}

size_t PreparedBwdCall::states_scratch_bytes() const {
  return static_cast<size_t>(kernel_->plan().scratch.ckpt);
}

int PreparedBwdCall::states_interval() const {
  return bwd::states_interval(choice_.config, kernel_->plan());
}

Result<ssmtune_kernels::SsmBwdParams> PreparedBwdCall::bind(const void* const* ptrs) const {
  SSMTUNE_RETURN_IF_ERROR(check_pointers(slots_.data(), kNames, kBwdTensorCount, ptrs));
  bwd::BwdTensors t = layout_.tensors;
  for (int i = 0; i < kBwdTensorCount; ++i)
    if (slots_[i].present && !slots_[i].ignored) (t.*kSlots[i]).data = ptrs[i];
  return bwd::make_params(layout_.problem, t);
}

}  // namespace ssmtune
