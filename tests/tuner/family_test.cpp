// The floors every family reports: bytes over the copy bandwidth, exps over
// 16 per clock per SM, and the work they were computed from (what `ssmtune
// bench` rescales to another bandwidth).
#include "tuner/family.h"

#include <catch2/catch.hpp>

namespace ssmtune {
namespace {

TEST_CASE("floors: bytes over the bandwidth, exps over the exp units, the work kept", "[tuner]") {
  jit::DeviceInfo h200;
  h200.sm_count = 132;
  h200.sm_clock_khz = 1980000;
  const Floors f = floors_for(4.22e9, 4.18176e9, h200);  // the default 4220 GB/s
  CHECK(f.bytes == 4.22e9);
  CHECK(f.exps == 4.18176e9);
  CHECK(f.bytes_ms == Approx(1.0));
  CHECK(f.exp_ms == Approx(1.0));  // 16 x 132 x 1.98 GHz = 4.18e12 exp/s
  CHECK(f.floor_ms() == Approx(1.0));
  // Rescaled from the kept work to half the bandwidth: the bytes floor doubles.
  const Floors g = floors_for(f.bytes, f.exps, h200, 2110);
  CHECK(g.bytes_ms == Approx(2.0));
  CHECK(g.exp_ms == Approx(1.0));
  CHECK(g.floor_ms() == Approx(2.0));
  // No clock known: no exp floor, never a division by zero.
  const Floors n = floors_for(1e9, 1e9, jit::DeviceInfo{});
  CHECK(n.exp_ms == 0);
  CHECK(n.floor_ms() == Approx(n.bytes_ms));
}

}  // namespace
}  // namespace ssmtune
