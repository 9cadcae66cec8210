// The forward kernel space for one problem on one device: every config over
// the algorithm, chunk K, d_step, accumulation dtype and the secondary knobs
// (threads, items, n_split, exp mode), each either a candidate or pruned
// with its reason. Pruning happens in two stages: before compiling (illegal
// combinations, shared memory over the device's limit) and after
// (prune_by_resources: spills, or registers that leave too little occupancy).
#pragma once

#include <string>
#include <vector>

#include "jit/cubin_cache.h"
#include "jit/device.h"
#include "tuner/family.h"
#include "tuner/fwd/config.h"
#include "tuner/fwd/problem.h"

namespace ssmtune {

struct FwdSpaceEntry {
  FwdConfig config;
  bool pruned = false;
  std::string reason;  // why it was pruned
};

std::vector<FwdSpaceEntry> search_space(const FwdProblem& p, const jit::DeviceInfo& device,
                                        const SpaceOptions& options = {});

// The order in which a time-limited first look should meet the candidates:
// `first` (the heuristic default) leads, then the algorithms take turns,
// each one's MUFU-exp fp32 configs before its poly and fp64 ones, so a
// budget cut short still leaves every algorithm measured.
std::vector<FwdConfig> first_look_order(const std::vector<FwdConfig>& candidates,
                                        const std::string& first_key = "");

// Empty when the compiled kernels are fit to time; else why not: any spill,
// or fewer than `min_warps_per_sm` resident warps given the registers.
std::string prune_by_resources(const FwdProblem& p, const FwdConfig& c,
                               const std::vector<jit::KernelImage>& kernels,
                               const jit::DeviceInfo& device, int min_warps_per_sm = 8);

// The static cost model of a config fit to time (after prune_by_resources):
// 0, or 1 when its kernels leave fewer than `few_warps_per_sm` resident
// warps (registers or static shared memory), 2 when they spill at all.
int resource_rank(const FwdProblem& p, const FwdConfig& c,
                  const std::vector<jit::KernelImage>& kernels, const jit::DeviceInfo& device,
                  int few_warps_per_sm = 16);

}  // namespace ssmtune
