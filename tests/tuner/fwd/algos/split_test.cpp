// The split-sequence scan's descriptor: its keys, its legality, its plan
// (three launches over equal segments of whole chunks, carries sized for
// the segments) and its part of the search space.
#include <catch2/catch.hpp>
#include <set>

#include "support/problems.h"
#include "tuner/fwd/algorithms.h"
#include "tuner/fwd/algos/common.h"
#include "tuner/fwd/heuristics.h"
#include "tuner/fwd/plan.h"
#include "tuner/fwd/search_space.h"

namespace ssmtune {
namespace {

FwdProblem prefill(int64_t dim, int64_t seqlen, DType t = DType::kBF16) {
  FwdProblem p = testing::shape(1, dim, seqlen, 16, t);
  p.has_d = p.has_z = p.has_delta_bias = p.delta_softplus = p.return_last_state = true;
  return p;
}

TEST_CASE("split keys carry the segments as a ninth field", "[tuner]") {
  FwdConfig c = default_config(prefill(4096, 4096), ScanAlgo::kSplit);
  c.segments = 9;
  CHECK(c.key() == "split.K32.D32.fp32.t128.i2.s4.fast.S9");
  auto back = FwdConfig::from_key(c.key());
  REQUIRE(back.is_ok());
  CHECK(back->segments == 9);
  CHECK(*back == c);
  // Only split has the field.
  CHECK_FALSE(FwdConfig::from_key("pipelined.K32.D32.fp32.t128.i3.s4.fast.S9").is_ok());
  CHECK_FALSE(FwdConfig::from_key("split.K32.D32.fp32.t128.i3.s4.fast.X9").is_ok());
  CHECK_FALSE(FwdConfig::from_key("split.K32.D32.fp32.t128.i3.s4.fast.S09").is_ok());
}

TEST_CASE("split legality: 2 segments to one per chunk, only for split", "[tuner]") {
  const FwdProblem p = prefill(2048, 1000);  // 32 chunks of 32 steps
  FwdConfig c = default_config(p, ScanAlgo::kSplit);
  for (int s : {2, 7, 32}) {
    c.segments = s;
    INFO(s);
    CHECK(check_config(p, c).is_ok());
  }
  for (int s : {1, 33, 70000}) {
    c.segments = s;
    INFO(s);
    CHECK_FALSE(check_config(p, c).is_ok());
  }
  FwdConfig pipe = default_config(p, ScanAlgo::kPipelined);
  pipe.segments = 2;
  CHECK_FALSE(check_config(p, pipe).is_ok());
  // The pipelined kernel's own rules hold (a chunk of 16-byte copies).
  c.segments = 2;
  c.chunk = 20;
  CHECK_FALSE(check_config(p, c).is_ok());
}

TEST_CASE("split plans cover the sequence with equal segments of whole chunks", "[tuner]") {
  struct Want {
    int64_t seqlen;
    int segments, seg_chunks, launched;
  };
  // 4097 steps: 129 chunks of 32.
  for (const Want w : {Want{4096, 4, 32, 4}, Want{4097, 4, 33, 4}, Want{4097, 129, 1, 129},
                       Want{4097, 65, 2, 65}, Want{4097, 100, 2, 65}}) {
    const FwdProblem p = prefill(1536, w.seqlen);
    FwdConfig c = default_config(p, ScanAlgo::kSplit);
    c.segments = w.segments;
    INFO(w.seqlen << " steps, " << w.segments << " segments");
    auto plan = plan_fwd(p, c);
    REQUIRE(plan.is_ok());
    CHECK(plan->seg_chunks == w.seg_chunks);
    CHECK(plan->segments == w.launched);
    CHECK(int64_t{plan->segments} * plan->seg_chunks >= plan->n_chunks);
    CHECK(int64_t{plan->segments - 1} * plan->seg_chunks < plan->n_chunks);
    REQUIRE(plan->launches.size() == 3);
    const auto& states = plan->launches[0];
    const auto& scan = plan->launches[1];
    const auto& outputs = plan->launches[2];
    CHECK(plan->kernels[states.kernel].name_expression.find("ssm_fwd_split_states") !=
          std::string::npos);
    CHECK(plan->kernels[outputs.kernel].name_expression.find("ssm_fwd_split_outputs") !=
          std::string::npos);
    CHECK(states.grid.z == static_cast<unsigned>(w.launched));
    CHECK(outputs.grid.z == static_cast<unsigned>(w.launched));
    CHECK(states.grid.x == 1536 / 32);
    // One scan thread per (batch, channel, state).
    CHECK(int64_t{scan.grid.x} * scan.block.x >= 1536 * 16);
    // Blocks: compute threads plus the producers (z and softplus: 4 warps).
    CHECK(states.block.x == 128 + 128);
    CHECK(plan->carries_bytes == size_t(2) * 1536 * 16 * w.launched * 4);
  }
}

TEST_CASE("split_segments aims at a block count, 4 chunks per segment at least", "[tuner]") {
  FwdConfig c = default_config(prefill(4096, 4096), ScanAlgo::kSplit);  // D32: 128 tiles
  CHECK(split_segments(prefill(4096, 4096), c, 1024) == 8);
  CHECK(split_segments(prefill(4096, 4096), c, 1000) == 8);
  CHECK(split_segments(prefill(4096, 4096), c, 1025) == 9);
  CHECK(split_segments(prefill(4096, 256), c, 1024) == 2);  // 8 chunks
  CHECK(split_segments(prefill(4096, 128), c, 1024) == 1);  // too short to split
  CHECK(split_segments(testing::shape(8, 1536, 2048, 16, DType::kBF16), c, 1024) == 3);
}

TEST_CASE("the space splits only sequences long enough, the default first", "[tuner]") {
  jit::DeviceInfo dev;
  dev.sm_count = 132;
  dev.max_shared_per_block = 227 * 1024;
  dev.cc_major = 9;
  SpaceOptions opt;
  auto split_configs = [&](const FwdProblem& p) {
    std::vector<FwdConfig> out;
    for (const auto& e : search_space(p, dev, opt))
      if (e.config.algo == ScanAlgo::kSplit && !e.pruned) out.push_back(e.config);
    return out;
  };
  const FwdProblem p = prefill(4096, 16384);
  const auto configs = split_configs(p);
  REQUIRE(configs.size() >= 8);
  CHECK(configs.front() == default_config(p, ScanAlgo::kSplit));
  std::set<std::string> keys;
  for (const auto& c : configs) {
    INFO(c.key());
    CHECK(c.segments >= 2);
    CHECK(check_config(p, c, dev.max_shared_per_block).is_ok());
    CHECK(keys.insert(c.key()).second);  // no duplicates
  }
  CHECK(split_configs(prefill(4096, 64)).empty());
}

}  // namespace
}  // namespace ssmtune
