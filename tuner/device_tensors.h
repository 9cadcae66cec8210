// Device tensors of a bench's problem, shared by every family: contiguous
// descriptions of device buffers, uploads of host values in their storage
// dtype, the poison pattern written into outputs before a run, and raw
// downloads. Need a current context.
#pragma once

#include <cstdint>
#include <vector>

#include "jit/device_buffer.h"
#include "tuner/fwd/problem.h"

namespace ssmtune {

// `buf` as a contiguous (row-major) tensor of `shape`.
TensorArg describe(const jit::DeviceBuffer& buf, DType dtype, const std::vector<int64_t>& shape);
// `values` encoded in `dtype` in a new buffer.
Result<jit::DeviceBuffer> upload_values(const std::vector<double>& values, DType dtype);
// Every element of `buf` set to the poison pattern of `dtype` (tuner/accuracy.h).
Status fill_pattern(const jit::DeviceBuffer& buf, DType dtype, CUstream stream);
// The buffer's bytes (empty for an empty buffer).
Result<std::vector<unsigned char>> bytes_of(const jit::DeviceBuffer& buf);

}  // namespace ssmtune
