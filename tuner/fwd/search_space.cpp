// Enumeration and pruning of the forward space.
#include "tuner/fwd/search_space.h"

#include <algorithm>
#include <map>
#include <set>

#include "tuner/fwd/algorithms.h"
#include "tuner/fwd/plan.h"

namespace ssmtune {

std::vector<FwdSpaceEntry> search_space(const FwdProblem& p, const jit::DeviceInfo& device,
                                        const SpaceOptions& o) {
  // Each algorithm's layouts in table order, then its fp64 anchor (none
  // where the algorithm has no layout for the problem).
  std::vector<FwdConfig> raw;
  for (const FwdAlgorithm* algo : fwd_algorithms()) {
    FwdSpaceBuilder b(p, device, o);
    algo->space(b);
    if (!b.empty()) b.add_fp64_anchor(algo->id());
    for (FwdConfig& c : b.take()) raw.push_back(c);
  }
  std::vector<FwdSpaceEntry> out;
  std::set<std::string> seen;
  for (const auto& c : raw) {
    if (!seen.insert(c.key()).second) continue;
    FwdSpaceEntry e;
    e.config = c;
    Status s = check_config(p, c, device.max_shared_per_block);
    if (!s) {
      e.pruned = true;
      e.reason = s.message();
    } else if (c.d_step > p.dim_per_group()) {
      e.pruned = true;
      e.reason = "d_step " + std::to_string(c.d_step) + " exceeds the channels per group (" +
                 std::to_string(p.dim_per_group()) + "): idle threads";
    } else if (find_fwd_algorithm(c.algo)->prunes_long_chunks() && c.chunk > 2 * p.seqlen &&
               c.chunk > 32) {
      e.pruned = true;
      e.reason =
          "chunk " + std::to_string(c.chunk) + " far exceeds seqlen " + std::to_string(p.seqlen);
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<FwdConfig> first_look_order(const std::vector<FwdConfig>& candidates,
                                        const std::string& first_key) {
  std::map<ScanAlgo, std::vector<FwdConfig>> by_algo;
  std::vector<FwdConfig> out;
  for (const auto& c : candidates) {
    if (!first_key.empty() && c.key() == first_key)
      out.push_back(c);
    else
      by_algo[c.algo].push_back(c);
  }
  for (auto& [algo, v] : by_algo)
    std::stable_sort(v.begin(), v.end(), [](const FwdConfig& a, const FwdConfig& b) {
      auto rank = [](const FwdConfig& c) {
        return (c.acc == AccType::kF64 ? 2 : 0) + (c.exp_mode == ExpMode::kFast ? 0 : 1);
      };
      return rank(a) < rank(b);
    });
  for (size_t i = 0;; ++i) {
    bool any = false;
    for (auto& [algo, v] : by_algo)
      if (i < v.size()) {
        out.push_back(v[i]);
        any = true;
      }
    if (!any) break;
  }
  return out;
}

std::string prune_by_resources(const FwdProblem& p, const FwdConfig& c,
                               const std::vector<jit::KernelImage>& kernels,
                               const jit::DeviceInfo& device, int min_warps_per_sm) {
  if (std::string why = spill_reason(kernels); !why.empty()) return why;
  for (const auto& k : kernels) {
    const auto& r = k.resources;
    if (r.registers <= 0) continue;
    // The block each kernel launches with (multipass's carry scan: 256
    // threads; pipelined: its producer warps on top of c.threads).
    const FwdAlgorithm* algo = find_fwd_algorithm(c.algo);
    const int threads = algo != nullptr ? algo->block_threads(p, c, k.name_expression) : c.threads;
    const int regs_per_block = r.registers * threads;
    const int blocks = device.registers_per_sm / std::max(1, regs_per_block);
    const int warps = blocks * threads / 32;
    if (blocks < 1)
      return "registers: " + std::to_string(r.registers) + " x " + std::to_string(threads) +
             " threads exceed the SM's register file";
    if (warps < min_warps_per_sm)
      return "occupancy: " + std::to_string(r.registers) + " registers leave " +
             std::to_string(warps) + " warps per SM (< " + std::to_string(min_warps_per_sm) + ")";
  }
  return {};
}

int resource_rank(const FwdProblem& p, const FwdConfig& c,
                  const std::vector<jit::KernelImage>& kernels, const jit::DeviceInfo& device,
                  int few_warps_per_sm) {
  int rank = 0;
  for (const auto& k : kernels) {
    const auto& r = k.resources;
    if (r.spill_store_bytes + r.spill_load_bytes > 0) return 2;
    const FwdAlgorithm* algo = find_fwd_algorithm(c.algo);
    const int threads = algo != nullptr ? algo->block_threads(p, c, k.name_expression) : c.threads;
    if (threads <= 0) continue;
    int blocks = 64;
    if (r.registers > 0) blocks = device.registers_per_sm / std::max(1, r.registers * threads);
    if (r.shared_bytes > 0 && device.max_shared_per_sm > 0)
      blocks = std::min<int>(blocks, static_cast<int>(device.max_shared_per_sm / r.shared_bytes));
    if (blocks * threads / 32 < few_warps_per_sm) rank = 1;
  }
  return rank;
}

}  // namespace ssmtune
