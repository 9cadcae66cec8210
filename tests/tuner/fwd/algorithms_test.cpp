#include "tuner/fwd/algorithms.h"

#include <catch2/catch.hpp>
#include <set>

#include "ssm/fwd_params.cuh"
#include "support/problems.h"
#include "tuner/fwd/heuristics.h"

namespace ssmtune {
namespace {

TEST_CASE("every scan algorithm has exactly one descriptor, found by id and by name",
          "[tuner][algorithms]") {
  std::set<ScanAlgo> ids;
  std::set<std::string> names;
  for (const FwdAlgorithm* a : fwd_algorithms()) {
    CHECK(ids.insert(a->id()).second);
    CHECK(names.insert(a->name()).second);
    CHECK(find_fwd_algorithm(a->name()) == a);
    CHECK(find_fwd_algorithm(a->id()) == a);
    auto parsed = parse_scan_algo(a->name());
    REQUIRE(parsed.is_ok());
    CHECK(*parsed == a->id());
  }
  CHECK(ids.size() == std::size(kAllScanAlgos));
  for (ScanAlgo a : kAllScanAlgos) CHECK(ids.count(a) == 1);
  CHECK(find_fwd_algorithm("nope") == nullptr);
}

TEST_CASE("plans launch with the descriptors' blocks and shared memory", "[tuner][algorithms]") {
  for (int64_t dstate : {1, 16, 64}) {
    FwdProblem p;
    p.batch = 4;
    p.dim = 512;
    p.seqlen = 1000;
    p.dstate = dstate;
    p.dtype = DType::kBF16;
    for (const FwdAlgorithm* a : fwd_algorithms())
      for (AccType acc : {AccType::kF32, AccType::kF64}) {
        const FwdConfig c = default_config(p, a->id(), acc, 227 * 1024);
        INFO(c.key());
        auto plan = plan_fwd(p, c, 227 * 1024);
        REQUIRE(plan.is_ok());
        CHECK(plan->max_shared_bytes == a->shared_bytes(p, c));
        for (const FwdLaunch& l : plan->launches) {
          const auto& name = plan->kernels[l.kernel].name_expression;
          CHECK(static_cast<int>(l.block.x) == a->block_threads(p, c, name));
          CHECK((l.shared_bytes == 0 || l.shared_bytes == a->shared_bytes(p, c)));
        }
      }
  }
}

TEST_CASE("the scan layout's regions follow each other and sum to its bytes",
          "[tuner][algorithms]") {
  for (bool blelloch : {false, true})
    for (int acc : {4, 8})
      for (bool vb : {false, true})
        for (bool vc : {false, true}) {
          constexpr int kN = 16, kChunk = 256, kDStep = 8, kThreads = 256;
          const auto l = ssmtune_kernels::scan_smem_layout(kN, kChunk, kDStep, kThreads, acc, vb,
                                                           vc, blelloch);
          CHECK(l.b == 0);
          CHECK(l.c == (vb ? 4 * kN * kChunk : 0));
          CHECK(l.h == l.c + (vc ? 4 * kN * kChunk : 0));
          CHECK(l.a == l.h + acc * kDStep * kN);
          CHECK(l.h % acc == 0);
          CHECK(l.bytes == l.a + (blelloch ? 2 * acc * kThreads : 4 * kDStep * kN));
          // Several warps a channel: their totals (2 buffers x 2 states x (a, b)) follow, aligned.
          const auto w =
              ssmtune_kernels::scan_smem_layout(kN, kChunk, 2, kThreads, acc, vb, vc, blelloch);
          if (!blelloch) {
            CHECK(w.x % acc == 0);
            CHECK(w.x >= w.a + 4 * 2 * kN);
            CHECK(w.bytes == w.x + 8 * (kThreads / 32) * acc);
          }
        }
}

TEST_CASE("the warp and block scans save checkpoints at multiples of a lane's steps",
          "[tuner][algorithms]") {
  const FwdProblem p = testing::shape(2, 4, 1024, 8, DType::kF32);
  for (const FwdAlgorithm* a : fwd_algorithms()) {
    FwdConfig c = default_config(p, a->id());
    INFO(c.key());
    if (a->id() == ScanAlgo::kWarpScan || a->id() == ScanAlgo::kBlockScan) {
      CHECK(a->saves_states());
      CHECK(a->checkpoint_step(c) == c.items);
    } else if (a->id() == ScanAlgo::kBlelloch) {
      CHECK_FALSE(a->saves_states());
    } else {
      CHECK(a->saves_states());
      CHECK(a->checkpoint_step(c) == 1);
    }
  }
}

}  // namespace
}  // namespace ssmtune
