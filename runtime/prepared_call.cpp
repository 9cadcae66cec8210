// Layout validation, the layout key, and binding pointers to a prepared call.
#include "runtime/prepared_call.h"

#include "runtime/saved_states.h"
#include "ssm/bwd/bwd_params.cuh"
#include "tuner/fwd/algorithms.h"

namespace ssmtune {
namespace {

constexpr ssmtune_tensor ssmtune_fwd_args::*kArgSlots[kFwdTensorCount] = {
    &ssmtune_fwd_args::u,   &ssmtune_fwd_args::delta,      &ssmtune_fwd_args::A,
    &ssmtune_fwd_args::B,   &ssmtune_fwd_args::C,          &ssmtune_fwd_args::D,
    &ssmtune_fwd_args::z,   &ssmtune_fwd_args::delta_bias, &ssmtune_fwd_args::h0,
    &ssmtune_fwd_args::out, &ssmtune_fwd_args::out_z,      &ssmtune_fwd_args::last_state};
constexpr TensorArg FwdTensors::*kSlots[kFwdTensorCount] = {
    &FwdTensors::u,  &FwdTensors::delta, &FwdTensors::A,     &FwdTensors::B,
    &FwdTensors::C,  &FwdTensors::D,     &FwdTensors::z,     &FwdTensors::delta_bias,
    &FwdTensors::h0, &FwdTensors::out,   &FwdTensors::out_z, &FwdTensors::last_state};
constexpr const char* kNames[kFwdTensorCount] = {
    "u", "delta", "A", "B", "C", "D", "z", "delta_bias", "h0", "out", "out_z", "last_state"};
constexpr int kFirstOutput = SSMTUNE_FWD_OUT;

}  // namespace

Result<CallProblem> read_layout(const ssmtune_fwd_args& layout) {
  ssmtune_fwd_args a = layout;
  for (int i = 0; i < kFwdTensorCount; ++i) {
    ssmtune_tensor& t = a.*kArgSlots[i];
    t.data = t.rank > 0 ? layout_placeholder(i) : nullptr;
  }
  return read_call(a);
}

std::vector<int64_t> layout_key(const ssmtune_fwd_args& layout) {
  const ssmtune_tensor* tensors[kFwdTensorCount];
  for (int i = 0; i < kFwdTensorCount; ++i) tensors[i] = &(layout.*kArgSlots[i]);
  return layout_key(tensors, kFwdTensorCount, layout.delta_softplus);
}

PreparedCall::PreparedCall(Runtime* owner, CallProblem layout, ConfigChoice choice,
                           std::shared_ptr<const FwdKernel> kernel)
    : owner_(owner), layout_(layout), choice_(std::move(choice)), kernel_(std::move(kernel)) {
  for (int i = 0; i < kFwdTensorCount; ++i)
    slots_[i] = pointer_slot(layout_.tensors.*kSlots[i], i >= kFirstOutput);
}

size_t PreparedCall::flags_offset() const {
  const size_t carries = kernel_->plan().carries_bytes;
  return (carries + 255) / 256 * 256;
}

size_t PreparedCall::scratch_bytes() const {
  const FwdPlan& p = kernel_->plan();
  if (p.carries_bytes == 0 && p.flags_bytes == 0) return 0;
  return flags_offset() + p.flags_bytes;
}

size_t PreparedCall::states_bytes(int interval) const {
  const FwdAlgorithm* algo = find_fwd_algorithm(choice_.config.algo);
  if (algo == nullptr || !algo->saves_states() || !bwd::valid_states_interval(interval) ||
      interval % algo->checkpoint_step(choice_.config) != 0)
    return 0;
  const FwdProblem& p = layout_.problem;
  return static_cast<size_t>(
      ssmtune_kernels::bwd_ckpt_bytes(p.batch, p.dim, p.dstate, p.seqlen, interval, 4));
}

Result<ssmtune_kernels::SsmFwdParams> PreparedCall::bind(const void* const* ptrs) const {
  SSMTUNE_RETURN_IF_ERROR(check_pointers(slots_.data(), kNames, kFwdTensorCount, ptrs));
  FwdTensors t = layout_.tensors;
  for (int i = 0; i < kFwdTensorCount; ++i)
    if (slots_[i].present) (t.*kSlots[i]).data = ptrs[i];
  return make_params(layout_.problem, t);
}

}  // namespace ssmtune
