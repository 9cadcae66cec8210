// Tune on first use: the first call for a shape that the database holds no
// exact entry for runs `ssmtune tune` on it under a time budget, in a child
// process (a faulting or hanging config cannot take the caller down), and the
// call then selects again. Off unless RuntimeOptions::tune_on_first_use_s or
// $SSMTUNE_TUNE_ON_FIRST_USE asks for it.
#pragma once

#include <string>
#include <vector>

#include "ssmtune/status.h"

namespace ssmtune {

// Seconds of measuring per untuned shape from $SSMTUNE_TUNE_ON_FIRST_USE:
// 0 when unset, empty, "0" or "off"; an error for anything but a number >= 0.
Result<double> tune_budget_from_env();

// The ssmtune executable: $SSMTUNE_EXE, else `ssmtune` beside the library or
// program that holds this code, else `ssmtune` on PATH.
std::string tuner_executable();

// The child's command line.
std::vector<std::string> first_use_tune_argv(const std::string& exe, const std::string& problem_key,
                                             const std::string& db_path, double seconds);

// Runs the tuner and waits for it; after `seconds` plus `grace_s` (compiling
// and the fp64 reference come on top of the measuring budget) its process
// group is killed. Returns the wall time; an error if it could not start,
// failed or was killed. Its stdout is discarded, its progress goes to stderr.
Result<double> run_first_use_tune(const std::vector<std::string>& argv, double seconds,
                                  double grace_s = 120);

}  // namespace ssmtune
