// Seeded random inputs of a decode-step problem on the host, each value
// rounded to the dtype it is stored in, contiguous in the shapes of
// tuner/step/problem.h (D and dt_bias fp32), and the fp64 reference step.
// Values; deterministic for a seed.
#pragma once

#include <cstdint>
#include <vector>

#include "tuner/family.h"
#include "tuner/step/problem.h"

namespace ssmtune::step {

struct StepHostInputs {
  StepProblem problem;
  int64_t rows = 0;  // state rows: batch, or 2 * batch with indices
  std::vector<double> state, x, dt, A, B, C, D, z, dt_bias;
  // With indices: distinct rows drawn from the seed; with batch >= 4 the
  // last entry is padding (-1).
  std::vector<int64_t> indices;
};

// As mamba_ssm's test of the step draws them: state, x, B, C, D, z ~ randn;
// A ~ -1 - rand; dt ~ randn and dt_bias ~ rand - 4 with softplus, else dt,
// dt_bias ~ 0.5 rand. kSlowDecay: A ~ -1e-3 rand; kLarge: x, B, C ~ 4 randn.
StepHostInputs make_step_inputs(const StepProblem& p, uint64_t seed,
                                InputDistribution dist = InputDistribution::kMamba);

struct StepHostOutputs {
  std::vector<double> out;    // (batch, heads, headdim)
  std::vector<double> state;  // every row after the step (rows not stepped unchanged)
};

// The step in fp64 from the rounded inputs (softplus above 20 is the
// identity, as mamba_ssm has it); padding entries give out = 0.
StepHostOutputs reference_step(const StepHostInputs& in);

}  // namespace ssmtune::step
