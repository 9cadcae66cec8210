// The text fields of problem and config keys ("b8.d1536.l2048", "K16.D32"):
// splitting a key, reading a prefixed number strictly (digits only, so the
// canonical-form check can reject "b08"), and size products that must not
// overflow. Pure functions, shared by every family's keys.
#pragma once

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
// The product of `factors`, or false when it does not fit int64.
bool checked_product(std::initializer_list<int64_t> factors, int64_t& out);

}  // namespace ssmtune
