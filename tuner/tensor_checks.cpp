// Tensor checks.
#include "tuner/tensor_checks.h"

#include <algorithm>
#include <cstdio>

namespace ssmtune {
namespace {

// Byte interval [lo, hi] a (validated, present) tensor may touch.
struct Extent {
  unsigned __int128 lo, hi;
};

Extent extent(const TensorArg& t) {
  unsigned __int128 last = 0;
  for (int i = 0; i < t.rank; ++i)
    last += static_cast<unsigned __int128>(t.shape[i] - 1) * static_cast<uint64_t>(t.stride[i]);
  const unsigned bytes = static_cast<unsigned>(dtype_bytes(t.dtype));
  const unsigned __int128 lo = reinterpret_cast<uintptr_t>(t.data);
  return {lo, lo + last * bytes + bytes - 1};
}

}  // namespace

std::string shape_string(int rank, const int64_t* shape) {
  std::string s = "(";
  for (int i = 0; i < rank; ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + ")";
}

Status check_tensor(const TensorRule& r) {
  const TensorArg& t = *r.arg;
  const std::string name = r.name;
  if (!t.present()) {
    if (!r.required) return Status::ok();
    if (r.flag) return Status::invalid_argument(name + ": required when " + r.flag + " is set");
    return Status::invalid_argument(name + ": required, got a null pointer");
  }
  if (!r.required) return Status::invalid_argument(name + ": given, but " + r.flag + " is not set");
  if (std::find(r.dtypes.begin(), r.dtypes.end(), t.dtype) == r.dtypes.end())
    return Status::invalid_argument(name + ": dtype " + to_string(t.dtype) + r.dtype_hint);
  const int rank = static_cast<int>(r.shape.size());
  const std::string expected = shape_string(rank, r.shape.data());
  if (t.rank < 0 || t.rank > 4)
    return Status::invalid_argument(name + ": expected shape " + expected + ", got rank " +
                                    std::to_string(t.rank));
  bool same = t.rank == rank;
  for (int i = 0; same && i < rank; ++i) same = t.shape[i] == r.shape[i];
  if (!same)
    return Status::invalid_argument(name + ": expected shape " + expected + ", got " +
                                    shape_string(t.rank, t.shape));
  if (!r.strided) {
    if (t.stride[rank - 1] != 1)
      return Status::invalid_argument(name +
                                      ": last dimension must be contiguous (stride 1), got " +
                                      std::to_string(t.stride[rank - 1]));
    for (int i = 0; i < rank - 1; ++i)
      if (t.stride[i] < 1)
        return Status::invalid_argument(name + ": stride of dimension " + std::to_string(i) +
                                        " must be >= 1, got " + std::to_string(t.stride[i]));
  } else {
    for (int i = 0; i < rank; ++i) {
      if (t.stride[i] < 0)
        return Status::invalid_argument(name + ": stride of dimension " + std::to_string(i) +
                                        " must be >= 0, got " + std::to_string(t.stride[i]));
      if (r.output && t.shape[i] > 1 && t.stride[i] == 0)
        return Status::invalid_argument(name + ": stride of dimension " + std::to_string(i) +
                                        " is 0 over " + std::to_string(t.shape[i]) +
                                        " elements; an output needs one element per index");
    }
  }
  const int bytes = dtype_bytes(t.dtype);
  if (reinterpret_cast<uintptr_t>(t.data) % bytes != 0) {
    char addr[32];
    std::snprintf(addr, sizeof addr, "%p", t.data);
    return Status::invalid_argument(name + ": pointer " + addr + " is not aligned to " +
                                    std::to_string(bytes) + " bytes (the element size)");
  }
  return Status::ok();
}

Status check_no_overlap(const std::vector<TensorRule>& rules) {
  for (size_t i = 0; i < rules.size(); ++i) {
    const TensorRule& o = rules[i];
    if (!o.output || !o.arg->present()) continue;
    const Extent a = extent(*o.arg);
    for (size_t j = 0; j < rules.size(); ++j) {
      const TensorRule& other = rules[j];
      if (j == i || !other.arg->present()) continue;
      if (other.output && j > i) continue;  // each pair of outputs once
      const Extent b = extent(*other.arg);
      if (a.lo <= b.hi && b.lo <= a.hi)
        return Status::invalid_argument(std::string(o.name) + ": overlaps " +
                                        (other.output ? "output " : "input ") + other.name);
    }
  }
  return Status::ok();
}

}  // namespace ssmtune
