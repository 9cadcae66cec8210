// The warp scans' default state groups (tuner/state_groups.h).
#include "tuner/state_groups.h"

#include <catch2/catch.hpp>

namespace ssmtune {
namespace {

TEST_CASE("default state groups fill one wave of 16 warps per SM", "[tuner]") {
  // 132 SMs: 2112 warps. 8 channels of 16 warps: 8 groups (1024 warps), the cap.
  CHECK(default_state_groups(8, 8, 2048, 16, 132).groups == 8);
  CHECK(default_state_groups(8, 64, 2048, 16, 132).groups == 8);
  // 64 channels of 16 warps: 2 (2048 warps); of 8 warps: 4.
  CHECK(default_state_groups(64, 16, 4096, 16, 132).groups == 2);
  CHECK(default_state_groups(64, 16, 1024, 8, 132).groups == 4);
  // 128 channels of 16 warps: even 2 groups pass the wave.
  CHECK(default_state_groups(128, 16, 2048, 16, 132).groups == 1);
  // No more groups than states.
  CHECK(default_state_groups(8, 4, 2048, 16, 132).groups == 4);
  CHECK(default_state_groups(8, 3, 2048, 16, 132).groups == 2);
  CHECK(default_state_groups(8, 1, 2048, 16, 132).groups == 1);
  // Fewer SMs, fewer groups; an unknown count is taken as 132.
  CHECK(default_state_groups(8, 8, 2048, 16, 16).groups == 2);
  CHECK(default_state_groups(8, 8, 2048, 16, 0).groups ==
        default_state_groups(8, 8, 2048, 16, 132).groups);
  // Below kStateGroupMinSeqlen steps, one group.
  CHECK(default_state_groups(8, 8, kStateGroupMinSeqlen - 1, 8, 132).groups == 1);
  CHECK(default_state_groups(8, 8, kStateGroupMinSeqlen, 8, 132).groups == 8);
  // A chunk wanting fewer warps runs at kStateGroupMinWarps; more stay.
  CHECK(default_state_groups(8, 8, 256, 2, 132).warps == kStateGroupMinWarps);
  CHECK(default_state_groups(8, 8, 2048, 16, 132).warps == 16);
}

}  // namespace
}  // namespace ssmtune
