#include "jit/cubin_cache.h"

#include <catch2/catch.hpp>

#include "support/test_family.h"

#include "jit/compiler.h"
#include "jit/program_builder.h"

namespace ssmtune::jit {
namespace {

CompiledProgram fake(const std::string& key, size_t bytes) {
  CompiledProgram p;
  p.key = key;
  p.cubin.assign(bytes, 'x');
  return p;
}

TEST_CASE("memory cache counts hits and misses and evicts least recent", "[jit]") {
  MemoryCubinCache cache(250);
  CHECK_FALSE(cache.get("a").has_value());
  cache.put(fake("a", 100));
  cache.put(fake("b", 100));
  CHECK(cache.get("a").has_value());  // a is now most recent
  cache.put(fake("c", 100));          // over 250: evicts b
  CHECK(cache.get("a").has_value());
  CHECK_FALSE(cache.get("b").has_value());
  CHECK(cache.get("c").has_value());
  CHECK(cache.hits() == 3);
  CHECK(cache.misses() == 2);
  CHECK(cache.entries() == 2);
}

TEST_CASE("compiler serves a repeated program from the cache", "[jit]") {
  MemoryCubinCache cache;
  Compiler compiler(testing::test_sources(), &cache, 1);
  auto spec = make_programs(testing::linear_recurrence_family({1}), 0, "sm_90")[0];
  auto first = compiler.compile(spec);
  REQUIRE(first.is_ok());
  CHECK_FALSE(first->from_cache);
  CHECK(first->compile_seconds > 0);
  CHECK(cache.misses() == 1);
  auto second = compiler.compile(spec);
  REQUIRE(second.is_ok());
  CHECK(second->from_cache);
  CHECK(second->cubin == first->cubin);
  CHECK(cache.hits() == 1);
  spec.arch = "sm_80";
  auto third = compiler.compile(spec);
  REQUIRE(third.is_ok());
  CHECK_FALSE(third->from_cache);
  CHECK(cache.misses() == 2);
}

}  // namespace
}  // namespace ssmtune::jit
