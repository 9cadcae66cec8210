// Which backward plans can start from the states a training forward saved
// (the state entering each of their chunks after the first, fp32, in their
// checkpoint layout), and at which interval the forward must save them.
// The runtime's launches and the backward's benchmark share these rules.
#pragma once

#include "tuner/bwd/config.h"
#include "tuner/bwd/plan.h"

namespace ssmtune::bwd {

// The intervals a forward can save at: a power of two in [4, kBwdMaxChunk] (its
// kernels test for a checkpoint with a mask, at the ends of groups of 4).
bool valid_states_interval(int interval);
// log2(interval) of a valid interval.
int states_shift(int interval);

// The plan's chunk when it can take saved states: fp32 accumulation, a
// valid interval, more than one chunk; else 0.
int states_interval(const BwdConfig& config, const BwdPlan& plan);

}  // namespace ssmtune::bwd
