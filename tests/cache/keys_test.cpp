// FwdProblem and config keys as the database takes them: the legacy prefix,
// the checks per family and the generic parameters.
#include "cache/keys.h"

#include <catch2/catch.hpp>

#include "tuner/fwd/config.h"

namespace ssmtune::cache {
namespace {

TEST_CASE("keys without a family are forward keys", "[cache][keys]") {
  CHECK(qualified_key("b8.d1536.l2048.n16.g1.bf16.vB.vC") ==
        "fwd:b8.d1536.l2048.n16.g1.bf16.vB.vC");
  CHECK(qualified_key("bwd:b1.d4") == "bwd:b1.d4");
  CHECK(key_body("fwd:b1.d4") == "b1.d4");
  CHECK(key_body("b1.d4") == "b1.d4");
}

TEST_CASE("problem and config keys are checked per family", "[cache][keys]") {
  CHECK(check_problem_key("fwd:b8.d1536.l2048.n16.g1.bf16.vB.vC").is_ok());
  CHECK(check_problem_key("fwd:b8.d1536").message().find("bad problem key 'b8.d1536'") !=
        std::string::npos);
  CHECK(check_problem_key("b8.d1536.l2048.n16.g1.bf16.vB.vC").message().find("no family") !=
        std::string::npos);
  CHECK(check_problem_key("bwd:b8.d1536.l2048").is_ok());  // other families: the generic form
  for (const char* bad : {"bwd:", "bwd:a..b", "bwd:a b", "Bwd:a", ":a", "bwd:a.\n"}) {
    INFO(bad);
    CHECK(check_problem_key(bad).code() == Code::kInvalidArgument);
  }
  CHECK(check_config_key("fwd", FwdConfig{}.key()).is_ok());
  CHECK(check_config_key("fwd", "seq.K64").code() == Code::kInvalidArgument);
  CHECK(check_config_key("bwd", "anything.K3").is_ok());
  CHECK(check_config_key("bwd", "").code() == Code::kInvalidArgument);
}

TEST_CASE("parameters are the key's tokens", "[cache][keys]") {
  CHECK(key_params("b8.d1536.bf16.vB") == R"(["b8","d1536","bf16","vB"])");
  CHECK(key_params("seq") == R"(["seq"])");
}

}  // namespace
}  // namespace ssmtune::cache
