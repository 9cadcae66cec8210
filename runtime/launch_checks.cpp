// Pointer checks of prepared launches, layout keys.
#include "runtime/launch_checks.h"

#include <cstdio>

namespace ssmtune {
namespace {

std::string pointer_text(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

}  // namespace

PointerSlot pointer_slot(const TensorArg& t, bool output) {
  PointerSlot s;
  s.output = output;
  s.present = t.present();
  if (!s.present) return s;
  s.elem_bytes = dtype_bytes(t.dtype);
  uint64_t last = 0;
  for (int d = 0; d < t.rank; ++d)
    last += static_cast<uint64_t>(t.shape[d] - 1) * static_cast<uint64_t>(t.stride[d]);
  s.last_byte = last * static_cast<uint64_t>(s.elem_bytes) + s.elem_bytes - 1;
  return s;
}

Status check_pointers(const PointerSlot* slots, const char* const* names, int count,
                      const void* const* ptrs) {
  for (int i = 0; i < count; ++i) {
    const PointerSlot& s = slots[i];
    const void* p = ptrs[i];
    if (s.present != (p != nullptr))
      return Status::invalid_argument(
          std::string(names[i]) +
          (s.present ? ": the plan was prepared with this tensor, got a null pointer"
                     : ": given, but the plan was prepared without it"));
    if (!s.present || s.ignored) continue;
    if (reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(s.elem_bytes) != 0)
      return Status::invalid_argument(std::string(names[i]) + ": pointer " + pointer_text(p) +
                                      " is not aligned to " + std::to_string(s.elem_bytes) +
                                      " bytes (the element size)");
  }
  // Outputs overlap neither inputs nor each other (kernels read inputs after
  // writing other outputs).
  for (int o = 0; o < count; ++o) {
    if (!slots[o].present || !slots[o].output || slots[o].ignored) continue;
    const uintptr_t olo = reinterpret_cast<uintptr_t>(ptrs[o]);
    const uintptr_t ohi = olo + slots[o].last_byte;
    for (int i = 0; i < count; ++i) {
      if (i == o || !slots[i].present || slots[i].ignored) continue;
      if (slots[i].output && i > o) continue;  // each pair of outputs once
      const uintptr_t lo = reinterpret_cast<uintptr_t>(ptrs[i]);
      const uintptr_t hi = lo + slots[i].last_byte;
      if (olo <= hi && lo <= ohi)
        return Status::invalid_argument(std::string(names[o]) + ": overlaps " +
                                        (slots[i].output ? "output " : "input ") + names[i]);
    }
  }
  return Status::ok();
}

const void* layout_placeholder(int slot) {
  return reinterpret_cast<const void*>(static_cast<uintptr_t>(slot + 1) << 44);
}

std::vector<int64_t> layout_key(const ssmtune_tensor* const* tensors, int count,
                                int32_t delta_softplus) {
  std::vector<int64_t> key;
  key.reserve(static_cast<size_t>(count) * 10 + 1);
  for (int i = 0; i < count; ++i) {
    const ssmtune_tensor& t = *tensors[i];
    const int rank = t.rank < 0 ? 0 : t.rank > 4 ? 4 : t.rank;
    key.push_back(t.rank);
    if (t.rank <= 0) continue;
    key.push_back(t.dtype);
    for (int d = 0; d < rank; ++d) key.push_back(t.shape[d]);
    for (int d = 0; d < rank; ++d) key.push_back(t.stride[d]);
  }
  key.push_back(delta_softplus != 0);
  return key;
}

}  // namespace ssmtune
