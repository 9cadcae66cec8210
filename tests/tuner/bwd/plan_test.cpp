// Backward launch plans: name expressions, grids, shared memory and scratch.
#include <catch2/catch.hpp>

#include <string>

#include "support/problems.h"
#include "tuner/bwd/plan.h"

namespace ssmtune::bwd {
namespace {

TEST_CASE("backward traits expressions carry every flag", "[bwd]") {
  BwdProblem p;
  p.fwd = testing::shape(2, 64, 100, 16, DType::kBF16);
  p.fwd.has_z = p.fwd.return_last_state = p.has_dlast = true;
  p.fwd.variable_c = false;
  CHECK(traits_expression(p, BwdConfig{}) ==
        "ssmtune_kernels::BwdTraits<__nv_bfloat16, float, 16, 32, 8, 4, "
        "ssmtune_kernels::ExpKind::kFast, true, false, false, true, false, false, false, true>");
}

TEST_CASE("backward plans: two launches, grids and scratch from the shared layout", "[bwd]") {
  BwdProblem p;
  p.fwd = testing::shape(3, 40, 1000, 16, DType::kF16, 2);
  p.fwd.has_d = p.fwd.has_delta_bias = true;
  BwdConfig c;  // K32 D8 s4
  auto plan = plan_bwd(p, c, 227 * 1024);
  REQUIRE(plan.is_ok());
  REQUIRE(plan->kernels.size() == 2);
  CHECK(plan->kernels[0].name_expression.rfind("ssmtune_kernels::ssm_bwd_sequential<", 0) == 0);
  CHECK(plan->kernels[1].name_expression.rfind("ssmtune_kernels::ssm_bwd_finalize<", 0) == 0);
  REQUIRE(plan->launches.size() == 2);
  const auto& main = plan->launches[0];
  CHECK(main.grid.x == 2 * 3);  // groups * ceil(20 / 8)
  CHECK(main.grid.y == 3);
  CHECK(main.block.x == 32);
  CHECK(main.shared_bytes == shared_bytes(p, c));
  CHECK(plan->launches[1].grid.y == 5);
  CHECK(plan->n_chunks == 32);
  CHECK(plan->tiles_per_group == 3);
  const auto& s = plan->scratch;
  // variable dB partials: batch * tiles * dstate * seqlen fp32
  CHECK(s.part_c - s.part_b >= 3 * 6 * 16 * 1000 * 4);
  CHECK(s.part_bias > s.part_d);
  // checkpoints last (a launch given saved states stops before them):
  // batch * (n_chunks - 1) * dstate * dim fp32
  CHECK(s.ckpt > s.part_bias);
  CHECK(s.bytes - s.ckpt >= 3 * 31 * 16 * 40 * 4);
  // No (batch, dim, seqlen, dstate) tensor.
  CHECK(s.bytes < 3LL * 40 * 1000 * 16 * 4);
  // A larger chunk halves the checkpoints.
  c.chunk = 64;
  auto plan64 = plan_bwd(p, c, 227 * 1024);
  REQUIRE(plan64.is_ok());
  CHECK(plan64->scratch.bytes < s.bytes);
}

TEST_CASE("multipass plans: local, combine, chunks, finalize; no empty segment", "[bwd]") {
  BwdProblem p;
  p.fwd = testing::shape(2, 16, 1000, 16, DType::kBF16);
  p.fwd.has_d = true;
  BwdConfig c;  // K32: 32 chunks
  c.algo = BwdAlgo::kMultiPass;
  c.segments = 7;  // 5 chunks each: 7 segments (the last 2 chunks)
  auto plan = plan_bwd(p, c, 227 * 1024);
  REQUIRE(plan.is_ok());
  REQUIRE(plan->kernels.size() == 4);
  const char* names[] = {"ssm_bwd_multipass_local", "ssm_bwd_multipass_combine",
                         "ssm_bwd_multipass_chunks", "ssm_bwd_finalize"};
  for (int i = 0; i < 4; ++i)
    CHECK(plan->kernels[i].name_expression.rfind(std::string("ssmtune_kernels::") + names[i], 0) ==
          0);
  CHECK(plan->seg_chunks == 5);
  CHECK(plan->segments == 7);
  CHECK(plan->launches[0].grid.z == 7);
  CHECK(plan->launches[2].grid.z == 7);
  CHECK(plan->launches[1].grid.x * plan->launches[1].block.x >= 2 * 16 * 16);
  // Carries: 5 per (b, segment, n, d) fp32; dA partials per (b, segment).
  CHECK(plan->scratch.part_b - plan->scratch.carries >= 5 * 2 * 7 * 16 * 16 * 4);
  CHECK(plan->scratch.part_d - plan->scratch.part_a >= 2 * 7 * 16 * 16 * 4);
  c.segments = 40;  // more segments than chunks: one chunk each
  plan = plan_bwd(p, c, 227 * 1024);
  REQUIRE(plan.is_ok());
  CHECK(plan->segments == 32);
  CHECK(plan->seg_chunks == 1);
  c.segments = 1;
  CHECK(!plan_bwd(p, c).is_ok());
  p.fwd.seqlen = 32;  // one chunk
  c.segments = 2;
  CHECK(!plan_bwd(p, c).is_ok());
}

TEST_CASE("warp-scan plans over state groups: the scan, the state sum, finalize", "[bwd]") {
  BwdProblem p;
  p.fwd = testing::shape(2, 4, 2000, 8, DType::kBF16);
  p.fwd.has_d = p.fwd.has_delta_bias = true;
  auto one = plan_bwd(p, *BwdConfig::from_key("ws.K2048.D1.fp32.t512.s1.fast"), 227 * 1024);
  REQUIRE(one.is_ok());
  CHECK(one->launches.size() == 2);  // scan, finalize
  CHECK(one->launches[0].grid.z == 1);
  CHECK(one->scratch.part_sa == one->scratch.part_sb);  // no per-group sums
  const BwdConfig c = *BwdConfig::from_key("ws.K2048.D1.fp32.t512.s4.fast");
  auto plan = plan_bwd(p, c, 227 * 1024);
  REQUIRE(plan.is_ok());
  REQUIRE(plan->launches.size() == 3);
  CHECK(plan->kernels[plan->launches[0].kernel].name_expression.rfind(
            "ssmtune_kernels::ssm_bwd_warpscan<", 0) == 0);
  CHECK(plan->kernels[plan->launches[1].kernel].name_expression.rfind(
            "ssmtune_kernels::ssm_bwd_state_sum<", 0) == 0);
  CHECK(plan->kernels[plan->launches[2].kernel].name_expression.rfind(
            "ssmtune_kernels::ssm_bwd_finalize<", 0) == 0);
  const auto& scan = plan->launches[0];
  CHECK(scan.grid.x == 4);
  CHECK(scan.grid.y == 2);
  CHECK(scan.grid.z == 4);  // the state groups
  CHECK(scan.block.x == 512);
  // Each block stages 2 of the 8 states' B/C rows.
  CHECK(scan.shared_bytes == shared_bytes(p, c));
  CHECK(scan.shared_bytes < one->launches[0].shared_bytes / 3);
  const auto& sum = plan->launches[1];
  CHECK(sum.grid.x == 4);         // dim
  CHECK(sum.grid.y == 2);         // batch
  CHECK(sum.grid.z == 2);         // time slices of 1024 steps
  CHECK(plan->bias_slices == 2);  // ddelta_bias partials per (slice, batch, channel)
  CHECK(one->bias_slices == 1);
  CHECK(sum.block.x == static_cast<unsigned>(ssmtune_kernels::kBwdStateSumThreads));
  // Per group and (b, d, t) two fp32 sums, before the checkpoints.
  const auto& s = plan->scratch;
  CHECK(s.part_sa - s.part_sb >= 4LL * 2 * 4 * 2000 * 4);
  CHECK(s.ckpt - s.part_sa >= 4LL * 2 * 4 * 2000 * 4);
  CHECK(s.bytes > one->scratch.bytes);
}

TEST_CASE("backward plans reject illegal configs and problems", "[bwd]") {
  BwdProblem p;
  p.fwd = testing::shape(2, 64, 100, 16, DType::kF32);
  BwdConfig c;
  c.threads = 64;
  CHECK(!plan_bwd(p, c).is_ok());
  p.has_dlast = true;  // without return_last_state
  CHECK(!plan_bwd(p, BwdConfig{}).is_ok());
}

TEST_CASE("the default backward's scratch is a fraction of one state tensor (docs/memory.md)",
          "[bwd]") {
  // Per (batch, channel, step), bytes: checkpoints dstate * 4 / chunk, the
  // variable dB and dC partials 2 * dstate * 4 / d_step; against the
  // (batch, dim, seqlen, dstate) fp32 tensor the backward never makes.
  struct Want {
    int64_t dstate;
    double per_step_bytes;  // at most, per (batch, channel, step)
    double of_state;        // at most, a fraction of dstate * 4 bytes per step
  };
  for (const Want w :
       {Want{4, 4.5, 0.29}, Want{16, 8.5, 0.14}, Want{64, 65, 0.26}, Want{256, 645, 0.63}}) {
    BwdProblem p;
    p.fwd = testing::shape(8, 1536, 2048, w.dstate, DType::kBF16);
    p.fwd.has_d = p.fwd.has_z = p.fwd.has_delta_bias = p.fwd.delta_softplus = true;
    const BwdConfig c = default_config(p, BwdAcc::kF32, 227 * 1024).config;
    auto plan = plan_bwd(p, c, 227 * 1024);
    REQUIRE(plan.is_ok());
    const double steps = 8.0 * 1536 * 2048;
    const double per_step = static_cast<double>(plan->scratch.bytes) / steps;
    INFO("dstate " << w.dstate << " " << c.key() << ": " << plan->scratch.bytes << " bytes, "
                   << per_step << " per step");
    CHECK(per_step <= w.per_step_bytes);
    CHECK(per_step <= w.of_state * 4.0 * w.dstate);
    // The two terms that scale with the sequence, as the layout states them.
    const double ckpt = 8.0 * (plan->n_chunks - 1) * w.dstate * 1536 * 4;
    const double partials = 2.0 * 8 * plan->tiles_per_group * w.dstate * 2048 * 4;
    CHECK(plan->scratch.bytes >= ckpt + partials);
    // The rest is per (batch, segment, channel, state): multipass carries
    // (5 AccT) and the dA, dD and ddelta_bias partials.
    CHECK(plan->scratch.bytes <=
          ckpt + partials + 8.0 * 8 * c.segments * 1536 * w.dstate * 4 + 4096);
  }
}

}  // namespace
}  // namespace ssmtune::bwd
