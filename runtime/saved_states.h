// The states a training forward saves for its backward: the state entering
// every chunk of the backward after the first, fp32, in the backward's
// checkpoint layout [(b, j - 1, n, d)] (ssm/bwd/bwd_params.cuh
// bwd_ckpt_index), so the backward skips the pass that recomputes them (on
// the H200 at (8, 1536, 2048, 16) bf16 with the block's flags, 1.176 ->
// 0.994 ms, bench/NOTES.md version 10). What they cost is
// batch * (ceil(seqlen / interval) - 1) * dstate * dim * 4 bytes: at
// dstate 16 and interval 16, about an fp32 copy of u (docs/memory.md).
#pragma once

#include "ssmtune/status.h"
#include "tuner/bwd/states.h"  // which plans take them, at which interval

namespace ssmtune {

// A launch's states buffer: given, and aligned to its fp32 elements.
Status check_states_buffer(const void* states);

}  // namespace ssmtune
