// The saved states' interval rules.
#include "tuner/bwd/states.h"

#include "ssm/bwd/bwd_params.cuh"

namespace ssmtune::bwd {

bool valid_states_interval(int interval) {
  return interval >= 4 && interval <= ssmtune_kernels::kBwdMaxChunk &&
         (interval & (interval - 1)) == 0;
}

int states_shift(int interval) {
  int shift = 0;
  while ((1 << shift) < interval) ++shift;
  return shift;
}

int states_interval(const BwdConfig& config, const BwdPlan& plan) {
  if (config.acc != BwdAcc::kF32 || !valid_states_interval(config.chunk)) return 0;
  return plan.n_chunks > 1 ? config.chunk : 0;
}

}  // namespace ssmtune::bwd
