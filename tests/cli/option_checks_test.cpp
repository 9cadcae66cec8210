// Option parsing: integers are decimal only (no octal 0100, no hex 0x10),
// unsigned options refuse negatives, numbers must be finite.
#include "cli/option_checks.h"

#include <catch2/catch.hpp>
#include <cstdint>

namespace ssmtune::cli {
namespace {

struct Parsed {
  bool ok = false;
  int64_t n = 0;
  unsigned u = 0;
  double x = 0;
  std::string error;
};

Parsed parse(std::vector<std::string> args) {
  CLI::App app{"t"};
  Parsed p;
  app.add_option("--n", p.n);
  app.add_option("--u", p.u);
  app.add_option("--x", p.x)->check(non_negative());
  add_number_checks(app);
  std::vector<std::string> rev(args.rbegin(), args.rend());
  try {
    app.parse(rev);
    p.ok = true;
  } catch (const CLI::ParseError& e) {
    p.error = e.what();
  }
  return p;
}

TEST_CASE("integer options are decimal", "[cli][options]") {
  CHECK(parse({"--n", "0100"}).n == 100);
  CHECK(parse({"--n", "-0042"}).n == -42);
  CHECK(parse({"--n", "0"}).n == 0);
  CHECK(parse({"--n", "16"}).n == 16);
  for (const char* bad : {"0x10", "0b11", "0o17", "1e3", "12abc", "", " 5", "--5"}) {
    auto p = parse({"--n", bad});
    INFO(bad << ": " << p.error);
    CHECK_FALSE(p.ok);
  }
  CHECK(parse({"--u", "0100"}).u == 100u);
  auto neg = parse({"--u", "-1"});
  CHECK_FALSE(neg.ok);
  CHECK(neg.error.find("negative") != std::string::npos);
}

TEST_CASE("number options are finite, and non-negative where asked", "[cli][options]") {
  CHECK(parse({"--x", "1.5"}).x == 1.5);
  for (const char* bad : {"nan", "NaN", "inf", "-inf", "1e999", "-1", "-0.5", "abc"}) {
    auto p = parse({"--x", bad});
    INFO(bad << ": " << p.error);
    CHECK_FALSE(p.ok);
  }
}

}  // namespace
}  // namespace ssmtune::cli
