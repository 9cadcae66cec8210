// One generic rounding routine from the bits of a double serves both 16-bit
// formats; rounding once from the double avoids double rounding through float.
#include "core/half.h"

#include <cmath>
#include <cstring>

namespace ssmtune {
namespace {

// Rounds x to a binary format with kMant stored mantissa bits and kExp
// exponent bits (IEEE layout, no more than 16 bits in all).
template <int kMant, int kExp>
uint16_t round_double_to_bits(double x) {
  constexpr int kBias = (1 << (kExp - 1)) - 1;
  constexpr int kEmin = 1 - kBias;  // exponent of the smallest normal
  constexpr uint32_t kInf = ((1u << kExp) - 1) << kMant;
  constexpr uint32_t kQuiet = 1u << (kMant - 1);

  uint64_t d;
  std::memcpy(&d, &x, sizeof d);
  const uint32_t sign = static_cast<uint32_t>(d >> 63) << (kMant + kExp);
  const int e = static_cast<int>((d >> 52) & 0x7FF);
  const uint64_t f = d & ((uint64_t{1} << 52) - 1);
  if (e == 0x7FF) {
    if (f == 0) return static_cast<uint16_t>(sign | kInf);
    const uint32_t payload = static_cast<uint32_t>(f >> (52 - kMant));
    return static_cast<uint16_t>(sign | kInf | kQuiet | payload);
  }
  if (e == 0) return static_cast<uint16_t>(sign);  // double subnormals are far below the formats'

  // |x| = s * 2^(exp - 52) with s in [2^52, 2^53); keep the bits above the
  // target quantum, 2^(exp - kMant) for normals and 2^(kEmin - kMant) below.
  const uint64_t s = (uint64_t{1} << 52) | f;
  const int exp = e - 1023;
  const int shift = 52 - kMant + (exp < kEmin ? kEmin - exp : 0);
  if (shift >= 54) return static_cast<uint16_t>(sign);  // below half the smallest subnormal
  uint64_t r = s >> shift;
  const uint64_t rem = s & ((uint64_t{1} << shift) - 1);
  const uint64_t half = uint64_t{1} << (shift - 1);
  if (rem > half || (rem == half && (r & 1))) ++r;
  // Subnormals encode as r itself; normals add the biased exponent. A carry
  // out of the mantissa moves into the exponent field on its own.
  uint64_t bits = r;
  if (exp >= kEmin) bits = (static_cast<uint64_t>(exp + kBias) << kMant) + (r - (1u << kMant));
  if (bits >= kInf) return static_cast<uint16_t>(sign | kInf);
  return static_cast<uint16_t>(sign | bits);
}

}  // namespace

uint16_t double_to_half_bits(double x) { return round_double_to_bits<10, 5>(x); }
uint16_t float_to_half_bits(float x) { return double_to_half_bits(x); }

float half_bits_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits >> 15) << 31;
  const uint32_t e = (bits >> 10) & 0x1F;
  const uint32_t m = bits & 0x3FF;
  uint32_t out;
  if (e == 0x1F) {
    out = sign | 0x7F800000u | (m << 13);
  } else if (e == 0) {
    // Subnormal (or zero): m * 2^-24, exact in float.
    const float v = std::ldexp(static_cast<float>(m), -24);
    std::memcpy(&out, &v, sizeof out);
    out |= sign;
  } else {
    out = sign | ((e - 15 + 127) << 23) | (m << 13);
  }
  float f;
  std::memcpy(&f, &out, sizeof f);
  return f;
}

uint16_t double_to_bf16_bits(double x) { return round_double_to_bits<7, 8>(x); }
uint16_t float_to_bf16_bits(float x) { return double_to_bf16_bits(x); }

float bf16_bits_to_float(uint16_t bits) {
  const uint32_t out = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &out, sizeof f);
  return f;
}

double round_to_f32(double x) { return static_cast<float>(x); }
double round_to_f16(double x) { return half_bits_to_float(double_to_half_bits(x)); }
double round_to_bf16(double x) { return bf16_bits_to_float(double_to_bf16_bits(x)); }

}  // namespace ssmtune
