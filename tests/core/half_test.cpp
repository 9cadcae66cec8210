// fp16 and bf16 conversions against known bit patterns, exhaustive
// round-trips, and (where the compiler has _Float16) a native oracle.
#include "core/half.h"

#include <catch2/catch.hpp>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace ssmtune {
namespace {

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

TEST_CASE("fp16 conversion of known values", "[core]") {
  CHECK(float_to_half_bits(1.0f) == 0x3C00);
  CHECK(float_to_half_bits(-2.0f) == 0xC000);
  CHECK(float_to_half_bits(0.0f) == 0x0000);
  CHECK(float_to_half_bits(-0.0f) == 0x8000);
  CHECK(float_to_half_bits(1.0f / 3.0f) == 0x3555);
  CHECK(float_to_half_bits(65504.0f) == 0x7BFF);    // largest finite
  CHECK(float_to_half_bits(65519.996f) == 0x7BFF);  // just below the tie
  CHECK(float_to_half_bits(65520.0f) == 0x7C00);    // tie with "65536": rounds to inf
  CHECK(float_to_half_bits(-1e6f) == 0xFC00);
  CHECK(float_to_half_bits(std::ldexp(1.0f, -14)) == 0x0400);  // smallest normal
  CHECK(float_to_half_bits(std::ldexp(1.0f, -24)) == 0x0001);  // smallest subnormal
  CHECK(float_to_half_bits(std::ldexp(1023.0f, -24)) == 0x03FF);
  CHECK(float_to_half_bits(std::ldexp(1.0f, -25)) == 0x0000);  // tie: to even (zero)
  CHECK(float_to_half_bits(std::ldexp(1.0001f, -25)) == 0x0001);
  CHECK(float_to_half_bits(std::ldexp(3.0f, -25)) == 0x0002);  // tie between 1 and 2: even
  CHECK(float_to_half_bits(std::ldexp(1.0f, -30)) == 0x0000);
  CHECK(float_to_half_bits(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);  // tie: even
  CHECK(float_to_half_bits(1.0f + std::ldexp(3.0f, -11)) == 0x3C02);  // tie: even
  CHECK(float_to_half_bits(std::ldexp(4095.0f, -12)) == 0x3C00);      // carry into exponent
  CHECK(float_to_half_bits(std::numeric_limits<float>::infinity()) == 0x7C00);
  CHECK(float_to_half_bits(-std::numeric_limits<float>::infinity()) == 0xFC00);
  CHECK(float_to_half_bits(FLT_MIN) == 0x0000);
  const uint16_t nan = float_to_half_bits(std::numeric_limits<float>::quiet_NaN());
  CHECK((nan & 0x7C00) == 0x7C00);
  CHECK((nan & 0x03FF) != 0);
  CHECK((float_to_half_bits(from_bits(0xFF800001u)) & 0xFE00) == 0xFE00);  // sNaN: quiet, signed

  CHECK(half_bits_to_float(0x3C00) == 1.0f);
  CHECK(half_bits_to_float(0xC000) == -2.0f);
  CHECK(half_bits_to_float(0x7BFF) == 65504.0f);
  CHECK(half_bits_to_float(0x0001) == std::ldexp(1.0f, -24));
  CHECK(half_bits_to_float(0x03FF) == std::ldexp(1023.0f, -24));
  CHECK(half_bits_to_float(0x7C00) == std::numeric_limits<float>::infinity());
  CHECK(std::isnan(half_bits_to_float(0x7E00)));
  CHECK(std::isnan(half_bits_to_float(0x7C01)));
  CHECK(std::signbit(half_bits_to_float(0x8000)));
  CHECK(half_bits_to_float(0x8001) == -std::ldexp(1.0f, -24));
}

TEST_CASE("bf16 conversion of known values", "[core]") {
  CHECK(float_to_bf16_bits(1.0f) == 0x3F80);
  CHECK(float_to_bf16_bits(-2.0f) == 0xC000);
  CHECK(float_to_bf16_bits(1.00390625f) == 0x3F80);  // 1 + 2^-8, tie: even (down)
  CHECK(float_to_bf16_bits(1.01171875f) == 0x3F82);  // 1 + 3 * 2^-8, tie: even (up)
  CHECK(float_to_bf16_bits(1.00390625f + std::ldexp(1.0f, -20)) == 0x3F81);
  CHECK(float_to_bf16_bits(from_bits(0x7F7F0000u)) == 0x7F7F);  // largest finite
  CHECK(float_to_bf16_bits(FLT_MAX) == 0x7F80);                 // rounds up to inf
  CHECK(float_to_bf16_bits(FLT_MIN) == 0x0080);
  CHECK(float_to_bf16_bits(std::ldexp(1.0f, -133)) == 0x0001);  // smallest subnormal
  CHECK(float_to_bf16_bits(std::ldexp(1.0f, -134)) == 0x0000);  // tie: even (zero)
  CHECK(float_to_bf16_bits(std::ldexp(3.0f, -134)) == 0x0002);  // tie: even
  CHECK(float_to_bf16_bits(from_bits(0x007FFFFFu)) == 0x0080);  // subnormal carries to normal
  CHECK(float_to_bf16_bits(-std::numeric_limits<float>::infinity()) == 0xFF80);
  const uint16_t nan = float_to_bf16_bits(std::numeric_limits<float>::quiet_NaN());
  CHECK((nan & 0x7F80) == 0x7F80);
  CHECK((nan & 0x007F) != 0);
  CHECK((float_to_bf16_bits(from_bits(0x7F800001u)) & 0x7FC0) == 0x7FC0);  // sNaN stays NaN

  CHECK(bf16_bits_to_float(0x3F80) == 1.0f);
  CHECK(bf16_bits_to_float(0x0001) == std::ldexp(1.0f, -133));
  CHECK(bf16_bits_to_float(0xFF80) == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(bf16_bits_to_float(0x7FC0)));
}

TEST_CASE("every finite 16-bit value round-trips exactly", "[core]") {
  int bad_half = 0, bad_bf16 = 0;
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    const float h = half_bits_to_float(bits);
    if (std::isfinite(h) && float_to_half_bits(h) != bits) ++bad_half;
    if (std::isnan(h) != ((b & 0x7C00) == 0x7C00 && (b & 0x3FF) != 0)) ++bad_half;
    const float f = bf16_bits_to_float(bits);
    if (std::isfinite(f) && float_to_bf16_bits(f) != bits) ++bad_bf16;
  }
  CHECK(bad_half == 0);
  CHECK(bad_bf16 == 0);
}

TEST_CASE("rounding from double happens once", "[core]") {
  // Just above a tie: a float would drop the 2^-40 and then round down.
  const double above = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  CHECK(double_to_half_bits(above) == 0x3C01);
  CHECK(float_to_half_bits(static_cast<float>(above)) == 0x3C00);
  CHECK(round_to_f16(above) == 1.0 + std::ldexp(1.0, -10));
  const double above_bf = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  CHECK(double_to_bf16_bits(above_bf) == 0x3F81);
  CHECK(round_to_bf16(above_bf) == 1.0 + std::ldexp(1.0, -7));
  CHECK(round_to_f32(1.0 + std::ldexp(1.0, -30)) == 1.0);
  CHECK(round_to_f16(1e9) == std::numeric_limits<double>::infinity());
}

TEST_CASE("bf16 matches the integer rounding trick on random floats", "[core]") {
  std::mt19937 g(17);
  int bad = 0;
  for (int i = 0; i < 200001; ++i) {
    uint32_t b = g();
    const float f = from_bits(b);
    if (!std::isfinite(f)) continue;
    const uint32_t expect = (b + 0x7FFFu + ((b >> 16) & 1u)) >> 16;  // RNE on the low half
    if (float_to_bf16_bits(f) != static_cast<uint16_t>(expect)) ++bad;
  }
  CHECK(bad == 0);
}

#if defined(__FLT16_MAX__)
TEST_CASE("fp16 matches the compiler's _Float16 on random values", "[core]") {
  std::mt19937_64 g(29);
  int bad_f = 0, bad_d = 0;
  for (int i = 0; i < 200001; ++i) {
    // Exponents around fp16's range: normals, subnormals, overflow, ties.
    const double d =
        std::ldexp(static_cast<double>(g() >> 11), -53 - 26 + int(g() % 48)) * ((g() & 1) ? -1 : 1);
    const float f = static_cast<float>(d);
    _Float16 hf = static_cast<_Float16>(f);
    _Float16 hd = static_cast<_Float16>(d);
    uint16_t ef, ed;
    std::memcpy(&ef, &hf, 2);
    std::memcpy(&ed, &hd, 2);
    if (float_to_half_bits(f) != ef) ++bad_f;
    if (double_to_half_bits(d) != ed) ++bad_d;
  }
  CHECK(bad_f == 0);
  CHECK(bad_d == 0);
}
#endif

}  // namespace
}  // namespace ssmtune
