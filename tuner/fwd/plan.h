// What one FwdConfig runs for one FwdProblem: the kernel instantiations (the
// single function that builds their name expressions), the launches in
// order with their grids, blocks and shared memory, and the scratch the
// config needs, from the algorithm's descriptor (tuner/fwd/algorithms.h).
// Host-side legality checks mirror the templates' static_asserts so illegal
// configs are rejected before compiling. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "jit/module.h"
#include "jit/program_builder.h"
#include "tuner/fwd/config.h"
#include "tuner/fwd/problem.h"

namespace ssmtune {

struct FwdLaunch {
  int kernel = 0;  // index into FwdPlan::kernels
  jit::Dim3 grid, block;
  unsigned shared_bytes = 0;  // dynamic
};

struct FwdPlan {
  std::vector<jit::Instantiation> kernels;
  std::vector<FwdLaunch> launches;  // in order, on one stream
  int n_chunks = 1;
  int segments = 1;          // split: segments (grid z of its per-tile kernels)
  int seg_chunks = 0;        // split: chunks per segment (the last may have fewer)
  size_t carries_bytes = 0;  // multipass / lookback accumulators
  size_t flags_bytes = 0;    // lookback: flag words plus the tile counter (zeroed per call)
  size_t max_shared_bytes = 0;
};

// The header every forward kernel is instantiated from.
inline constexpr const char* kFwdHeader = "ssm/fwd_all.cuh";

// Producer threads the pipelined kernel adds to its compute threads for
// this problem (the same constexpr function the kernel uses).
int pipe_producers(const FwdProblem& p);

// Ok, or kInvalidArgument saying which rule the config breaks for this
// problem. `max_shared_bytes` is the device's opt-in limit per block (0: skip).
Status check_config(const FwdProblem& p, const FwdConfig& c, size_t max_shared_bytes = 0);

// "ssmtune_kernels::FwdTraits<float, float, 16, ...>" for this problem and config.
std::string traits_expression(const FwdProblem& p, const FwdConfig& c);

Result<FwdPlan> plan_fwd(const FwdProblem& p, const FwdConfig& c, size_t max_shared_bytes = 0);

// The fp64 GPU reference kernel for a problem's input dtype.
jit::Instantiation reference_instantiation(DType dtype);

}  // namespace ssmtune
