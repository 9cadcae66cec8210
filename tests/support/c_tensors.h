// C ABI tensors for tests: a contiguous (row-major) ssmtune_tensor of a
// dtype and shape, at an address (0: a layout, no data).
#pragma once

#include <cstdint>
#include <initializer_list>

#include "ssmtune/ssmtune.h"

namespace ssmtune::testing {

inline ssmtune_tensor c_tensor(uintptr_t addr, ssmtune_dtype t,
                               std::initializer_list<int64_t> shape) {
  ssmtune_tensor x{};
  x.data = reinterpret_cast<const void*>(addr);
  x.dtype = t;
  x.rank = static_cast<int32_t>(shape.size());
  int i = 0;
  for (int64_t s : shape) x.shape[i++] = s;
  int64_t stride = 1;
  for (int k = x.rank - 1; k >= 0; --k) {
    x.stride[k] = stride;
    stride *= x.shape[k];
  }
  return x;
}

inline ssmtune_tensor c_tensor(ssmtune_dtype t, std::initializer_list<int64_t> shape) {
  return c_tensor(0, t, shape);
}

}  // namespace ssmtune::testing
