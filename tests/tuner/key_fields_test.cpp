#include "tuner/key_fields.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace ssmtune {
namespace {

TEST_CASE("split_key keeps empty fields", "[tuner]") {
  CHECK(split_key("a.b..c", '.') == std::vector<std::string>{"a", "b", "", "c"});
  CHECK(split_key("", '.') == std::vector<std::string>{""});
  CHECK(split_key("b8", '.') == std::vector<std::string>{"b8"});
}

TEST_CASE("size and int fields are read strictly", "[tuner]") {
  int64_t v = -1;
  CHECK(parse_size_field("b8", 'b', v));
  CHECK(v == 8);
  CHECK(parse_size_field("l9223372036854775807", 'l', v));
  CHECK(v == std::numeric_limits<int64_t>::max());
  for (const char* bad :
       {"b", "d8", "b-8", "b+8", "b8x", "b 8", "l9223372036854775808", "l99999999999999999999"}) {
    INFO(bad);
    CHECK_FALSE(parse_size_field(bad, bad[0] == 'd' ? 'b' : bad[0], v));
  }
  int k = -1;
  CHECK(parse_int_field("K64", "K", k));
  CHECK(k == 64);
  CHECK_FALSE(parse_int_field("K1234567", "K", k));
  CHECK_FALSE(parse_int_field("D64", "K", k));
}

TEST_CASE("parse_size_fields reads the leading sizes or names the bad field", "[tuner]") {
  int64_t a = 0, b = 0, c = 0;
  const char prefixes[] = {'b', 'd', 'l'};
  int64_t* const sizes[] = {&a, &b, &c};
  CHECK(parse_size_fields(split_key("b2.d64.l2048.n16", '.'), prefixes, sizes).empty());
  CHECK(a == 2);
  CHECK(b == 64);
  CHECK(c == 2048);
  CHECK(parse_size_fields(split_key("b2.x64.l2048", '.'), prefixes, sizes) ==
        "field 2 must be d<number>, got 'x64'");
  CHECK(parse_size_fields(split_key("b2.d64", '.'), prefixes, sizes) ==
        "expected at least 3 size fields");
}

TEST_CASE("checked_product refuses what overflows int64", "[tuner]") {
  int64_t out = 0;
  CHECK(checked_product({8, 1536, 2048, 16}, out));
  CHECK(out == int64_t{8} * 1536 * 2048 * 16);
  CHECK_FALSE(checked_product({int64_t{1} << 32, int64_t{1} << 32}, out));
  CHECK(checked_product({}, out));
  CHECK(out == 1);
}

struct Flags {
  bool d = false;
  bool z = false;
};
constexpr KeyFlag<Flags> kTable[] = {{"D", &Flags::d}, {"z", &Flags::z}};

TEST_CASE("key flags round-trip through their suffix", "[tuner]") {
  Flags f;
  CHECK(flags_suffix(kTable, f).empty());
  CHECK(set_flag(kTable, "z", f).empty());
  CHECK(flags_suffix(kTable, f) == ".z");
  CHECK(set_flag(kTable, "D", f).empty());
  CHECK(flags_suffix(kTable, f) == ".D.z");  // the table's order, not the call's
  CHECK(set_flag(kTable, "z", f) == "flag 'z' repeated");
  CHECK(set_flag(kTable, "q", f) == "unknown flag 'q' (expected D, z)");
}

}  // namespace
}  // namespace ssmtune
