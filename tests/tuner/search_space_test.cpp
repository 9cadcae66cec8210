#include "tuner/search_space.h"

#include <catch2/catch.hpp>
#include <set>

#include "tuner/fwd_plan.h"

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
  Problem p;
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
  CHECK(algos.size() == 5);
  CHECK(fp64 >= 5);
  CHECK(poly > 0);
  CHECK(space.size() > 100);
}

TEST_CASE("tiny problems prune idle layouts and oversized chunks", "[tuner]") {
  Problem p;
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
  KernelConfig c;
  c.threads = 128;
  jit::KernelImage k;
  k.name_expression = "ssmtune_kernels::ssm_fwd_sequential<...>";
  k.resources.found = true;
  k.resources.registers = 64;
  CHECK(prune_by_resources(c, {k}, d).empty());
  k.resources.spill_store_bytes = 16;
  CHECK(prune_by_resources(c, {k}, d).find("spills 16 B") == 0);
  k.resources.spill_store_bytes = 0;
  c.threads = 1024;
  k.resources.registers = 128;  // 128 x 1024 > 65536: no block fits
  CHECK(prune_by_resources(c, {k}, d).find("exceed the SM's register file") != std::string::npos);
  c.threads = 32;
  k.resources.registers = 255;  // 8 blocks of 1 warp: 8 warps, at the limit
  CHECK(prune_by_resources(c, {k}, d).empty());
  CHECK(prune_by_resources(c, {k}, d, 16).find("occupancy") == 0);
}

}  // namespace
}  // namespace ssmtune
