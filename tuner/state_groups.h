// How many blocks share a channel's states (state groups) in the warp
// scans' defaults, forward and backward: one rule for both families.
#pragma once

#include <cstdint>

namespace ssmtune {

// Below this many (batch x dim) channels a warp each leaves an H200's 132
// SMs under 8 warps: the search spaces then hold several warps a channel
// and the state groups.
constexpr int64_t kFewChannels = 1024;

// Most state groups a default takes (the spaces go to 8; past 8 groups of a
// channel's dstate <= 16 states a block has one or two).
constexpr int kMaxDefaultStateGroups = 8;

// Shortest sequence a default splits a channel's states at: below it the
// second launch (the sum over groups) costs more than the groups save (the
// shortest measured, 128 steps, gained: tuner/state_groups.cpp).
constexpr int64_t kStateGroupMinSeqlen = 128;

// Warps a channel a default with state groups runs at least (8: the
// shortest chunk, 1024 steps, the state-group configs are tested and timed at).
constexpr int kStateGroupMinWarps = 8;

// A default's state groups and the warps a channel they run at.
struct StateGroups {
  int groups = 1;
  int warps = 1;
};

// The state groups for `channels` channels of `dstate` states and `seqlen`
// steps whose chunk wants `warps` warps a channel (one channel a block): at
// max(warps, kStateGroupMinWarps) warps, the largest power of 2, at most
// dstate and kMaxDefaultStateGroups, whose blocks fill at most one wave of
// 16 warps per SM (sm_count 0: 132 SMs). groups 1 where even 2 would not
// fit, or below kStateGroupMinSeqlen steps.
StateGroups default_state_groups(int64_t channels, int dstate, int64_t seqlen, int warps,
                                 int sm_count);

}  // namespace ssmtune
