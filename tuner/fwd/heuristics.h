// Built-in default configs: what runs when the tuning database knows
// nothing about a problem, and the starting point of each algorithm in
// tests and in `ssmtune check`. Each choice says why beside its value.
#pragma once

#include <string>

#include "tuner/fwd/config.h"
#include "tuner/fwd/problem.h"

namespace ssmtune {

// A legal config of `algo` for `p`, with `acc` accumulation, whose shared
// memory fits `max_shared_bytes` (0: no limit; the chunk shrinks to fit).
FwdConfig default_config(const FwdProblem& p, ScanAlgo algo, AccType acc = AccType::kF32,
                         size_t max_shared_bytes = 0);

// The default for a problem when nothing was tuned, and why.
struct FwdDefaultChoice {
  FwdConfig config;
  std::string reason;
};
FwdDefaultChoice heuristic_default(const FwdProblem& p, int sm_count, size_t max_shared_bytes);

}  // namespace ssmtune
