// FNV-1a with the 128-bit prime and offset basis.
#include "core/hash.h"

namespace ssmtune {
namespace {
constexpr unsigned __int128 kPrime =
    (static_cast<unsigned __int128>(0x0000000001000000ULL) << 64) | 0x000000000000013BULL;
constexpr unsigned __int128 kOffset =
    (static_cast<unsigned __int128>(0x6c62272e07bb0142ULL) << 64) | 0x62b821756295c58dULL;
}  // namespace

Hasher::Hasher() : state_(kOffset) {}

Hasher& Hasher::add(std::string_view data) {
  add_u64(data.size());
  for (unsigned char c : data) {
    state_ ^= c;
    state_ *= kPrime;
  }
  return *this;
}

Hasher& Hasher::add_u64(uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    state_ ^= static_cast<unsigned char>(v >> (8 * i));
    state_ *= kPrime;
  }
  return *this;
}

std::string Hasher::hex() const {
  static constexpr const char* kDigits = "0123456789abcdef";
  std::string out(32, '0');
  unsigned __int128 s = state_;
  for (int i = 31; i >= 0; --i) {
    out[i] = kDigits[static_cast<int>(s & 0xF)];
    s >>= 4;
  }
  return out;
}

std::string hash_hex(std::string_view data) { return Hasher().add(data).hex(); }

}  // namespace ssmtune
