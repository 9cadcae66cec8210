// Host tensors for kernel templates run through tests/support/cuda_emulation.h:
// contiguous buffers (inputs encoded to their dtype, outputs filled with a
// 0xEE poison), kept alive with their TensorArg descriptions.
#pragma once

#include <cstdint>
#include <vector>

#include "tuner/dtype.h"
#include "tuner/fwd/problem.h"

namespace ssmtune::testing {

struct HostTensors {
  std::vector<std::vector<unsigned char>> keep;
  TensorArg put(const std::vector<double>& v, DType dt, std::vector<int64_t> shape) {
    keep.push_back(encode(v, dt));
    return describe(keep.back().data(), dt, shape);
  }
  TensorArg out(DType dt, std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    keep.emplace_back(static_cast<size_t>(n) * dtype_bytes(dt), 0xEE);
    return describe(keep.back().data(), dt, shape);
  }
  static TensorArg describe(const void* data, DType dt, const std::vector<int64_t>& shape) {
    TensorArg t;
    t.data = data;
    t.dtype = dt;
    t.rank = static_cast<int>(shape.size());
    int64_t s = 1;
    for (int i = t.rank - 1; i >= 0; --i) {
      t.shape[i] = shape[i];
      t.stride[i] = s;
      s *= shape[i];
    }
    return t;
  }
};

}  // namespace ssmtune::testing
