// What one BwdConfig runs for one BwdProblem: the kernel instantiations (one
// function builds each name expression), the launches in order with grids,
// blocks and shared memory, and the scratch layout (the same constexpr
// function the kernels index it with). Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "jit/module.h"
#include "jit/program_builder.h"
#include "ssm/bwd/bwd_params.cuh"
#include "tuner/bwd/config.h"

namespace ssmtune::bwd {

struct BwdLaunch {
  int kernel = 0;  // index into BwdPlan::kernels
  jit::Dim3 grid, block;
  unsigned shared_bytes = 0;  // dynamic
};

struct BwdPlan {
  std::vector<jit::Instantiation> kernels;
  std::vector<BwdLaunch> launches;  // in order, on one stream
  int n_chunks = 1;
  int tiles_per_group = 1;
  int segments = 1;  // multipass: segments actually launched (none empty)
  int seg_chunks = 1;
  int bias_slices = 1;  // ddelta_bias partial rows per batch row (the state sum's slices)
  ssmtune_kernels::BwdScratchLayout scratch{};
  size_t max_shared_bytes = 0;
};

// The header every backward kernel is instantiated from.
inline constexpr const char* kBwdHeader = "ssm/bwd/bwd_all.cuh";

// "ssmtune_kernels::BwdTraits<__nv_bfloat16, float, 16, 32, 8, 4, ...>".
std::string traits_expression(const BwdProblem& p, const BwdConfig& c);
// "ssmtune_kernels::<kernel><traits>".
std::string kernel_expression(const char* kernel, const BwdProblem& p, const BwdConfig& c);

Result<BwdPlan> plan_bwd(const BwdProblem& p, const BwdConfig& c, size_t max_shared_bytes = 0);

}  // namespace ssmtune::bwd
