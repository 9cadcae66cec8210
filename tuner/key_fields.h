// The text fields of problem and config keys ("b8.d1536.l2048", "K16.D32"):
// splitting a key, reading a prefixed number strictly (digits only, so the
// canonical-form check can reject "b08"), and size products that must not
// overflow. Pure functions, shared by every family's keys.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace ssmtune {

// "a.b..c" -> {"a", "b", "", "c"}; "" -> {""}.
std::vector<std::string> split_key(const std::string& s, char sep);
// "b8" with prefix 'b' -> 8 (up to 19 digits, no sign, no overflow).
bool parse_size_field(const std::string& f, char prefix, int64_t& out);
// "K64" with prefix "K" -> 64 (1 to 6 digits).
bool parse_int_field(const std::string& f, const std::string& prefix, int& out);
// Reads the key's first N fields as prefixed sizes ("b8.d1536..." into the
// members `sizes` point to): "" when all parse, else which field is wrong.
template <size_t N>
std::string parse_size_fields(const std::vector<std::string>& fields, const char (&prefixes)[N],
                              int64_t* const (&sizes)[N]) {
  if (fields.size() < N) return "expected at least " + std::to_string(N) + " size fields";
  for (size_t i = 0; i < N; ++i)
    if (!parse_size_field(fields[i], prefixes[i], *sizes[i]))
      return "field " + std::to_string(i + 1) + " must be " + prefixes[i] + "<number>, got '" +
             fields[i] + "'";
  return {};
}

// The product of `factors`, or false when it does not fit int64.
bool checked_product(std::initializer_list<int64_t> factors, int64_t& out);

// A problem key's optional flag: its name in the key, and the member it sets.
template <typename P>
struct KeyFlag {
  const char* name;
  bool P::*member;
};

// ".D.z" for the flags of `p` that are on, in the table's order.
template <typename P, size_t N>
std::string flags_suffix(const KeyFlag<P> (&flags)[N], const P& p) {
  std::string s;
  for (const KeyFlag<P>& f : flags)
    if (p.*f.member) s += std::string(".") + f.name;
  return s;
}

// Turns on the flag `field` names in `p`: "" when it did, else why not
// ("flag 'z' repeated", "unknown flag 'q' (expected D, z, ...)").
template <typename P, size_t N>
std::string set_flag(const KeyFlag<P> (&flags)[N], const std::string& field, P& p) {
  std::string names;
  for (const KeyFlag<P>& f : flags) {
    if (field == f.name) {
      if (p.*f.member) return "flag '" + field + "' repeated";
      p.*f.member = true;
      return {};
    }
    names += names.empty() ? f.name : std::string(", ") + f.name;
  }
  return "unknown flag '" + field + "' (expected " + names + ")";
}

}  // namespace ssmtune
