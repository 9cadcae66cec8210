// Host conversions between float/double and the 16-bit storage formats
// (IEEE binary16 "fp16" and bfloat16), with exact round-to-nearest-even,
// subnormals, infinities and NaN handled as the hardware does. Pure
// functions; thread-safe.
#pragma once

#include <cstdint>

namespace ssmtune {

// fp16: 1 sign, 5 exponent, 10 mantissa bits. Overflow (|x| >= 65520)
// rounds to infinity; NaN stays a quiet NaN with the sign and the top
// payload bits kept.
uint16_t float_to_half_bits(float x);
uint16_t double_to_half_bits(double x);   // rounded once, from the double
float half_bits_to_float(uint16_t bits);  // exact

// bf16: 1 sign, 8 exponent, 7 mantissa bits (the top half of a float).
uint16_t float_to_bf16_bits(float x);
uint16_t double_to_bf16_bits(double x);   // rounded once, from the double
float bf16_bits_to_float(uint16_t bits);  // exact

// x rounded (to nearest even) to the nearest value of each format, returned
// as a double. round_to_f32 is static_cast<float> (the default rounding mode).
double round_to_f32(double x);
double round_to_f16(double x);
double round_to_bf16(double x);

}  // namespace ssmtune
