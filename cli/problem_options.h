// The problem flags shared by tune, bench and check: sizes, dtype and the
// feature flags, parsed into a validated FwdProblem.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "tuner/family.h"
#include "tuner/fwd/problem.h"
#include "tuner/step/problem.h"

namespace ssmtune::cli {

struct ProblemArgs {
  std::string key;  // a whole problem key; when set, the size and flag options are not used
  int64_t batch = 8, dim = 1536, seqlen = 2048, dstate = 16, groups = 1;
  std::string dtype = "fp32";
  bool constant_bc = false, with_d = false, with_z = false, delta_bias = false;
  bool softplus = false, last_state = false, initial_state = false;
  // The decode step's own (family step): --dim is heads x headdim.
  int64_t heads = 1;
  std::string state_dtype = "fp32";
  bool state_indices = false;
  const CLI::App* cmd = nullptr;  // set by add_problem_options: which options were given

  std::string family = "fwd";  // the kernel family the size and flag options describe
  // The forward problem of the options (an error for another family's key).
  Result<FwdProblem> problem() const;
  // The problem of any family: the key as given, else the options as a
  // problem of `family` (the forward's sizes and flags under its prefix).
  Result<ParsedProblem> any_problem() const;
  // The step problem of the options (family step).
  Result<step::StepProblem> step_problem() const;
  // Both refuse --problem "" and --problem with any of the size or flag
  // options (the key already fixes them all).
  Status check_given() const;
};

// Adds --problem (a key as `ssmtune db list` prints it), --batch, --dim, --seqlen, --dstate,
// --groups, --dtype, --constant-bc,
// --with-d, --with-z, --delta-bias, --softplus, --last-state, --initial-state, and the
// step's --heads, --state-dtype, --state-indices.
void add_problem_options(CLI::App* cmd, ProblemArgs& args);

}  // namespace ssmtune::cli
