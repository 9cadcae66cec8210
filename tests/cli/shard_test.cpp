// --shard I/N: parsing and the split of a shape list (every distinct key in
// exactly one shard, the same whatever the list's order or repetitions).
#include "cli/shard.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <set>

namespace ssmtune::cli {
namespace {

TEST_CASE("a shard is I/N and refuses anything else", "[cli][shard]") {
  auto s = parse_shard("3/8");
  REQUIRE(s.is_ok());
  CHECK(s->index == 3);
  CHECK(s->count == 8);
  auto one = parse_shard("0/1");
  REQUIRE(one.is_ok());
  CHECK(one->count == 1);
  auto zeros = parse_shard("007/010");  // decimal, as every integer option
  REQUIRE(zeros.is_ok());
  CHECK(zeros->index == 7);
  CHECK(zeros->count == 10);
  for (const char* bad : {"", "3", "3/", "/8", "-1/8", "3/-8", "0x1/8", "1/0x8", "a/b", "1/2/3",
                          " 1/2", "1 /2", "1.0/2", "99999999/100000000"}) {
    INFO(bad);
    auto r = parse_shard(bad);
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().code() == Code::kInvalidArgument);
    CHECK(r.status().message().find("I/N") != std::string::npos);
  }
  auto high = parse_shard("8/8");
  REQUIRE_FALSE(high.is_ok());
  CHECK(high.status().message().find("from 0 to 7") != std::string::npos);
  auto zero = parse_shard("0/0");
  REQUIRE_FALSE(zero.is_ok());
  CHECK(zero.status().message().find("N must be from 1") != std::string::npos);
}

TEST_CASE("shards split the sorted distinct keys, every N-th from the I-th", "[cli][shard]") {
  const std::vector<std::string> keys{"fwd:d", "fwd:a", "bwd:c", "fwd:b", "fwd:a", "fwd:e"};
  // Sorted distinct: bwd:c fwd:a fwd:b fwd:d fwd:e (positions 2 1 3 0 5).
  CHECK(shard_positions(keys, {0, 1}) == std::vector<size_t>{2, 1, 3, 0, 5});
  CHECK(shard_positions(keys, {0, 2}) == std::vector<size_t>{2, 3, 5});
  CHECK(shard_positions(keys, {1, 2}) == std::vector<size_t>{1, 0});
  CHECK(shard_positions(keys, {4, 5}) == std::vector<size_t>{5});
  CHECK(shard_positions(keys, {6, 7}).empty());  // more shards than keys: empty ones
  CHECK(shard_positions({}, {0, 3}).empty());
}

TEST_CASE("every key lands in exactly one shard, whatever the list's order", "[cli][shard]") {
  const uint32_t seed = 0x5eed1900u;
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  std::vector<std::string> keys;
  for (int i = 0; i < 61; ++i)
    keys.push_back("fwd:b" + std::to_string(rng() % 40) + ".d" + std::to_string(rng() % 7));
  const std::set<std::string> distinct(keys.begin(), keys.end());
  for (int n : {1, 2, 3, 7, 8, 64}) {
    INFO("N = " << n);
    std::map<std::string, int> seen;
    std::vector<std::vector<std::string>> by_shard(n);
    for (int i = 0; i < n; ++i)
      for (size_t pos : shard_positions(keys, {i, n})) {
        ++seen[keys[pos]];
        by_shard[i].push_back(keys[pos]);
      }
    CHECK(seen.size() == distinct.size());
    for (const auto& [key, count] : seen) CHECK(count == 1);
    // Balanced: shard sizes differ by at most one.
    size_t lo = distinct.size(), hi = 0;
    for (const auto& s : by_shard) {
      lo = std::min(lo, s.size());
      hi = std::max(hi, s.size());
    }
    CHECK(hi - lo <= 1);
    // The same shards from a shuffled list.
    std::vector<std::string> shuffled = keys;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    for (int i = 0; i < n; ++i) {
      std::vector<std::string> again;
      for (size_t pos : shard_positions(shuffled, {i, n})) again.push_back(shuffled[pos]);
      CHECK(again == by_shard[i]);
    }
  }
}

}  // namespace
}  // namespace ssmtune::cli
