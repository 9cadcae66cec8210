// The table of forward algorithms, and what their descriptors share.
#include "tuner/fwd/algorithms.h"

#include "tuner/fwd/algos/common.h"
#include "tuner/fwd/heuristics.h"

namespace ssmtune {

const std::vector<const FwdAlgorithm*>& fwd_algorithms() {
  // The order in which the search space meets them: the chunk-staged
  // algorithms, the pipelined ones, then the time-parallel scans.
  static const std::vector<const FwdAlgorithm*> kTable = {
      &sequential_algorithm(), &multipass_algorithm(), &lookback_algorithm(),
      &pipelined_algorithm(),  &split_algorithm(),     &warpscan_algorithm(),
      &blelloch_algorithm(),   &blockscan_algorithm(),
  };
  return kTable;
}

const FwdAlgorithm* find_fwd_algorithm(ScanAlgo a) {
  for (const FwdAlgorithm* algo : fwd_algorithms())
    if (algo->id() == a) return algo;
  return nullptr;
}

const FwdAlgorithm* find_fwd_algorithm(const std::string& name) {
  for (const FwdAlgorithm* algo : fwd_algorithms())
    if (name == algo->name()) return algo;
  return nullptr;
}

int FwdAlgorithm::block_threads(const FwdProblem&, const FwdConfig& c, const std::string&) const {
  return c.threads;
}

int FwdPlanContext::add_kernel(FwdPlan& plan, const char* kernel) const {
  plan.kernels.push_back(
      {kFwdHeader, std::string("ssmtune_kernels::") + kernel + "<" + traits + ">"});
  return static_cast<int>(plan.kernels.size()) - 1;
}

FwdSpaceBuilder::FwdSpaceBuilder(const FwdProblem& p, const jit::DeviceInfo& device,
                                 const SpaceOptions& options)
    : p_(p), device_(device), options_(options) {}

void FwdSpaceBuilder::add_fp32(FwdConfig c) {
  c.acc = AccType::kF32;
  c.exp_mode = ExpMode::kFast;
  c.poly_share = 0;
  configs_.push_back(c);
  if (!options_.include_poly) return;
  c.exp_mode = ExpMode::kPoly;
  for (int share : {2, 4}) {
    c.poly_share = share;
    configs_.push_back(c);
  }
}

void FwdSpaceBuilder::add_fast(FwdConfig c) {
  c.acc = AccType::kF32;
  c.exp_mode = ExpMode::kFast;
  configs_.push_back(c);
}

void FwdSpaceBuilder::add_fp64_anchor(ScanAlgo a) {
  if (!options_.include_fp64) return;
  configs_.push_back(default_config(p_, a, AccType::kF64, device_.max_shared_per_block));
}

}  // namespace ssmtune
