// Dtype names and the byte coding of values.
#include "tuner/dtype.h"

#include <cstdint>
#include <cstring>

#include "core/half.h"

namespace ssmtune {

const char* to_string(DType t) {
  switch (t) {
    case DType::kF32:
      return "fp32";
    case DType::kF16:
      return "fp16";
    case DType::kBF16:
      return "bf16";
  }
  return "?";
}

Result<DType> parse_dtype(const std::string& s) {
  if (s == "fp32") return DType::kF32;
  if (s == "fp16") return DType::kF16;
  if (s == "bf16") return DType::kBF16;
  return Status::invalid_argument("unknown dtype '" + s + "' (expected fp32, fp16 or bf16)");
}

int dtype_bytes(DType t) { return t == DType::kF32 ? 4 : 2; }

double round_to(double x, DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return round_to_f32(x);
    case DType::kF16:
      return round_to_f16(x);
    case DType::kBF16:
      return round_to_bf16(x);
  }
  return x;
}

std::vector<unsigned char> encode(const std::vector<double>& values, DType dtype) {
  const size_t es = static_cast<size_t>(dtype_bytes(dtype));
  std::vector<unsigned char> bytes(values.size() * es);
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t bits;
    if (dtype == DType::kF32) {
      const float f = static_cast<float>(values[i]);
      std::memcpy(&bits, &f, sizeof bits);
    } else {
      bits = dtype == DType::kF16 ? double_to_half_bits(values[i]) : double_to_bf16_bits(values[i]);
    }
    for (size_t k = 0; k < es; ++k) bytes[i * es + k] = static_cast<unsigned char>(bits >> (8 * k));
  }
  return bytes;
}

std::vector<double> decode(const void* bytes, size_t count, DType dtype) {
  const auto* b = static_cast<const unsigned char*>(bytes);
  const size_t es = static_cast<size_t>(dtype_bytes(dtype));
  std::vector<double> values(count);
  for (size_t i = 0; i < count; ++i) {
    uint32_t bits = 0;
    for (size_t k = 0; k < es; ++k) bits |= static_cast<uint32_t>(b[i * es + k]) << (8 * k);
    if (dtype == DType::kF32) {
      float f;
      std::memcpy(&f, &bits, sizeof f);
      values[i] = f;
    } else if (dtype == DType::kF16) {
      values[i] = half_bits_to_float(static_cast<uint16_t>(bits));
    } else {
      values[i] = bf16_bits_to_float(static_cast<uint16_t>(bits));
    }
  }
  return values;
}

const char* cuda_type_name(DType t) {
  switch (t) {
    case DType::kF32:
      return "float";
    case DType::kF16:
      return "__half";
    case DType::kBF16:
      return "__nv_bfloat16";
  }
  return "float";
}

}  // namespace ssmtune
