#include "tuner/fwd/search_space.h"

#include <catch2/catch.hpp>
#include <set>

#include "jit/compiler.h"
#include "jit/program_builder.h"
#include "tuner/fwd/heuristics.h"
#include "tuner/fwd/plan.h"

namespace ssmtune {
namespace {

jit::DeviceInfo h200_like() {
  jit::DeviceInfo d;
  d.name = "test GPU";
  d.cc_major = 9;
  d.sm_count = 132;
  d.max_shared_per_block = 227 * 1024;
  d.registers_per_sm = 65536;
  return d;
}

TEST_CASE("the space covers every algorithm, and pruned configs carry a reason", "[tuner]") {
  FwdProblem p;
  p.batch = 8;
  p.dim = 1536;
  p.seqlen = 2048;
  p.dstate = 16;
  const auto space = search_space(p, h200_like());
  std::set<ScanAlgo> algos;
  std::set<std::string> keys;
  int fp64 = 0, poly = 0;
  for (const auto& e : space) {
    INFO(e.config.key());
    CHECK(keys.insert(e.config.key()).second);  // no duplicates
    if (e.pruned) {
      CHECK_FALSE(e.reason.empty());
      continue;
    }
    CHECK(check_config(p, e.config, 227 * 1024).is_ok());
    algos.insert(e.config.algo);
    fp64 += e.config.acc == AccType::kF64;
    poly += e.config.exp_mode == ExpMode::kPoly;
  }
  CHECK(algos.size() == std::size(kAllScanAlgos));
  CHECK(fp64 >= 6);
  CHECK(poly > 0);
  CHECK(space.size() > 100);
}

TEST_CASE("tiny problems prune idle layouts and oversized chunks", "[tuner]") {
  FwdProblem p;
  p.batch = 1;
  p.dim = 8;
  p.seqlen = 16;
  p.dstate = 2;
  int idle = 0, chunk = 0, split = 0;
  for (const auto& e : search_space(p, h200_like())) {
    if (!e.pruned) continue;
    idle += e.reason.find("idle threads") != std::string::npos;
    chunk += e.reason.find("far exceeds seqlen") != std::string::npos;
    split += e.reason.find("n_split exceeds dstate") != std::string::npos;
  }
  CHECK(idle > 0);
  CHECK(split > 0);
  p.dim = 256;  // enough channels: the chunk rule is what prunes now
  for (const auto& e : search_space(p, h200_like()))
    chunk += e.pruned && e.reason.find("far exceeds seqlen") != std::string::npos;
  CHECK(chunk > 0);
}

TEST_CASE("resource reports prune spills and low occupancy", "[tuner]") {
  const auto d = h200_like();
  FwdConfig c;
  c.threads = 128;
  jit::KernelImage k;
  k.name_expression = "ssmtune_kernels::ssm_fwd_sequential<...>";
  k.resources.found = true;
  k.resources.registers = 64;
  CHECK(prune_by_resources(FwdProblem{}, c, {k}, d).empty());
  k.resources.spill_store_bytes = 4;  // a call frame's few bytes are tolerated
  k.resources.spill_load_bytes = 4;
  CHECK(prune_by_resources(FwdProblem{}, c, {k}, d).empty());
  k.resources.spill_store_bytes = 16;
  CHECK(prune_by_resources(FwdProblem{}, c, {k}, d).find("spills 16 B") == 0);
  k.resources.spill_load_bytes = 0;
  k.resources.spill_store_bytes = 0;
  c.threads = 1024;
  k.resources.registers = 128;  // 128 x 1024 > 65536: no block fits
  CHECK(prune_by_resources(FwdProblem{}, c, {k}, d).find("exceed the SM's register file") !=
        std::string::npos);
  c.threads = 32;
  k.resources.registers = 255;  // 8 blocks of 1 warp: 8 warps, at the limit
  CHECK(prune_by_resources(FwdProblem{}, c, {k}, d).empty());
  CHECK(prune_by_resources(FwdProblem{}, c, {k}, d, 16).find("occupancy") == 0);
}

TEST_CASE("the static cost model ranks spills and low occupancy after the rest", "[tuner]") {
  auto d = h200_like();
  d.max_shared_per_sm = 228 * 1024;
  FwdConfig c;
  c.threads = 128;
  jit::KernelImage k;
  k.name_expression = "ssmtune_kernels::ssm_fwd_sequential<...>";
  k.resources.found = true;
  k.resources.registers = 64;  // 8 blocks of 4 warps: 32 warps
  CHECK(resource_rank(FwdProblem{}, c, {k}, d) == 0);
  k.resources.registers = 200;  // 2 blocks: 8 warps, fewer than 16
  CHECK(resource_rank(FwdProblem{}, c, {k}, d) == 1);
  k.resources.registers = 64;
  k.resources.shared_bytes = 100 * 1024;  // 2 blocks by static shared memory: 8 warps
  CHECK(resource_rank(FwdProblem{}, c, {k}, d) == 1);
  k.resources.shared_bytes = 0;
  k.resources.spill_store_bytes = 4;  // tolerated by the pruning, last among the rest
  CHECK(resource_rank(FwdProblem{}, c, {k}, d) == 2);
}

}  // namespace
}  // namespace ssmtune

