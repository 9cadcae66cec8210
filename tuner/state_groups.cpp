// The state-group rule of the warp scans' defaults. Measured on an H100
// (132 SMs), with the block's flags, `ssmtune bench`, ms, 1 / 2 / 4 / 8
// groups (bench/NOTES.md version 20):
//   backward (2,4,2048,8) bf16   0.0396 / 0.0306 / 0.0261 / 0.0238
//   backward (2,4,4096,8) fp32   0.0593 / 0.0411 / 0.0331 / 0.0307
//   backward (2,32,4096,8) fp32  0.0635 / 0.0541 / 0.0676 / 0.0918
//   forward  (2,4,2048,8) bf16   16 warps: 4 / 8 groups 0.0136 / 0.0124 (one group,
//                                kernel time through torch: 0.0152)
// so: as many groups as the states allow while the blocks stay within one
// wave of 16 warps per SM (64 channels of 16 warps: 2 groups).
#include "tuner/state_groups.h"

#include <algorithm>

namespace ssmtune {

StateGroups default_state_groups(int64_t channels, int dstate, int64_t seqlen, int warps,
                                 int sm_count) {
  StateGroups g;
  g.warps = std::max(warps, kStateGroupMinWarps);
  if (seqlen < kStateGroupMinSeqlen) return g;
  constexpr int64_t kWarpsPerSm = 16;
  const int64_t budget = kWarpsPerSm * (sm_count > 0 ? sm_count : 132);
  while (g.groups * 2 <= kMaxDefaultStateGroups && g.groups * 2 <= dstate &&
         channels * g.warps * g.groups * 2 <= budget)
    g.groups *= 2;
  return g;
}

}  // namespace ssmtune
