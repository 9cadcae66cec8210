// One point of the decode step's kernel space: channels per block, threads
// per channel, states a thread moves as one vector, accumulation dtype. A
// value type with a stable text key, its legality for a problem, the
// search space and the default with its reason. Pure functions.
#pragma once

#include <string>
#include <vector>

#include "ssmtune/status.h"
#include "tuner/step/problem.h"

namespace ssmtune::step {

enum class StepAcc { kF32, kF64 };

struct StepConfig {
  int d_step = 32;  // channels per block
  int lanes = 4;    // threads per channel (a power of two, at most 32)
  int vec = 4;      // consecutive states a thread moves as one vector (1, 2, 4, 8)
  StepAcc acc = StepAcc::kF32;

  int threads() const { return d_step * lanes; }
  // Passes of a channel's lanes over its dstate states.
  int passes(int64_t dstate) const {
    const int64_t per_pass = int64_t{lanes} * vec;
    return static_cast<int>((dstate + per_pass - 1) / per_pass);
  }
  // "step.D32.L4.V4.fp32".
  std::string key() const;
  static Result<StepConfig> from_key(const std::string& key);
};

bool operator==(const StepConfig& a, const StepConfig& b);

// Ok, or why the config cannot run the problem (the templates'
// static_asserts, checked before compiling).
Status check_config(const StepProblem& p, const StepConfig& c);

// Every config worth timing: lanes x vector widths that leave no lane
// without states, 64 to 256 threads, blocks no wider than the head; plus
// the default in fp64 (the accuracy anchor).
std::vector<StepConfig> search_space(const StepProblem& p);

struct StepDefault {
  StepConfig config;
  std::string reason;
};
// 16-byte state vectors (fewer where dstate is smaller), the lanes that
// cover dstate in one pass (up to 32), 128 threads; 64 where the grid would
// not fill the SMs twice over (sm_count 0: unknown).
StepDefault default_config(const StepProblem& p, StepAcc acc = StepAcc::kF32, int sm_count = 0);

}  // namespace ssmtune::step
