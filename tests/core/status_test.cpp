#include "ssmtune/status.h"

#include <catch2/catch.hpp>

namespace ssmtune {
namespace {

Result<int> half(int x) {
  if (x % 2) return Status::invalid_argument("odd: " + std::to_string(x));
  return x / 2;
}

Result<int> quarter(int x) {
  SSMTUNE_ASSIGN_OR_RETURN(int h, half(x));
  SSMTUNE_ASSIGN_OR_RETURN(int q, half(h));
  return q;
}

TEST_CASE("Status carries code, message and context", "[core]") {
  Status ok;
  CHECK(ok.is_ok());
  CHECK(ok.to_string() == "ok");
  Status e = Status::compile_error("bad").with_context("program x.cu");
  CHECK_FALSE(e.is_ok());
  CHECK(e.code() == Code::kCompileError);
  CHECK(e.to_string() == "compile_error: program x.cu: bad");
}

TEST_CASE("Result propagates values and errors", "[core]") {
  CHECK(*quarter(12) == 3);
  auto r = quarter(6);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().message() == "odd: 3");
}

}  // namespace
}  // namespace ssmtune
