// Enumeration and pruning of the forward space.
#include "tuner/fwd/search_space.h"

#include <algorithm>
#include <map>
#include <set>

#include "ssm/fwd_params.cuh"
#include "tuner/fwd/heuristics.h"
#include "tuner/fwd/plan.h"

namespace ssmtune {

std::vector<FwdSpaceEntry> search_space(const FwdProblem& p, const jit::DeviceInfo& device,
                                        const SpaceOptions& o) {
  std::vector<FwdConfig> raw;
  struct Exp {
    ExpMode mode;
    int share;
  };
  std::vector<Exp> exps = {{ExpMode::kFast, 0}};
  if (o.include_poly) {
    exps.push_back({ExpMode::kPoly, 2});
    exps.push_back({ExpMode::kPoly, 4});
  }
  // Each layout once per fp32 exp mode.
  auto fp32_only = [&](FwdConfig c) {
    for (const Exp& e : exps) {
      c.acc = AccType::kF32;
      c.exp_mode = e.mode;
      c.poly_share = e.share;
      raw.push_back(c);
    }
  };
  // fp64 accumulation is an accuracy anchor, not a speed contender: one
  // layout per algorithm (the default's) rather than the whole grid.
  auto fp64_anchor = [&](ScanAlgo a) {
    if (!o.include_fp64) return;
    FwdConfig c = default_config(p, a, AccType::kF64, device.max_shared_per_block);
    raw.push_back(c);
  };
  // Chunk-staged algorithms: the thread layout d_step x n_split.
  for (ScanAlgo a : {ScanAlgo::kSequential, ScanAlgo::kMultiPass, ScanAlgo::kLookback}) {
    const std::vector<int> chunks =
        a == ScanAlgo::kSequential ? std::vector<int>{64, 128} : std::vector<int>{128, 256};
    const std::vector<int> splits = a == ScanAlgo::kSequential ? std::vector<int>{1, 2, 4, 8, 16}
                                                               : std::vector<int>{1, 2, 4, 8};
    // Sequential: also with the next chunk's reads in flight (items 2),
    // which costs registers: it wins where occupancy is capped by the grid.
    const std::vector<int> in_flight =
        a == ScanAlgo::kSequential ? std::vector<int>{1, 2} : std::vector<int>{1};
    for (int n_split : splits)
      for (int threads : {64, 128, 256})
        for (int chunk : chunks)
          for (int items : in_flight) {
            FwdConfig c;
            c.algo = a;
            c.n_split = n_split;
            c.threads = threads;
            c.d_step = threads / n_split;
            c.chunk = chunk;
            c.items = items;
            if (items == 1) {
              fp32_only(c);
            } else {
              c.acc = AccType::kF32;
              c.exp_mode = ExpMode::kFast;
              raw.push_back(c);
            }
          }
    fp64_anchor(a);
  }
  // Pipelined: the sequential layouts with 2 to 8 lanes per channel,
  // 32- or 64-step chunks, double or triple buffered.
  for (int n_split : {2, 4, 8})
    for (int threads : {64, 128, 256})
      for (int chunk : {32, 64})
        for (int stages : {2, 3}) {
          FwdConfig c;
          c.algo = ScanAlgo::kPipelined;
          c.n_split = n_split;
          c.threads = threads;
          c.d_step = threads / n_split;
          c.chunk = chunk;
          c.items = stages;
          if (stages == 3) {
            fp32_only(c);
          } else {
            c.acc = AccType::kF32;
            c.exp_mode = ExpMode::kFast;
            raw.push_back(c);
          }
        }
  fp64_anchor(ScanAlgo::kPipelined);
  for (int d_step : {2, 4, 8})
    for (int items : {2, 4, 8, 16}) {
      FwdConfig c;
      c.algo = ScanAlgo::kWarpScan;
      c.d_step = d_step;
      c.threads = 32 * d_step;
      c.items = items;
      c.chunk = 32 * items;
      fp32_only(c);
    }
  fp64_anchor(ScanAlgo::kWarpScan);
  for (int threads : {128, 256})
    for (int items : {4, 8}) {
      FwdConfig c;
      c.algo = ScanAlgo::kBlelloch;
      c.threads = threads;
      c.items = items;
      c.chunk = threads * items;
      c.d_step = 4;
      fp32_only(c);
    }
  fp64_anchor(ScanAlgo::kBlelloch);
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
    } else if (c.algo != ScanAlgo::kWarpScan && c.algo != ScanAlgo::kBlelloch &&
               c.chunk > 2 * p.seqlen && c.chunk > 32) {
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

namespace {
constexpr int kToleratedSpillBytes = 16;
}  // namespace

std::string prune_by_resources(const FwdProblem& p, const FwdConfig& c,
                               const std::vector<jit::KernelImage>& kernels,
                               const jit::DeviceInfo& device, int min_warps_per_sm) {
  for (const auto& k : kernels) {
    const auto& r = k.resources;
    // A few bytes are the call frame of a rarely taken libdevice slow path
    // (exp, log1p), not register pressure; more than that costs every step.
    if (r.spill_store_bytes + r.spill_load_bytes > kToleratedSpillBytes)
      return "spills " + std::to_string(r.spill_store_bytes) + " B stores / " +
             std::to_string(r.spill_load_bytes) + " B loads (" + r.to_string() + ")";
    if (r.registers <= 0) continue;
    // Scan kernels of the multipass family launch with 256 threads; the
    // pipelined kernel adds its producer warps; the rest launch c.threads.
    int threads = c.threads;
    if (k.name_expression.find("multipass_scan") != std::string::npos) threads = 256;
    if (c.algo == ScanAlgo::kPipelined) threads += pipe_producers(p);
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

}  // namespace ssmtune
