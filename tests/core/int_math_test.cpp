// pow2_floor: powers of 2 and their neighbours, the small cases, and sizes
// past an int (where an int product would overflow).
#include "core/int_math.h"

#include <catch2/catch.hpp>
#include <cstdint>

namespace ssmtune {
namespace {

TEST_CASE("pow2_floor: the largest power of 2 at most x", "[core]") {
  CHECK(pow2_floor(-5) == 1);
  CHECK(pow2_floor(0) == 1);
  CHECK(pow2_floor(1) == 1);
  CHECK(pow2_floor(2) == 2);
  CHECK(pow2_floor(3) == 2);
  for (int k = 2; k < 30; ++k) {
    const int64_t p = int64_t{1} << k;
    CHECK(pow2_floor(p - 1) == p / 2);
    CHECK(pow2_floor(p) == p);
    CHECK(pow2_floor(p + 1) == p);
  }
  static_assert(pow2_floor(256) == 256);
}

TEST_CASE("pow2_floor: past an int, capped at 2^30", "[core]") {
  CHECK(pow2_floor(int64_t{1} << 30) == (1 << 30));
  CHECK(pow2_floor((int64_t{1} << 31) + 7) == (1 << 30));
  CHECK(pow2_floor(INT64_MAX) == (1 << 30));
}

}  // namespace
}  // namespace ssmtune
