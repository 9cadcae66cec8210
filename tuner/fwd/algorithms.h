// One descriptor per forward scan algorithm: its name, its legality rules,
// its shared memory (from the templates' constexpr layouts), its launches
// and scratch, its part of the search space and its default layout with the
// reasons. plan, heuristics, search_space and the config keys read the table
// (fwd_algorithms()) instead of switching on ScanAlgo. Adding an algorithm:
// its template, its ScanAlgo value, a descriptor in tuner/fwd/algos/ and one
// line in algorithms.cpp.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "jit/device.h"
#include "tuner/family.h"
#include "tuner/fwd/config.h"
#include "tuner/fwd/plan.h"
#include "tuner/fwd/problem.h"

namespace ssmtune {

// What every launch of one (problem, config) shares, and how a plan adds a
// kernel instantiation.
struct FwdPlanContext {
  const FwdProblem& p;
  const FwdConfig& c;
  std::string traits;  // traits_expression(p, c)
  unsigned tiles = 0;  // channel tiles over all groups: grid x of the per-tile kernels
  unsigned batch = 0;  // grid y of the per-tile kernels
  jit::Dim3 block;     // c.threads
  unsigned smem = 0;   // the algorithm's dynamic shared memory
  int acc_bytes = 4;   // 4 (fp32) or 8 (fp64) per accumulator
  // Appends "ssmtune_kernels::<kernel><traits>" to plan.kernels; its index.
  int add_kernel(FwdPlan& plan, const char* kernel) const;
};

// Collects one algorithm's configs of the search space, in order.
class FwdSpaceBuilder {
 public:
  FwdSpaceBuilder(const FwdProblem& p, const jit::DeviceInfo& device, const SpaceOptions& options);
  // The layout once per fp32 exp mode: fast, then (with poly) poly2 and poly4.
  void add_fp32(FwdConfig c);
  // The layout with fp32 and the fast exp only.
  void add_fast(FwdConfig c);
  // (With fp64) the algorithm's default layout with fp64 accumulation: an
  // accuracy anchor, not a speed contender.
  void add_fp64_anchor(ScanAlgo a);
  const FwdProblem& problem() const { return p_; }
  bool empty() const { return configs_.empty(); }
  std::vector<FwdConfig> take() { return std::move(configs_); }

 private:
  const FwdProblem& p_;
  const jit::DeviceInfo& device_;
  SpaceOptions options_;
  std::vector<FwdConfig> configs_;
};

class FwdAlgorithm {
 public:
  virtual ~FwdAlgorithm() = default;
  virtual ScanAlgo id() const = 0;
  // The config key's first field, e.g. "sequential".
  virtual const char* name() const = 0;
  // Empty when the layout of `c` suits this algorithm on `p` (after the
  // common rules of check_config); else the rule it breaks.
  virtual std::string check(const FwdProblem& p, const FwdConfig& c) const = 0;
  // Dynamic shared memory per block, bytes: the kernel's own layout function.
  virtual size_t shared_bytes(const FwdProblem& p, const FwdConfig& c) const = 0;
  // The kernels, their launches in order and the scratch they need.
  virtual void plan(const FwdPlanContext& ctx, FwdPlan& plan) const = 0;
  // Threads per block that a kernel of this algorithm launches with (for
  // occupancy), given its name expression.
  virtual int block_threads(const FwdProblem& p, const FwdConfig& c,
                            const std::string& name_expression) const;
  // This algorithm's layouts of the search space, in order (the fp64
  // anchor is added after them by search_space).
  virtual void space(FwdSpaceBuilder& b) const = 0;
  // Whether the space prunes chunks far beyond the sequence: true where the
  // chunk is a staging window; the scans' chunk is their parallel width.
  virtual bool prunes_long_chunks() const { return true; }
  // Whether its saving variant writes the backward's checkpoints
  // (SsmFwdParams::states) for a training call: the staged chunk loop
  // (fwd_chunk.cuh run_chunk) with every state known, or the warp scan,
  // where each lane knows the state entering its steps. The Blelloch scan
  // does not.
  virtual bool saves_states() const { return true; }
  // The checkpoint intervals `c` can save are multiples of this many steps
  // (the warp scan: a lane's).
  virtual int checkpoint_step(const FwdConfig&) const { return 1; }
  // Fills the default layout of `c` for `p` (algo, acc and exp mode are
  // set), legal and within `max_shared_bytes` (0: no limit).
  virtual void set_default(const FwdProblem& p, size_t max_shared_bytes, FwdConfig& c) const = 0;
};

// Every forward algorithm, in the order the search space meets them.
const std::vector<const FwdAlgorithm*>& fwd_algorithms();
// The descriptor of `a`, or null when none is registered.
const FwdAlgorithm* find_fwd_algorithm(ScanAlgo a);
// The descriptor named `name`, or null.
const FwdAlgorithm* find_fwd_algorithm(const std::string& name);

}  // namespace ssmtune
