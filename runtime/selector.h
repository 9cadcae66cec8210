// Which config a library call runs, for any kernel family (the forward's
// and the backward's typed): the tuning database's exact entry for this
// device and problem; else the exact entry of an identical GPU (same
// device class: name, compute capability, SM count, memory where both rows
// know it (tuner/records.h same_class); e.g. the database was
// tuned on another H200 and copied here); else the nearest tuned problem
// on this device or an identical one with the same dtypes and flags
// (distance in log space over batch, dim, seqlen, dstate; this device's
// entry wins a tie) whose config is legal for the new shape; else the
// built-in heuristic default. Entries of another class (an H100's for an
// H200) are never used, nor stale ones (other driver, NVRTC or
// templates). The choice says which rule picked it, from which GPU, and why.
// Over a stack of databases (cache/db_stack.h: local, then read-only shared
// layers) each rule is tried in every layer, local first, before the next
// rule: a local exact entry beats a shared one, a shared exact entry beats
// a local nearest one; the choice names the layer its entry came from.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cache/db_stack.h"
#include "cache/tuning_db.h"
#include "jit/device.h"
#include "tuner/bwd/config.h"
#include "tuner/family.h"
#include "tuner/fwd/config.h"
#include "tuner/fwd/problem.h"
#include "tuner/step/config.h"

namespace ssmtune {

enum class SelectRule { kExact, kExactClass, kNearest, kDefault };
// "exact", "exact-class" (an identical GPU's entry), "nearest", "default"
const char* to_string(SelectRule r);
// Exact for this problem, on this GPU or an identical one: worth no tuning.
inline bool is_exact(SelectRule r) {
  return r == SelectRule::kExact || r == SelectRule::kExactClass;
}

// A family's choice with its config parsed.
template <typename Config>
struct TypedChoice {
  Config config;
  SelectRule rule = SelectRule::kDefault;
  std::string source_problem;  // the database entry's problem (exact, nearest)
  double source_ms = 0;        // its measured median
  std::string source_device;   // the entry's GPU (UUID), when not this one
  double distance = 0;         // nearest: log-space distance to the source problem
  std::string source_db;       // the database (path) the entry came from; empty: default
  bool source_shared = false;  // that database is a shared (read-only) layer
  std::string reason;          // one human-readable line
};
using ConfigChoice = TypedChoice<FwdConfig>;  // the forward's
using BwdChoice = TypedChoice<bwd::BwdConfig>;
using StepChoice = TypedChoice<step::StepConfig>;

// A choice for a problem of any family: the config key and how it was found.
struct FamilyChoice {
  std::string config;
  SelectRule rule = SelectRule::kDefault;
  std::string source_problem;
  double source_ms = 0;
  std::string source_device;  // the entry's GPU (UUID), when not this one
  double distance = 0;
  std::string source_db;       // the database (path) the entry came from; empty: default
  bool source_shared = false;  // that database is a shared (read-only) layer
  std::string reason;          // with several layers it ends "[from the shared database P]"
};

// Exact (this GPU, then an identical one), nearest (same problem class,
// legal for the problem, on this GPU or an identical one), else the
// family's heuristic default. `db` may be null (no database: the
// default). Errors only on database failure.
Result<FamilyChoice> choose_family_config(cache::TuningDb* db, const KernelFamily& family,
                                          const FamilyProblem& problem,
                                          const jit::DeviceInfo& device, const Versions& versions);
// The same over a stack of databases, local first (empty: the default).
Result<FamilyChoice> choose_family_config(const std::vector<cache::DbLayer>& layers,
                                          const KernelFamily& family, const FamilyProblem& problem,
                                          const jit::DeviceInfo& device, const Versions& versions);

// Log-space distance over the four sizes (groups must match for nearest).
double problem_distance(const FwdProblem& a, const FwdProblem& b);

// The forward's choice, typed (over one database or a stack).
Result<ConfigChoice> choose_config(cache::TuningDb* db, const jit::DeviceInfo& device,
                                   const Versions& versions, const FwdProblem& p);
Result<ConfigChoice> choose_config(const std::vector<cache::DbLayer>& layers,
                                   const jit::DeviceInfo& device, const Versions& versions,
                                   const FwdProblem& p);
// The backward's ("bwd:" entries), typed.
Result<BwdChoice> choose_bwd_config(cache::TuningDb* db, const jit::DeviceInfo& device,
                                    const Versions& versions, const bwd::BwdProblem& p);
Result<BwdChoice> choose_bwd_config(const std::vector<cache::DbLayer>& layers,
                                    const jit::DeviceInfo& device, const Versions& versions,
                                    const bwd::BwdProblem& p);

// The decode step's ("step:" entries), typed.
Result<StepChoice> choose_step_config(const std::vector<cache::DbLayer>& layers,
                                      const jit::DeviceInfo& device, const Versions& versions,
                                      const step::StepProblem& p);

// $SSMTUNE_FORCE_CONFIG: comma-separated config keys, at most one per
// family, each forcing every problem of its family to run it.
struct ForcedConfigs {
  std::optional<FwdConfig> fwd;
  std::optional<bwd::BwdConfig> bwd;
  std::optional<step::StepConfig> step;
};
Result<ForcedConfigs> parse_forced_configs(const std::string& text);

}  // namespace ssmtune
