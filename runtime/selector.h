// Which config a library call runs: the tuning database's exact entry for
// this device and problem; else the nearest tuned problem on this device
// with the same dtypes and flags (distance in log space over batch, dim,
// seqlen, dstate) whose config is legal for the new shape; else the
// built-in heuristic default. Stale entries (other driver, NVRTC or
// templates) are never used. The choice says which rule picked it and why.
#pragma once

#include <string>

#include "cache/tuning_db.h"
#include "jit/device.h"
#include "tuner/kernel_config.h"
#include "tuner/problem.h"

namespace ssmtune {

enum class SelectRule { kExact, kNearest, kDefault };
const char* to_string(SelectRule r);  // "exact", "nearest", "default"

struct ConfigChoice {
  KernelConfig config;
  SelectRule rule = SelectRule::kDefault;
  std::string source_problem;  // the database entry's problem (exact, nearest)
  double source_ms = 0;        // its measured median
  double distance = 0;         // nearest: log-space distance to the source problem
  std::string reason;          // one human-readable line
};

// Log-space distance over the four sizes (groups must match for nearest).
double problem_distance(const Problem& a, const Problem& b);

// `db` may be null (no database: the default). Errors only on database failure.
Result<ConfigChoice> choose_config(cache::TuningDb* db, const jit::DeviceInfo& device,
                                   const Versions& versions, const Problem& p);

}  // namespace ssmtune
