#include "tuner/random_fill.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tuner/dtype.h"

namespace ssmtune {
namespace {

// Past several chunks of 2^16, so chunk seeding and the thread split count.
constexpr size_t kCount = 200001;

TEST_CASE("random tensors do not depend on the thread count", "[tuner]") {
  std::vector<double> a1, b1, a4, b4;
  fill_random({{&a1, kCount, Sampler::kNormal, 1.0, DType::kBF16},
               {&b1, kCount, Sampler::kUniform, 0.5, DType::kF32, -4.0}},
              7, 1);
  fill_random({{&a4, kCount, Sampler::kNormal, 1.0, DType::kBF16},
               {&b4, kCount, Sampler::kUniform, 0.5, DType::kF32, -4.0}},
              7, 4);
  CHECK(a1 == a4);
  CHECK(b1 == b4);
  CHECK(a1 != b1);
}

TEST_CASE("a list's i-th tensor is stream i + 1 of the seed", "[tuner]") {
  std::vector<double> first, second, alone;
  fill_random({{&first, kCount, Sampler::kNormal, 2.0, DType::kF32},
               {&second, kCount, Sampler::kNormal, 2.0, DType::kF32}},
              11);
  fill_random_stream({&alone, kCount, Sampler::kNormal, 2.0, DType::kF32}, 11, 2);
  CHECK(alone == second);
  CHECK(alone != first);
  std::vector<double> other_seed;
  fill_random_stream({&other_seed, kCount, Sampler::kNormal, 2.0, DType::kF32}, 12, 2);
  CHECK(other_seed != alone);
}

TEST_CASE("random draws have the asked moments, rounded to their dtype", "[tuner]") {
  std::vector<double> n, u;
  fill_random_stream({&n, kCount, Sampler::kNormal, 3.0, DType::kBF16, 1.0}, 5, 0xD0);
  fill_random_stream({&u, kCount, Sampler::kUniform, 2.0, DType::kF16, -1.0}, 5, 0xD1);
  REQUIRE(n.size() == kCount);
  REQUIRE(u.size() == kCount);
  double sn = 0, sn2 = 0, su = 0;
  bool rounded = true, in_range = true;
  for (size_t i = 0; i < kCount; ++i) {
    sn += n[i];
    sn2 += n[i] * n[i];
    su += u[i];
    rounded =
        rounded && round_to(n[i], DType::kBF16) == n[i] && round_to(u[i], DType::kF16) == u[i];
    in_range = in_range && u[i] >= -1.0 && u[i] <= 1.0;
  }
  const double mean = sn / kCount;
  CHECK(mean == Approx(1.0).margin(0.03));
  CHECK(std::sqrt(sn2 / kCount - mean * mean) == Approx(3.0).epsilon(0.02));
  CHECK(su / kCount == Approx(0.0).margin(0.01));
  CHECK(rounded);
  CHECK(in_range);
}

}  // namespace
}  // namespace ssmtune
