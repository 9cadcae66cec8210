// Stable 128-bit content hash (FNV-1a 128) for cache keys. Stable across
// builds, processes and machines, unlike std::hash. Not cryptographic.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ssmtune {

class Hasher {
 public:
  Hasher();
  // Adds the bytes of `data` and its length, so ("ab","c") != ("a","bc").
  Hasher& add(std::string_view data);
  Hasher& add_u64(uint64_t v);
  // 32 lower-case hex digits.
  std::string hex() const;

 private:
  unsigned __int128 state_;
};

// hex() of one string.
std::string hash_hex(std::string_view data);

}  // namespace ssmtune