namespace ssmtune {
namespace {

// Every config the tuner may time must compile for the shapes it is tuned
// on most (the tuner records a failure and goes on; here it is a defect),
// and the default config must not spill beyond a call frame.
TEST_CASE("every unpruned config of the space compiles for sm_90", "[tuner][compile]") {
  jit::Compiler compiler(jit::TemplateSources::embedded(), nullptr);
  std::vector<FwdProblem> problems;
  FwdProblem mid;
  mid.batch = 8;
  mid.dim = 1536;
  mid.seqlen = 2048;
  mid.dstate = 16;
  mid.has_d = mid.has_z = mid.has_delta_bias = mid.delta_softplus = true;
  mid.return_last_state = mid.has_initial_state = true;
  problems.push_back(mid);
  FwdProblem seed;
  seed.batch = 8;
  seed.dim = 256;
  seed.seqlen = 1024;
  seed.dstate = 4;
  seed.dtype = DType::kBF16;
  problems.push_back(seed);
  for (const FwdProblem& p : problems) {
    std::vector<jit::Instantiation> inst;
    std::vector<FwdConfig> owner;
    for (const auto& e : search_space(p, h200_like())) {
      if (e.pruned) continue;
      auto plan = plan_fwd(p, e.config, 227 * 1024);
      REQUIRE(plan.is_ok());
      for (const auto& k : plan->kernels) {
        inst.push_back(k);
        owner.push_back(e.config);
      }
    }
    auto results = compiler.compile_all(jit::make_programs(inst, 24, "sm_90"));
    const std::string default_key = heuristic_default(p, 132, 227 * 1024).config.key();
    int default_kernels = 0;
    size_t i = 0;
    for (auto& r : results) {
      INFO(p.key() << ": " << r.status().to_string());
      REQUIRE(r.is_ok());
      for (const auto& k : r->kernels) {
        INFO(p.key() << " " << owner[i].key() << " " << k.name_expression);
        CHECK(k.resources.found);
        // Spilling configs are legal (the tuner prunes them after compiling);
        // the defaults, which run untuned, must not spill.
        if (owner[i].key() == default_key) {
          ++default_kernels;
          CHECK(k.resources.spill_store_bytes + k.resources.spill_load_bytes <= 16);
          CHECK(k.resources.stack_frame_bytes <= 16);
        }
        ++i;
      }
    }
    CHECK(i == inst.size());
    INFO(p.key() << " default " << default_key);
    CHECK(default_kernels >= 1);  // the default is part of the space
  }
}

}  // namespace
}  // namespace ssmtune

namespace ssmtune {
namespace {

TEST_CASE("a first look meets the default, then every algorithm in turn", "[tuner]") {
  FwdProblem p;
  p.batch = 8;
  p.dim = 1536;
  p.seqlen = 2048;
  p.dstate = 16;
  std::vector<FwdConfig> cands;
  for (const auto& e : search_space(p, h200_like()))
    if (!e.pruned) cands.push_back(e.config);
  const std::string first = cands[cands.size() / 2].key();
  const auto order = first_look_order(cands, first);
  REQUIRE(order.size() == cands.size());
  CHECK(order[0].key() == first);
  std::set<ScanAlgo> present, early;
  for (const auto& c : cands) present.insert(c.algo);
  for (size_t i = 1; i <= present.size(); ++i) early.insert(order[i].algo);
  CHECK(early == present);
  for (size_t i = 1; i <= present.size(); ++i) {
    CHECK(order[i].acc == AccType::kF32);
    CHECK(order[i].exp_mode == ExpMode::kFast);
  }
  std::set<std::string> keys;
  for (const auto& c : order) keys.insert(c.key());
  CHECK(keys.size() == cands.size());
}

}  // namespace
}  // namespace ssmtune
