// Layout validation, the layout key, and binding pointers to a prepared call.
#include "runtime/prepared_call.h"

#include <cstdio>
#include <string>

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

// Placeholder addresses for layout checks: 2^44 bytes apart (more than any
// tensor spans), aligned to 16, so read_call's pointer checks pass.
const void* placeholder(int slot) {
  return reinterpret_cast<const void*>(static_cast<uintptr_t>(slot + 1) << 44);
}

std::string pointer_text(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

}  // namespace

Result<CallProblem> read_layout(const ssmtune_fwd_args& layout) {
  ssmtune_fwd_args a = layout;
  for (int i = 0; i < kFwdTensorCount; ++i) {
    ssmtune_tensor& t = a.*kArgSlots[i];
    t.data = t.rank > 0 ? placeholder(i) : nullptr;
  }
  return read_call(a);
}

std::vector<int64_t> layout_key(const ssmtune_fwd_args& layout) {
  std::vector<int64_t> key;
  key.reserve(kFwdTensorCount * 10 + 1);
  for (int i = 0; i < kFwdTensorCount; ++i) {
    const ssmtune_tensor& t = layout.*kArgSlots[i];
    const int rank = t.rank < 0 ? 0 : t.rank > 4 ? 4 : t.rank;
    key.push_back(t.rank);
    if (t.rank <= 0) continue;
    key.push_back(t.dtype);
    for (int d = 0; d < rank; ++d) key.push_back(t.shape[d]);
    for (int d = 0; d < rank; ++d) key.push_back(t.stride[d]);
  }
  key.push_back(layout.delta_softplus != 0);
  return key;
}

PreparedCall::PreparedCall(Runtime* owner, CallProblem layout, ConfigChoice choice,
                           std::shared_ptr<const FwdKernel> kernel)
    : owner_(owner),
      layout_(std::move(layout)),
      choice_(std::move(choice)),
      kernel_(std::move(kernel)) {
  for (int i = 0; i < kFwdTensorCount; ++i) {
    const TensorArg& t = layout_.tensors.*kSlots[i];
    Slot& s = slots_[i];
    s.present = t.present();
    s.output = i >= kFirstOutput;
    if (!s.present) continue;
    s.elem_bytes = dtype_bytes(t.dtype);
    uint64_t last = 0;  // read_layout checked that the sizes fit int64 bytes
    for (int d = 0; d < t.rank; ++d)
      last += static_cast<uint64_t>(t.shape[d] - 1) * static_cast<uint64_t>(t.stride[d]);
    s.last_byte = last * static_cast<uint64_t>(s.elem_bytes) + s.elem_bytes - 1;
  }
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

Result<ssmtune_kernels::SsmFwdParams> PreparedCall::bind(const void* const* ptrs) const {
  FwdTensors t = layout_.tensors;
  for (int i = 0; i < kFwdTensorCount; ++i) {
    const Slot& s = slots_[i];
    const void* p = ptrs[i];
    if (s.present != (p != nullptr))
      return Status::invalid_argument(
          std::string(kNames[i]) +
          (s.present ? ": the plan was prepared with this tensor, got a null pointer"
                     : ": given, but the plan was prepared without it"));
    if (!s.present) continue;
    if (reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(s.elem_bytes) != 0)
      return Status::invalid_argument(std::string(kNames[i]) + ": pointer " + pointer_text(p) +
                                      " is not aligned to " + std::to_string(s.elem_bytes) +
                                      " bytes (the element size)");
    (t.*kSlots[i]).data = p;
  }
  // Outputs overlap neither inputs nor each other (kernels read inputs after
  // writing earlier chunks' outputs).
  for (int o = kFirstOutput; o < kFwdTensorCount; ++o) {
    if (!slots_[o].present) continue;
    const uintptr_t olo = reinterpret_cast<uintptr_t>(ptrs[o]);
    const uintptr_t ohi = olo + slots_[o].last_byte;
    for (int i = 0; i < o; ++i) {
      if (!slots_[i].present) continue;
      const uintptr_t lo = reinterpret_cast<uintptr_t>(ptrs[i]);
      const uintptr_t hi = lo + slots_[i].last_byte;
      if (olo <= hi && lo <= ohi)
        return Status::invalid_argument(std::string(kNames[o]) + ": overlaps " +
                                        (slots_[i].output ? "output " : "input ") + kNames[i]);
    }
  }
  return make_params(layout_.problem, t);
}

}  // namespace ssmtune
