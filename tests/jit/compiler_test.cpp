#include "jit/compiler.h"

#include <catch2/catch.hpp>

#include "support/test_family.h"

#include "jit/cubin_elf.h"
#include "jit/program_builder.h"

namespace ssmtune::jit {
namespace {

TEST_CASE("linear_recurrence family compiles to cubins for sm_80 and sm_90", "[jit]") {
  const auto arch = GENERATE(as<std::string>{}, "sm_80", "sm_90");
  Compiler compiler(testing::test_sources(), nullptr, 2);
  const auto family = testing::linear_recurrence_family({1, 4});
  auto specs = make_programs(family, 0, arch);
  REQUIRE(specs.size() == 1);
  auto r = compiler.compile(specs[0]);
  INFO(r.status().to_string());
  REQUIRE(r.is_ok());
  INFO(r->log);
  CHECK(r->arch == arch);
  CHECK(r->cubin.size() > 1000);
  CHECK(r->cubin.compare(0, 4,
                         "\x7f"
                         "ELF") == 0);
  REQUIRE(r->kernels.size() == family.size());
  auto sections = kernel_code_sections(r->cubin);
  REQUIRE(sections.is_ok());
  for (const auto& k : r->kernels) {
    INFO(k.name_expression);
    CHECK(k.lowered_name.rfind("_Z", 0) == 0);  // mangled
    CHECK(k.resources.found);
    CHECK(k.resources.registers > 0);
    CHECK_FALSE(k.resources.spills());
    CHECK(sections->count(k.lowered_name) == 1);
  }
  CHECK(r->log.find("for '" + arch + "'") != std::string::npos);
}

TEST_CASE("lowered names are the mangled template instantiations", "[jit]") {
  Compiler compiler(testing::test_sources(), nullptr, 1);
  auto specs = make_programs(testing::linear_recurrence_family({2}), 0, "sm_90");
  auto r = compiler.compile(specs[0]);
  REQUIRE(r.is_ok());
  const auto* f = r->find("ssmtune_kernels::linear_recurrence<float, 2>");
  const auto* d = r->find("ssmtune_kernels::linear_recurrence<double, 2>");
  REQUIRE(f != nullptr);
  REQUIRE(d != nullptr);
  CHECK(f->lowered_name ==
        "_ZN15ssmtune_kernels17linear_recurrenceIfLi2EEEvNS_22LinearRecurrenceParamsE");
  CHECK(d->lowered_name ==
        "_ZN15ssmtune_kernels17linear_recurrenceIdLi2EEEvNS_22LinearRecurrenceParamsE");
}

TEST_CASE("a syntax error comes back as a compile error holding the log", "[jit]") {
  Compiler compiler(testing::test_sources(), nullptr, 1);
  ProgramSpec spec;
  spec.name = "broken.cu";
  spec.source = "template <int N> __global__ void k(int* x) { x[0] = N +; }\n";
  spec.name_expressions = {"k<3>"};
  auto r = compiler.compile(spec);
  REQUIRE_FALSE(r.is_ok());
  const std::string msg = r.status().message();
  INFO(msg);
  CHECK(r.status().code() == Code::kCompileError);
  CHECK(msg.find("broken.cu(1)") != std::string::npos);  // the log
  CHECK(msg.find("expected an expression") != std::string::npos);
  CHECK(msg.find("-arch=sm_90") != std::string::npos);  // the options
  CHECK(msg.find("k<3>") != std::string::npos);         // the name expression
}

TEST_CASE("a name expression that does not exist is an error naming it", "[jit]") {
  Compiler compiler(testing::test_sources(), nullptr, 1);
  auto specs = make_programs(
      {{"testing/linear_recurrence.cuh", "ssmtune_kernels::no_such_kernel<float>"}}, 0, "sm_90");
  auto r = compiler.compile(specs[0]);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().message().find("no_such_kernel") != std::string::npos);
}

TEST_CASE("bad arch and empty programs are rejected before NVRTC", "[jit]") {
  Compiler compiler(testing::test_sources(), nullptr, 1);
  auto specs = make_programs(testing::linear_recurrence_family({1}), 0, "compute_90");
  auto r = compiler.compile(specs[0]);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().code() == Code::kInvalidArgument);
  CHECK(validate_arch("sm_90a").is_ok());
  CHECK_FALSE(validate_arch("90").is_ok());
  ProgramSpec empty;
  CHECK(compiler.compile(empty).status().code() == Code::kInvalidArgument);
}

TEST_CASE("batched and separate compilation emit the same machine code", "[jit]") {
  Compiler compiler(testing::test_sources(), nullptr, 2);
  const auto family = testing::linear_recurrence_family({1, 2, 4});
  auto batched = compiler.compile_all(make_programs(family, 0, "sm_90"));
  auto separate = compiler.compile_all(make_programs(family, 1, "sm_90"));
  REQUIRE(batched.size() == 1);
  REQUIRE(separate.size() == family.size());
  REQUIRE(batched[0].is_ok());
  auto batched_code = kernel_code_sections(batched[0]->cubin);
  REQUIRE(batched_code.is_ok());
  for (size_t i = 0; i < family.size(); ++i) {
    REQUIRE(separate[i].is_ok());
    const auto& k = separate[i]->kernels.at(0);
    INFO(k.name_expression);
    auto code = kernel_code_sections(separate[i]->cubin);
    REQUIRE(code.is_ok());
    REQUIRE(code->count(k.lowered_name) == 1);
    REQUIRE(batched_code->count(k.lowered_name) == 1);
    CHECK(code->at(k.lowered_name) == batched_code->at(k.lowered_name));
    const auto* b = batched[0]->find(k.name_expression);
    REQUIRE(b != nullptr);
    CHECK(b->resources.registers == k.resources.registers);
  }
}

TEST_CASE("the cache key covers source, names, options and arch", "[jit]") {
  Compiler compiler(testing::test_sources(), nullptr, 1);
  auto base = make_programs(testing::linear_recurrence_family({1}), 0, "sm_90")[0];
  const auto key = compiler.cache_key(base);
  CHECK(compiler.cache_key(base) == key);
  auto other = base;
  other.arch = "sm_80";
  CHECK(compiler.cache_key(other) != key);
  other = base;
  other.extra_options = {"--use_fast_math"};
  CHECK(compiler.cache_key(other) != key);
  other = base;
  other.name_expressions.pop_back();
  CHECK(compiler.cache_key(other) != key);
  other = base;
  other.source += "\n";
  CHECK(compiler.cache_key(other) != key);
}

}  // namespace
}  // namespace ssmtune::jit
