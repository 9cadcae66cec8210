#include "cache/sqlite_cubin_cache.h"

#include <catch2/catch.hpp>

#include <thread>
#include <vector>
#include "support/test_family.h"

#include "cache/db_fixtures.h"
#include "jit/compiler.h"
#include "jit/program_builder.h"

namespace ssmtune::cache {
namespace {

jit::CompiledProgram program(const std::string& key, int kernels) {
  jit::CompiledProgram p;
  p.key = key;
  p.arch = "sm_90";
  p.cubin = std::string(
                "\x7f"
                "ELF\0\x01\x02",
                7) +
            key;
  p.log = "ptxas info    : Used 40 registers";
  for (int i = 0; i < kernels; ++i) {
    jit::KernelImage k;
    k.name_expression = "ssm::fwd<" + std::to_string(i) + ">";
    k.lowered_name = "_ZN3ssm3fwdILi" + std::to_string(i) + "EEEvv";
    k.resources.registers = 40 + i;
    k.resources.spill_store_bytes = i;
    k.resources.spill_load_bytes = 2 * i;
    k.resources.stack_frame_bytes = 8;
    k.resources.shared_bytes = 1024 * i;
    k.resources.const_bytes = 380;
    k.resources.barriers = 1;
    k.resources.found = true;
    p.kernels.push_back(k);
  }
  return p;
}

void check_same(const jit::CompiledProgram& a, const jit::CompiledProgram& b) {
  CHECK(a.key == b.key);
  CHECK(a.arch == b.arch);
  CHECK(a.cubin == b.cubin);
  CHECK(a.log == b.log);
  REQUIRE(a.kernels.size() == b.kernels.size());
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    const auto &x = a.kernels[i], &y = b.kernels[i];
    CHECK(x.name_expression == y.name_expression);
    CHECK(x.lowered_name == y.lowered_name);
    CHECK(x.resources.registers == y.resources.registers);
    CHECK(x.resources.spill_store_bytes == y.resources.spill_store_bytes);
    CHECK(x.resources.spill_load_bytes == y.resources.spill_load_bytes);
    CHECK(x.resources.stack_frame_bytes == y.resources.stack_frame_bytes);
    CHECK(x.resources.shared_bytes == y.resources.shared_bytes);
    CHECK(x.resources.const_bytes == y.resources.const_bytes);
    CHECK(x.resources.barriers == y.resources.barriers);
    CHECK(x.resources.found == y.resources.found);
  }
}

TEST_CASE("sqlite cubin cache round-trips programs with kernels and resources", "[cache]") {
  testing::TempDir dir;
  auto cache = SqliteCubinCache::open(dir.file("cubins.db"));
  REQUIRE(cache.is_ok());
  jit::CubinCache& c = **cache;
  CHECK_FALSE(c.get("missing").has_value());
  const auto p = program("0123456789abcdef0123456789abcdef", 3);
  c.put(p);
  auto got = c.get(p.key);
  REQUIRE(got.has_value());
  check_same(*got, p);
  // put replaces; a second process-like instance sees the same entry.
  auto p2 = program(p.key, 1);
  c.put(p2);
  auto other = SqliteCubinCache::open(dir.file("cubins.db"));
  REQUIRE(other.is_ok());
  auto seen = (*other)->get(p.key);
  REQUIRE(seen.has_value());
  check_same(*seen, p2);
  CHECK((*cache)->hits() == 1);
  CHECK((*cache)->misses() == 1);
  CHECK((*cache)->errors() == 0);
  // A program without a key is a counted error, not a crash.
  c.put(jit::CompiledProgram{});
  CHECK((*cache)->errors() == 1);
  CHECK_FALSE((*cache)->last_error().is_ok());
}

TEST_CASE("sqlite cubin cache serves several threads at once", "[cache]") {
  testing::TempDir dir;
  auto cache = SqliteCubinCache::open(dir.file("cubins.db"));
  REQUIRE(cache.is_ok());
  constexpr int kThreads = 4, kEach = 25;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const auto p = program("t" + std::to_string(t) + "-" + std::to_string(i), 1 + i % 3);
        (*cache)->put(p);
        auto got = (*cache)->get(p.key);
        if (!got || got->cubin != p.cubin || got->kernels.size() != p.kernels.size()) ++failures[t];
      }
    });
  for (auto& th : threads) th.join();
  for (int f : failures) CHECK(f == 0);
  CHECK((*cache)->hits() == size_t{kThreads * kEach});
  CHECK((*cache)->errors() == 0);
}

TEST_CASE("the compiler serves a program from the sqlite cache in a new process", "[cache]") {
  testing::TempDir dir;
  const auto spec = jit::make_programs(testing::linear_recurrence_family({1}), 0, "sm_90")[0];
  std::string cubin;
  {
    auto cache = SqliteCubinCache::open(dir.file("cubins.db"));
    REQUIRE(cache.is_ok());
    jit::Compiler compiler(testing::test_sources(), cache->get(), 1);
    auto first = compiler.compile(spec);
    INFO(first.status().to_string());
    REQUIRE(first.is_ok());
    CHECK_FALSE(first->from_cache);
    cubin = first->cubin;
  }
  auto cache = SqliteCubinCache::open(dir.file("cubins.db"));
  REQUIRE(cache.is_ok());
  jit::Compiler compiler(testing::test_sources(), cache->get(), 1);
  auto second = compiler.compile(spec);
  REQUIRE(second.is_ok());
  CHECK(second->from_cache);
  CHECK(second->cubin == cubin);
  CHECK_FALSE(second->kernels.empty());
  CHECK((*cache)->hits() == 1);
}

}  // namespace
}  // namespace ssmtune::cache
