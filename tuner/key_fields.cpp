// Key fields.
#include "tuner/key_fields.h"

namespace ssmtune {

std::vector<std::string> split_key(const std::string& s, char sep) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == sep) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

bool parse_size_field(const std::string& f, char prefix, int64_t& out) {
  if (f.size() < 2 || f.size() > 20 || f[0] != prefix) return false;
  int64_t v = 0;
  for (size_t i = 1; i < f.size(); ++i) {
    if (f[i] < '0' || f[i] > '9') return false;
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, f[i] - '0', &v))
      return false;
  }
  out = v;
  return true;
}

bool parse_int_field(const std::string& f, const std::string& prefix, int& out) {
  if (f.compare(0, prefix.size(), prefix) != 0 || f.size() == prefix.size() ||
      f.size() > prefix.size() + 6)
    return false;
  int v = 0;
  for (size_t i = prefix.size(); i < f.size(); ++i) {
    if (f[i] < '0' || f[i] > '9') return false;
    v = v * 10 + (f[i] - '0');
  }
  out = v;
  return true;
}

bool checked_product(std::initializer_list<int64_t> factors, int64_t& out) {
  int64_t p = 1;
  for (int64_t f : factors)
    if (__builtin_mul_overflow(p, f, &p)) return false;
  out = p;
  return true;
}

}  // namespace ssmtune
