// Integer helpers that the search spaces and defaults of every family use.
// Computed in 64 bits: sizes come from problems (int64_t) and are compared
// against products of config fields (int).
#pragma once

#include <cstdint>

namespace ssmtune {

constexpr bool is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

// The smallest power of 2 >= x (1 for x < 2); x at most 2^62.
constexpr int64_t pow2_ceil(int64_t x) {
  int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

// The largest power of 2 <= x (1 for x < 2), at most 2^30 so that it fits an int.
constexpr int pow2_floor(int64_t x) {
  int64_t p = 1;
  while (p < (int64_t{1} << 30) && p * 2 <= x) p *= 2;
  return static_cast<int>(p);
}

}  // namespace ssmtune
