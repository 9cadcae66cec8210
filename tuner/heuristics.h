// Built-in default configs: what runs when the tuning database knows
// nothing about a problem, and the starting point of each algorithm in
// tests and in `ssmtune check`. Each choice says why beside its value.
#pragma once

#include <string>

#include "tuner/kernel_config.h"
#include "tuner/problem.h"

namespace ssmtune {

// A legal config of `algo` for `p`, with `acc` accumulation, whose shared
// memory fits `max_shared_bytes` (0: no limit; the chunk shrinks to fit).
KernelConfig default_config(const Problem& p, ScanAlgo algo, AccType acc = AccType::kF32,
                            size_t max_shared_bytes = 0);

// The default for a problem when nothing was tuned, and why.
struct DefaultChoice {
  KernelConfig config;
  std::string reason;
};
DefaultChoice heuristic_default(const Problem& p, int sm_count, size_t max_shared_bytes);

}  // namespace ssmtune
