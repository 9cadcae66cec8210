// Element dtypes of the scan's tensors and their exact byte coding: the
// storage types every kernel family reads and writes, and the rounding that
// makes host inputs hold exactly the values a kernel sees. Pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ssmtune/status.h"

namespace ssmtune {

// Dtype of u, delta, variable B/C, z and the outputs. A, D, delta_bias,
// constant B/C and the states are always fp32.
enum class DType { kF32, kF16, kBF16 };
const char* to_string(DType t);  // "fp32", "fp16", "bf16"
Result<DType> parse_dtype(const std::string& s);
int dtype_bytes(DType t);
// The CUDA C++ type a kernel template takes for it: "float", "__half", "__nv_bfloat16".
const char* cuda_type_name(DType t);

// Values as little-endian fp32/fp16/bf16 bytes, rounded to nearest even.
std::vector<unsigned char> encode(const std::vector<double>& values, DType dtype);
// `count` elements of `dtype` from little-endian bytes, exactly.
std::vector<double> decode(const void* bytes, size_t count, DType dtype);

// x rounded to `dtype` (the value encode then decode gives).
double round_to(double x, DType dtype);

}  // namespace ssmtune
