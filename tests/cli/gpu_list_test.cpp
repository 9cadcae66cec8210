// --gpus: 'all', lists in the order given, and clear errors for duplicates,
// out-of-range ordinals, malformed lists and a machine without GPUs.
#include "cli/gpu_list.h"

#include <catch2/catch.hpp>

namespace ssmtune::cli {
namespace {

TEST_CASE("the GPU list of --gpus is all or a list of distinct ordinals below the device count",
          "[cli][gpus]") {
  auto all = parse_gpu_list("all", 4);
  REQUIRE(all.is_ok());
  CHECK(*all == std::vector<int>{0, 1, 2, 3});
  auto one = parse_gpu_list("0", 1);
  REQUIRE(one.is_ok());
  CHECK(*one == std::vector<int>{0});
  auto list = parse_gpu_list("2,0,7", 8);
  REQUIRE(list.is_ok());
  CHECK(*list == std::vector<int>{2, 0, 7});

  auto twice = parse_gpu_list("0,2,0", 4);
  REQUIRE_FALSE(twice.is_ok());
  CHECK(twice.status().code() == Code::kInvalidArgument);
  CHECK(twice.status().message().find("GPU 0 is listed twice") != std::string::npos);

  auto high = parse_gpu_list("0,4", 4);
  REQUIRE_FALSE(high.is_ok());
  CHECK(high.status().code() == Code::kInvalidArgument);
  CHECK(high.status().message().find("no GPU 4") != std::string::npos);
  CHECK(high.status().message().find("ordinals 0 to 3") != std::string::npos);
  auto beyond_one = parse_gpu_list("1", 1);
  REQUIRE_FALSE(beyond_one.is_ok());
  CHECK(beyond_one.status().message().find("one GPU, ordinal 0") != std::string::npos);

  for (const char* bad :
       {"", ",", "0,", ",1", "0,,1", "-1", "x", "0x1", "1.0", "ALL", " 0", "0 ,1", "1234567"}) {
    INFO(bad);
    auto r = parse_gpu_list(bad, 8);
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().code() == Code::kInvalidArgument);
    CHECK(r.status().message().find("'all' or a comma-separated list") != std::string::npos);
  }

  auto none = parse_gpu_list("all", 0);
  REQUIRE_FALSE(none.is_ok());
  CHECK(none.status().code() == Code::kNoDriver);
}

}  // namespace
}  // namespace ssmtune::cli
