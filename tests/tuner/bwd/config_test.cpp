// Backward config keys, legality, default and search space.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <set>

#include "support/problems.h"
#include "tuner/bwd/config.h"
#include "tuner/bwd/plan.h"

namespace ssmtune::bwd {
namespace {

// A shape and the default's key there.
struct Want {
  int64_t batch, dim, seqlen, dstate;
  const char* key;
};

// The default at w's shape in dtype t with the block's flags (132 SMs): w's
// key, and legal. The problem, for further checks.
BwdProblem check_key(const Want& w, DType t) {
  BwdProblem p;
  p.fwd = testing::shape(w.batch, w.dim, w.seqlen, w.dstate, t);
  p.fwd.has_d = p.fwd.has_z = p.fwd.has_delta_bias = p.fwd.delta_softplus = true;
  const BwdDefault d = default_config(p, BwdAcc::kF32, 227 * 1024, 132);
  INFO(p.key() << ": " << d.config.key() << " " << d.reason);
  CHECK(d.config.key() == w.key);
  CHECK(check_config(p, d.config, 227 * 1024).is_ok());
  return p;
}

BwdProblem mid(DType t, int64_t n = 16) {
  BwdProblem p;
  p.fwd = testing::shape(8, 1536, 2048, n, t);
  return p;
}

TEST_CASE("backward config keys round-trip", "[bwd]") {
  BwdConfig c;
  CHECK(c.key() == "seq.K32.D8.fp32.t32.s4.fast");
  CHECK(*BwdConfig::from_key(c.key()) == c);
  c.acc = BwdAcc::kF64;
  c.exp = BwdExp::kAccurate;
  c.chunk = 64;
  CHECK(c.key() == "seq.K64.D8.fp64.t32.s4.accurate");
  CHECK(*BwdConfig::from_key(c.key()) == c);
  c.algo = BwdAlgo::kMultiPass;
  c.segments = 8;
  CHECK(c.key() == "mp.K64.D8.fp64.t32.s4.accurate.S8");
  CHECK(*BwdConfig::from_key(c.key()) == c);
  c.blocks = 3;
  CHECK(c.key() == "mp.K64.D8.fp64.t32.s4.accurate.S8.b3");
  CHECK(*BwdConfig::from_key(c.key()) == c);
  CHECK(BwdConfig::from_key("seq.K16.D32.fp32.t128.s4.fast.b3")->blocks == 3);
  // Channels a thread, before the block count.
  const auto two = BwdConfig::from_key("seq.K16.D32.fp32.t64.s4.fast.c2.b3");
  REQUIRE(two.is_ok());
  CHECK(two->chan == 2);
  CHECK(two->blocks == 3);
  CHECK(two->key() == "seq.K16.D32.fp32.t64.s4.fast.c2.b3");
  CHECK(BwdConfig::from_key("seq.K16.D32.fp32.t64.s4.fast.c2")->chan == 2);
  CHECK(!BwdConfig::from_key("seq.K16.D32.fp32.t64.s4.fast.b3.c2").is_ok());  // order
  CHECK(!BwdConfig::from_key("seq.K16.D32.fp32.t128.s4.fast.c1").is_ok());    // not canonical
  CHECK(!BwdConfig::from_key("seq.K16.D32.fp32.t64.s4.fast.c2.c2").is_ok());
  CHECK(!BwdConfig::from_key("seq.K16.D32.fp32.t128.s4.fast.b0").is_ok());  // not canonical
  CHECK(!BwdConfig::from_key("seq.K16.D32.fp32.t128.s4.fast.x3").is_ok());
  CHECK(!BwdConfig::from_key("seq.K16.D32.fp32.t128.s4.fast.S4").is_ok());
  CHECK(!BwdConfig::from_key("seq.K32.D8.fp32.t32.s4").is_ok());
  CHECK(!BwdConfig::from_key("seq.K032.D8.fp32.t32.s4.fast").is_ok());
  CHECK(!BwdConfig::from_key("scan.K32.D8.fp32.t32.s4.fast").is_ok());
  CHECK(!BwdConfig::from_key("seq.K32.D8.fp16.t32.s4.fast").is_ok());
  const auto ws = BwdConfig::from_key("ws.K256.D8.fp32.t256.s1.fast");
  REQUIRE(ws.is_ok());
  CHECK(ws->algo == BwdAlgo::kWarpScan);
  CHECK(ws->chunk == 256);
  CHECK(ws->threads == 256);
  CHECK(!BwdConfig::from_key("ws.K256.D8.fp32.t256.s1.fast.S4").is_ok());
  CHECK(scan_warps(*ws) == 1);
  CHECK(scan_items(*ws) == 8);
  // 8 warps a channel: threads = 32 x channels x warps, chunk = 32 x warps x items.
  const auto wide = BwdConfig::from_key("ws.K1024.D1.fp32.t256.s1.fast");
  REQUIRE(wide.is_ok());
  CHECK(scan_warps(*wide) == 8);
  CHECK(scan_items(*wide) == 4);
  CHECK(scan_warps(*BwdConfig::from_key("seq.K16.D32.fp32.t128.s4.fast")) == 1);
}

TEST_CASE("warp-scan legality: 32 lanes a channel, chunks of 32 x 4k items", "[bwd]") {
  const BwdProblem p = mid(DType::kBF16, 4);
  auto why = [&](const BwdConfig& x) { return check_config(p, x, 227 * 1024).message(); };
  const BwdConfig c = *BwdConfig::from_key("ws.K128.D4.fp32.t128.s1.fast");
  CHECK(why(c).empty());
  // `c` with one field changed breaks `rule`.
  auto breaks = [&](auto change, const char* rule) {
    BwdConfig x = c;
    change(x);
    INFO(x.key() << ": " << why(x));
    return why(x).find(rule) != std::string::npos;
  };
  CHECK(breaks([](BwdConfig& x) { x.chunk = 96; }, "warp scan: chunk"));  // 3 items a lane
  CHECK(breaks([](BwdConfig& x) { x.chunk = 1024; }, "warp scan: chunk"));
  // A channel's states over n_split blocks: a power of 2, at most dstate.
  CHECK(why(*BwdConfig::from_key("ws.K128.D4.fp32.t128.s2.fast")).empty());
  CHECK(why(*BwdConfig::from_key("ws.K128.D4.fp32.t128.s4.fast")).empty());
  CHECK(breaks([](BwdConfig& x) { x.n_split = 8; }, "n_split exceeds dstate"));
  CHECK(breaks([](BwdConfig& x) { x.n_split = 3; }, "power of 2"));
  {  // their state sum runs a block per 1024 steps (grid z): at most 65535 of them
    BwdProblem longer = p;
    longer.fwd.seqlen = int64_t{1} << 27;
    const BwdConfig two = *BwdConfig::from_key("ws.K128.D4.fp32.t128.s2.fast");
    CHECK(check_config(longer, two, 227 * 1024).message().find("time slices") != std::string::npos);
    CHECK(check_config(longer, c, 227 * 1024).is_ok());
  }
  CHECK(breaks([](BwdConfig& x) { x.threads = 4; }, "32 * d_step"));
  CHECK(breaks([](BwdConfig& x) { x.threads = 0; }, "multiple of 32 in [32, 1024]"));
  CHECK(breaks([](BwdConfig& x) { x.segments = 2; }, "segments must be 1"));
  // Several warps a channel: a power of 2 of them, 4 to 16 steps a lane.
  CHECK(why(*BwdConfig::from_key("ws.K512.D1.fp32.t128.s1.fast")).empty());   // 4 x 4 steps
  CHECK(why(*BwdConfig::from_key("ws.K1024.D2.fp32.t256.s1.fast")).empty());  // 4 x 8 steps
  CHECK(breaks([](BwdConfig& x) { x.threads = 384; }, "power of 2"));         // 3 warps
  CHECK(breaks([](BwdConfig& x) { x.threads = 512; }, "warp scan: chunk"));   // 4 x 1 step
  CHECK(breaks([](BwdConfig& x) { x.d_step = 64, x.threads = 2048; }, "d_step must be at most"));
  // B and C rows of 256 states at chunk 256: past the limit.
  BwdConfig x = c;
  x.chunk = 256;
  CHECK(check_config(mid(DType::kBF16, 256), x, 227 * 1024).message().find("shared memory") !=
        std::string::npos);
  // Over 4 blocks each stages the rows of its 64 states only: within it.
  x.n_split = 4;
  CHECK(check_config(mid(DType::kBF16, 256), x, 227 * 1024).is_ok());
  CHECK(shared_bytes(mid(DType::kBF16, 256), x) <
        shared_bytes(mid(DType::kBF16, 256), *BwdConfig::from_key("ws.K256.D4.fp32.t128.s1.fast")) /
            3);
  // 512 threads' worth of registers a SM, as the templates' rule.
  CHECK(rule_blocks(p, c) == 4);
  x = c;
  x.d_step = 16;
  x.threads = 512;
  CHECK(rule_blocks(p, x) == 1);
}

TEST_CASE("backward legality mirrors the templates", "[bwd]") {
  const BwdProblem p = mid(DType::kBF16);
  BwdConfig c;
  CHECK(check_config(p, c).is_ok());
  auto why = [&](BwdConfig x) { return check_config(p, x, 227 * 1024).message(); };
  BwdConfig x = c;
  x.threads = 64;
  CHECK(why(x).find("d_step * n_split") != std::string::npos);
  x = c;
  x.d_step = 4;
  x.threads = 16;
  CHECK(why(x).find("multiple of 32") != std::string::npos);
  x = c;
  x.chunk = 30;
  CHECK(why(x).find("multiple of 4") != std::string::npos);
  x = c;
  x.n_split = 32;
  x.d_step = 1;
  x.threads = 32;
  CHECK(why(x).find("exceeds dstate") != std::string::npos);
  x = c;
  x.acc = BwdAcc::kF64;
  CHECK(why(x).find("accurate exp") != std::string::npos);
  x = c;
  x.d_step = 32;
  x.threads = 128;
  x.blocks = 17;  // 2176 threads a SM
  CHECK(why(x).find("blocks must be in") != std::string::npos);
  x.blocks = 16;
  CHECK(check_config(p, x, 227 * 1024).is_ok());
  x = c;
  x.chunk = 1024;
  x.d_step = 64;
  x.threads = 256;
  CHECK(why(x).find("shared memory") != std::string::npos);
  x = c;
  x.algo = BwdAlgo::kMultiPass;
  CHECK(why(x).find("segments must be in [2, 65535]") != std::string::npos);
  x.segments = 8;
  CHECK(why(x).empty());
  x = c;
  x.segments = 8;
  CHECK(why(x).find("segments must be 1") != std::string::npos);
  // Channels a thread: the sequential kernel only, dividing d_step, at most
  // n_split, threads = d_step * n_split / chan.
  x = *BwdConfig::from_key("seq.K16.D32.fp32.t64.s4.fast.c2");
  CHECK(why(x).empty());
  CHECK(rule_blocks(p, x) == 4);  // 8 chains a thread: 256 threads' worth
  x.threads = 128;
  CHECK(why(x).find("d_step * n_split / chan") != std::string::npos);
  x.threads = 64;
  x.chan = 3;
  CHECK(why(x).find("must be 1, or 2 or 4") != std::string::npos);
  x = *BwdConfig::from_key("seq.K16.D32.fp32.t64.s4.fast.c2");
  x.algo = BwdAlgo::kMultiPass;
  x.segments = 4;
  CHECK(why(x).find("sequential") != std::string::npos);
  x = *BwdConfig::from_key("seq.K16.D32.fp32.t64.s4.fast.c2");
  x.chan = 4;
  x.threads = 32;
  CHECK(why(x).empty());
  x.n_split = 2;
  x.d_step = 64;
  CHECK(why(x).find("at most n_split") != std::string::npos);
  x = *BwdConfig::from_key("ws.K256.D8.fp32.t256.s1.fast");
  x.chan = 2;
  CHECK(why(x).find("sequential") != std::string::npos);
}

TEST_CASE("the backward default is legal for every dstate and dtype", "[bwd]") {
  for (int64_t n : {1, 2, 3, 4, 5, 16, 64, 100, 256})
    for (DType t : {DType::kF32, DType::kBF16})
      for (BwdAcc acc : {BwdAcc::kF32, BwdAcc::kF64}) {
        const BwdProblem p = mid(t, n);
        const BwdDefault d = default_config(p, acc, 227 * 1024);
        INFO(p.key() << " " << d.config.key() << " " << d.reason);
        CHECK(check_config(p, d.config, 227 * 1024).is_ok());
        CHECK(!d.reason.empty());
      }
}

TEST_CASE("the backward default keeps 4 states per thread to dstate 16, 8 beyond", "[bwd]") {
  CHECK(default_config(mid(DType::kBF16, 16), BwdAcc::kF32, 227 * 1024).config.key() ==
        "seq.K16.D32.fp32.t128.s4.fast");
  // dstate 64: 8 lanes of 8 states, 128 threads; chunk 8 keeps the fp32
  // history at 32 KiB (the H200's exhaustive tune's winner).
  CHECK(default_config(mid(DType::kBF16, 64), BwdAcc::kF32, 227 * 1024).config.key() ==
        "seq.K8.D16.fp32.t128.s8.fast");
  const BwdConfig c256 = default_config(mid(DType::kBF16, 256), BwdAcc::kF32, 227 * 1024).config;
  CHECK(c256.n_split == 32);  // 8 states per lane, at most 32 lanes per channel
  CHECK(c256.chunk * 8 * c256.threads * 4 <= 32 * 1024);
}

TEST_CASE("the backward default goes multipass for few blocks and long sequences", "[bwd]") {
  BwdProblem p = mid(DType::kBF16);
  CHECK(default_config(p).config.algo == BwdAlgo::kSequential);
  p.fwd = testing::shape(1, 64, 65536, 16, DType::kBF16);
  const BwdDefault d = default_config(p, BwdAcc::kF32, 227 * 1024);
  INFO(d.config.key() << " " << d.reason);
  CHECK(d.config.algo == BwdAlgo::kMultiPass);
  CHECK(d.config.segments >= 2);
  CHECK(check_config(p, d.config, 227 * 1024).is_ok());
  p.fwd.seqlen = 64;  // short: nothing to split
  CHECK(default_config(p).config.algo == BwdAlgo::kSequential);
}

TEST_CASE("the backward default takes the warp scan where multipass would run, but at dstate 16",
          "[bwd]") {
  BwdProblem p;
  for (int64_t n : {4, 8, 32, 64}) {
    p.fwd = testing::shape(8, 256, 1024, n, DType::kF32);  // 2048 channels
    const BwdDefault d = default_config(p, BwdAcc::kF32, 227 * 1024, 132);
    INFO(d.config.key() << " " << d.reason);
    CHECK(d.config.algo == BwdAlgo::kWarpScan);
    CHECK(d.config.key() ==
          (n == 4 ? "ws.K256.D8.fp32.t256.s1.fast" : "ws.K256.D16.fp32.t512.s1.fast"));
    CHECK(check_config(p, d.config, 227 * 1024).is_ok());
    CHECK(d.reason.find("warp scan") != std::string::npos);
    // fp64 accumulation too (chunk 128 where 256 does not fit).
    const BwdConfig d64 = default_config(p, BwdAcc::kF64, 227 * 1024, 132).config;
    CHECK(d64.algo == BwdAlgo::kWarpScan);
    CHECK(scan_warps(d64) <= 8);  // 16 warps of fp64 sums spill
    CHECK(check_config(p, d64, 227 * 1024).is_ok());
  }
  // dstate 16: multipass measured faster.
  p.fwd = testing::shape(8, 256, 1024, 16, DType::kF32);
  CHECK(default_config(p, BwdAcc::kF32, 227 * 1024, 132).config.algo == BwdAlgo::kMultiPass);
  // Too few channels for 8 warps on each of 132 SMs, dstate 8: multipass.
  p.fwd = testing::shape(2, 128, 2048, 8, DType::kF32);
  CHECK(default_config(p, BwdAcc::kF32, 227 * 1024, 132).config.algo == BwdAlgo::kMultiPass);
  // Enough blocks for the chunked kernel (1024): it stays.
  p.fwd = testing::shape(16, 4096, 2048, 4, DType::kF32);
  CHECK(default_config(p, BwdAcc::kF32, 227 * 1024, 132).config.algo == BwdAlgo::kSequential);
  // Groups of 8 channels (160 blocks, 1280 channels): 8 warps a block, not 16.
  p.fwd = testing::shape(8, 160, 1024, 64, DType::kF32, 20);
  const BwdConfig g8 = default_config(p, BwdAcc::kF32, 227 * 1024, 132).config;
  CHECK(g8.algo == BwdAlgo::kWarpScan);
  CHECK(g8.d_step == 8);
  // dstate 256: its B/C rows do not fit at chunk 128 either.
  p.fwd = testing::shape(8, 256, 1024, 256, DType::kF32);
  CHECK(default_config(p, BwdAcc::kF32, 227 * 1024, 132).config.algo != BwdAlgo::kWarpScan);
}

TEST_CASE("the backward default scans dstate <= 4 over a few hundred channels, warps a channel",
          "[bwd]") {
  // 512 threads a block; 8 warps a channel halved while the channels' warps
  // pass 16 an SM; 8 steps a lane at even dstate, 4 at odd; a chunk no
  // longer than twice the sequence.
  BwdProblem p;
  for (const Want& w : {Want{2, 64, 4096, 4, "ws.K2048.D2.fp32.t512.s1.fast"},
                        Want{2, 100, 2048, 1, "ws.K1024.D2.fp32.t512.s1.fast"},
                        Want{4, 128, 2048, 4, "ws.K1024.D4.fp32.t512.s1.fast"},
                        Want{8, 64, 2048, 2, "ws.K1024.D4.fp32.t512.s1.fast"},
                        Want{2, 256, 1024, 4, "ws.K1024.D4.fp32.t512.s1.fast"},
                        Want{1, 512, 4096, 3, "ws.K512.D4.fp32.t512.s1.fast"},
                        Want{1, 1000, 2048, 4, "ws.K512.D8.fp32.t512.s1.fast"},
                        Want{4, 256, 512, 4, "ws.K512.D8.fp32.t512.s1.fast"},
                        Want{4, 256, 200, 4, "ws.K256.D16.fp32.t512.s1.fast"}}) {
    for (DType t : {DType::kF32, DType::kBF16}) {
      p = check_key(w, t);
      CHECK(default_config(p, BwdAcc::kF32, 227 * 1024, 132)
                .reason.find("fill a wave of 16 warps per SM") != std::string::npos);
      // fp64 sums: not measured there, multipass as before.
      CHECK(default_config(p, BwdAcc::kF64, 227 * 1024, 132).config.algo == BwdAlgo::kMultiPass);
    }
  }
  // dstate 8 (multipass measured faster), or enough channels for a warp
  // each: not this rule.
  for (const auto& [b, d, l, n] :
       {std::array<int64_t, 4>{2, 256, 2048, 8}, std::array<int64_t, 4>{8, 256, 1024, 4}}) {
    p.fwd = testing::shape(b, d, l, n, DType::kBF16);
    const BwdDefault def = default_config(p, BwdAcc::kF32, 227 * 1024, 132);
    INFO(p.key() << ": " << def.config.key() << " " << def.reason);
    CHECK(def.reason.find("fill a wave of 16 warps per SM") == std::string::npos);
  }
}

TEST_CASE("the backward default scans dstate <= 3 over many channels, a warp a channel", "[bwd]") {
  // Where the sequential kernel stayed (256 blocks or more, or under 8
  // chunks): chunks of 128, 8 channels a block; not at 64 steps above dstate 1.
  constexpr const char* kWs128 = "ws.K128.D8.fp32.t256.s1.fast";
  for (const Want& w : {Want{16, 1536, 2048, 1, kWs128}, Want{16, 1536, 1024, 2, kWs128},
                        Want{32, 1536, 256, 1, kWs128}, Want{16, 1536, 256, 3, kWs128},
                        Want{16, 1536, 128, 1, kWs128}, Want{8, 1024, 64, 1, kWs128},
                        Want{64, 1024, 128, 2, kWs128}})
    for (DType t : {DType::kF32, DType::kBF16}) check_key(w, t);
  // Where a warp a channel fills the GPU from multipass: chunks of 128 at
  // dstate 1 to 3 where the blocks of 8 channels fit one wave at 3 an SM but
  // not at 2 (264 < blocks <= 396 on 132 SMs), else 256.
  constexpr const char* kWs256 = "ws.K256.D8.fp32.t256.s1.fast";
  for (const Want& w : {Want{1, 2560, 2048, 1, kWs128}, Want{2, 1536, 2048, 1, kWs128},
                        Want{3, 1024, 2048, 3, kWs128}, Want{1, 3072, 2048, 2, kWs128},
                        Want{3, 768, 2048, 2, kWs128}, Want{1, 2120, 1000, 2, kWs128},
                        Want{1, 3168, 4096, 3, kWs128}, Want{1, 2112, 2048, 1, kWs256},
                        Want{1, 3176, 2048, 2, kWs256}, Want{2, 4096, 2048, 1, kWs256},
                        Want{1, 4096, 2048, 1, kWs256}, Want{1, 1536, 4096, 2, kWs256},
                        Want{8, 768, 2048, 2, kWs256}, Want{1, 3072, 2048, 4, kWs256},
                        Want{8, 1536, 2048, 4, kWs256}})
    for (DType t : {DType::kF32, DType::kBF16}) check_key(w, t);
  BwdProblem p;
  for (const auto& [b, d, l, n] :
       {std::array<int64_t, 4>{8, 2048, 64, 2}, std::array<int64_t, 4>{16, 2048, 512, 4}}) {
    p.fwd = testing::shape(b, d, l, n, DType::kF32);
    const BwdDefault def = default_config(p, BwdAcc::kF32, 227 * 1024, 132);
    INFO(p.key() << ": " << def.config.key() << " " << def.reason);
    CHECK(def.config.algo == BwdAlgo::kSequential);
  }
}

// 3 or 4 states a thread over 8 lanes, 32 channels a block (dstate 17 to 32).
constexpr const char* kEight = "seq.K16.D32.fp32.t256.s8.fast";

TEST_CASE(
    "the backward default spreads dstate 32 over 8 lanes but where 3 blocks an SM fill a wave",
    "[bwd]") {
  // 4 states a thread, 32 channels a block; 8 states over 4 lanes where the
  // grid has more than 2 and at most 3 blocks of 32 channels an SM (132 SMs).
  constexpr const char* kFour = "seq.K8.D32.fp32.t128.s4.fast";
  for (const Want& w : {Want{8, 1024, 4096, 32, kEight}, Want{2, 4096, 2048, 32, kEight},
                        Want{4, 2048, 1024, 32, kEight}, Want{8, 2048, 512, 32, kEight},
                        Want{16, 2048, 1024, 32, kEight}, Want{10, 1280, 2048, 32, kEight},
                        Want{8, 1536, 2048, 32, kFour}, Want{16, 768, 1000, 32, kFour},
                        Want{5, 2048, 4096, 32, kFour}})
    for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) check_key(w, t);
  // Not at dstate 64, nor with fp64 sums; dstate 31 by the dstate 17 to 31
  // rule (below).
  BwdProblem p;
  p.fwd = testing::shape(8, 2048, 512, 64, DType::kBF16);
  CHECK(default_config(p, BwdAcc::kF32, 227 * 1024, 132).config.key() ==
        "seq.K8.D16.fp32.t128.s8.fast");
  p.fwd = testing::shape(8, 2048, 512, 31, DType::kBF16);
  CHECK(default_config(p, BwdAcc::kF32, 227 * 1024, 132).config.n_split == 8);
  CHECK(default_config(p, BwdAcc::kF32, 227 * 1024, 132).config.threads == 256);
  p.fwd = testing::shape(8, 2048, 512, 32, DType::kBF16);
  const BwdConfig f64 = default_config(p, BwdAcc::kF64, 227 * 1024, 132).config;
  CHECK(f64.n_split == 4);
  CHECK(f64.acc == BwdAcc::kF64);
}

TEST_CASE("the backward default spreads dstate 17 to 31 over 8 lanes where the grid fills the GPU",
          "[bwd]") {
  // 3 or 4 states a thread, 32 channels a block, instead of the warp scan
  // (from dstate 20 and 512 steps, where blocks of 32 channels fill 15/16 of
  // a wave of 2 an SM or more; 132 SMs) or 2 lanes of 9 to 16 states at
  // chunk 4 (at any length).
  constexpr const char* kWarp = "ws.K256.D16.fp32.t512.s1.fast";
  for (const Want& w : {Want{8, 1536, 2048, 24, kEight}, Want{2, 4096, 2048, 24, kEight},
                        Want{8, 1024, 1024, 20, kEight}, Want{4, 2048, 1024, 28, kEight},
                        Want{8, 1536, 512, 31, kEight}, Want{16, 2048, 1024, 24, kEight},
                        Want{16, 1536, 1024, 18, kEight}, Want{12, 1024, 2048, 22, kEight},
                        Want{32, 2048, 128, 24, kEight},
                        // The warp scan below dstate 20, under 15/16 of a wave of 2
                        // blocks an SM, and under 512 steps.
                        Want{16, 768, 512, 17, kWarp}, Want{6, 1536, 1024, 19, kWarp},
                        Want{2, 2048, 2048, 26, kWarp}, Want{3, 2048, 4096, 30, kWarp},
                        Want{4, 1536, 1024, 24, kWarp}, Want{5, 1536, 1024, 26, kWarp},
                        Want{8, 1024, 256, 24, kWarp}})
    for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) check_key(w, t);
  BwdProblem p;
  p.fwd = testing::shape(16, 1536, 1024, 18, DType::kBF16);
  const BwdDefault d = default_config(p, BwdAcc::kF32, 227 * 1024, 132);
  CHECK(d.reason.find("2 lanes of 9 to 16 states") != std::string::npos);
  // Also on an unknown device (128 SMs assumed); not with fp64 sums, nor
  // under 32 channels a group.
  CHECK(default_config(p, BwdAcc::kF32, 227 * 1024, 0).config.key() == kEight);
  CHECK(default_config(p, BwdAcc::kF64, 227 * 1024, 132).config.n_split != 8);
  p.fwd = testing::shape(64, 16, 1024, 24, DType::kBF16);
  CHECK(default_config(p, BwdAcc::kF32, 227 * 1024, 132).config.n_split != 8);
}

TEST_CASE(
    "the backward default spreads dstate 40 to 48 over 8 lanes where the sequential kernel "
    "stays",
    "[bwd]") {
  // 5 or 6 states a thread, 16 channels a block, chunk 8, instead of 4 lanes
  // of 10 to 12 states at chunk 4 (which stay at dstate 33 to 39).
  constexpr const char* kEightLanes = "seq.K8.D16.fp32.t128.s8.fast";
  constexpr const char* kFourLanes = "seq.K4.D32.fp32.t128.s4.fast";
  constexpr const char* kWarp = "ws.K256.D16.fp32.t512.s1.fast";
  for (const Want& w : {Want{9, 1536, 2048, 48, kEightLanes}, Want{8, 1536, 2048, 48, kEightLanes},
                        Want{8, 1024, 1024, 40, kEightLanes}, Want{4, 2048, 1024, 36, kFourLanes},
                        Want{12, 1024, 1024, 44, kEightLanes}, Want{16, 768, 1024, 48, kEightLanes},
                        Want{8, 1536, 1024, 40, kEightLanes}, Want{16, 1024, 512, 34, kFourLanes},
                        Want{2, 4096, 2048, 33, kFourLanes}, Want{4, 2048, 1024, 39, kFourLanes},
                        Want{16, 1024, 512, 41, kEightLanes}, Want{2, 4096, 2048, 46, kEightLanes},
                        // Under 256 blocks of 32 channels the warp scan (which replaced
                        // multipass) stays.
                        Want{6, 1024, 2048, 44, kWarp}, Want{4, 1024, 4096, 34, kWarp},
                        Want{2, 2048, 2048, 33, kWarp}})
    for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) check_key(w, t);
  // Not past 48 (8 lanes of 7 states or more lost there), nor with fp64 sums.
  BwdProblem p;
  p.fwd = testing::shape(8, 1536, 2048, 56, DType::kBF16);
  CHECK(default_config(p, BwdAcc::kF32, 227 * 1024, 132).config.n_split == 4);
  p.fwd = testing::shape(8, 1536, 2048, 48, DType::kBF16);
  CHECK(default_config(p, BwdAcc::kF64, 227 * 1024, 132).config.n_split == 4);
  // Multipass there (few blocks) keeps 4 lanes at chunk 8, not 4 (which
  // spills), with the segments the chunk count allows.
  for (int64_t n : {33, 36, 40, 44, 48}) {
    p.fwd = testing::shape(2, 384, 8192, n, DType::kF16);
    const BwdDefault d = default_config(p, BwdAcc::kF32, 227 * 1024, 132);
    INFO(p.key() << ": " << d.config.key() << " " << d.reason);
    CHECK(d.config.algo == BwdAlgo::kMultiPass);
    CHECK(d.config.n_split == 4);
    CHECK(d.config.chunk == 8);
    CHECK(d.config.segments == 86);
    CHECK(check_config(p, d.config, 227 * 1024).is_ok());
  }
  // Not with fp64 sums.
  p.fwd = testing::shape(2, 384, 8192, 48, DType::kF16);
  CHECK(default_config(p, BwdAcc::kF64, 227 * 1024, 132).config.chunk == 4);
}

TEST_CASE("the backward default scans few channels with several warps a channel", "[bwd]") {
  BwdProblem p;
  // mamba_ssm's test grid: (2, 4, seqlen, 8), fp32, with its flags.
  struct FewWant {
    int64_t dim, seqlen, dstate;
    const char* key;
    int64_t chunks;
  };
  // From 128 steps a channel's states go over as many blocks (state groups,
  // 8 warps or more each) as fill one wave of 16 warps per SM, up to 8.
  for (const FewWant& w : {FewWant{4, 128, 8, "ws.K1024.D1.fp32.t256.s8.fast", 1},
                           FewWant{4, 200, 8, "ws.K1024.D1.fp32.t256.s8.fast", 1},
                           FewWant{4, 512, 8, "ws.K1024.D1.fp32.t256.s8.fast", 1},
                           FewWant{4, 1024, 8, "ws.K1024.D1.fp32.t256.s8.fast", 1},
                           FewWant{4, 1024, 16, "ws.K1024.D1.fp32.t256.s8.fast", 1},
                           FewWant{4, 2048, 8, "ws.K2048.D1.fp32.t512.s8.fast", 1},
                           FewWant{4, 2048, 16, "ws.K2048.D1.fp32.t512.s8.fast", 1},
                           FewWant{32, 4096, 8, "ws.K2048.D1.fp32.t512.s2.fast", 2},
                           FewWant{1536, 128, 16, "ws.K128.D8.fp32.t256.s1.fast", 1}}) {
    p.fwd = testing::shape(w.dim == 1536 ? 1 : 2, w.dim, w.seqlen, w.dstate, DType::kF32);
    p.fwd.has_d = p.fwd.has_z = p.fwd.has_delta_bias = p.fwd.delta_softplus = true;
    const BwdDefault d = default_config(p, BwdAcc::kF32, 227 * 1024, 132);
    INFO(p.key() << ": " << d.config.key() << " " << d.reason);
    CHECK(d.config.key() == w.key);
    CHECK(d.reason.find("warp scan") != std::string::npos);
    CHECK(plan_bwd(p, d.config, 227 * 1024).value().n_chunks == w.chunks);
    // fp64 accumulation as well, where it fits (not past one chunk at dstate
    // 16: that takes state groups, fp32 only).
    const BwdConfig d64 = default_config(p, BwdAcc::kF64, 227 * 1024, 132).config;
    CHECK(d64.algo ==
          (w.seqlen == 2048 && w.dstate == 16 ? BwdAlgo::kMultiPass : BwdAlgo::kWarpScan));
    CHECK(scan_warps(d64) <= 8);  // 16 warps of fp64 sums spill
    CHECK(check_config(p, d64, 227 * 1024).is_ok());
  }
  // Past one chunk at dstate 16 where fewer than 4 groups fit (64 channels),
  // past 4096 steps, or more channels at more steps: multipass (measured
  // faster there).
  for (const auto& [b, d, l, n] :
       {std::array<int64_t, 4>{2, 32, 2048, 16}, std::array<int64_t, 4>{2, 4, 8192, 8},
        std::array<int64_t, 4>{2, 768, 512, 16}, std::array<int64_t, 4>{2, 64, 1024, 8}}) {
    p.fwd = testing::shape(b, d, l, n, DType::kF32);
    INFO(p.key());
    CHECK(default_config(p, BwdAcc::kF32, 227 * 1024, 132).config.algo == BwdAlgo::kMultiPass);
  }
  // Under 128 steps: one warp, one group.
  p.fwd = testing::shape(2, 4, 127, 8, DType::kF32);
  const BwdConfig short_seq = default_config(p, BwdAcc::kF32, 227 * 1024, 132).config;
  CHECK(short_seq.key() == "ws.K128.D4.fp32.t128.s1.fast");
  // Short enough for the sequential kernel alone: unchanged.
  p.fwd = testing::shape(2, 4, 64, 8, DType::kF32);
  CHECK(default_config(p, BwdAcc::kF32, 227 * 1024, 132).config.algo == BwdAlgo::kSequential);
}

TEST_CASE("the backward default's reason gives its grid in waves", "[bwd]") {
  // (4,5120,8192,16): 640 blocks of 128 threads, 4 a SM on 132 SMs.
  BwdProblem p = mid(DType::kBF16, 16);
  p.fwd = testing::shape(4, 5120, 8192, 16, DType::kBF16);
  const BwdDefault d = default_config(p, BwdAcc::kF32, 227 * 1024, 132);
  INFO(d.reason);
  CHECK(d.config.algo == BwdAlgo::kSequential);
  CHECK(d.reason.find("grid 640 blocks, 1.21 waves of up to 4 per SM on 132 SMs") !=
        std::string::npos);
  // Multipass counts every segment's blocks; the warp scan and an unknown
  // SM count say nothing of waves.
  p.fwd = testing::shape(1, 1536, 2048, 16, DType::kBF16);
  const BwdDefault mp = default_config(p, BwdAcc::kF32, 227 * 1024, 132);
  INFO(mp.reason);
  REQUIRE(mp.config.algo == BwdAlgo::kMultiPass);
  CHECK(mp.reason.find("grid " + std::to_string(48 * mp.config.segments) + " blocks") !=
        std::string::npos);
  CHECK(default_config(p, BwdAcc::kF32, 227 * 1024).reason.find("waves") == std::string::npos);
  p.fwd = testing::shape(2, 4, 127, 8, DType::kF32);
  CHECK(default_config(p, BwdAcc::kF32, 227 * 1024, 132).reason.find("waves") == std::string::npos);
}

TEST_CASE("the backward default takes 3 blocks per SM when its grid fits one wave of 3", "[bwd]") {
  // (8,1536,2048,16): 384 blocks of 128 threads; on 132 SMs one wave of 3.
  const BwdProblem p = mid(DType::kBF16, 16);
  const BwdDefault d = default_config(p, BwdAcc::kF32, 227 * 1024, 132);
  CHECK(d.config.key() == "seq.K16.D32.fp32.t128.s4.fast.b3");
  CHECK(d.reason.find("3 blocks per SM") != std::string::npos);
  CHECK(rule_blocks(p, default_config(p, BwdAcc::kF32, 227 * 1024).config) == 4);
  // Unknown SM count, or a grid past one wave of 3 (116 SMs: 348 slots), or
  // 2048 blocks: the rule's 4.
  CHECK(default_config(p, BwdAcc::kF32, 227 * 1024).config.blocks == 0);
  CHECK(default_config(p, BwdAcc::kF32, 227 * 1024, 116).config.blocks == 0);
  BwdProblem large = p;
  large.fwd = testing::shape(16, 4096, 2048, 16, DType::kBF16);
  CHECK(default_config(large, BwdAcc::kF32, 227 * 1024, 132).config.blocks == 0);
  // dstate 64 (8 states a thread: the rule asks 2) and fp64 stay as they are.
  CHECK(default_config(mid(DType::kBF16, 64), BwdAcc::kF32, 227 * 1024, 132).config.blocks == 0);
  CHECK(default_config(p, BwdAcc::kF64, 227 * 1024, 132).config.blocks == 0);
  // The tuner's space holds both.
  const auto space = search_space(p, 227 * 1024);
  CHECK(std::count(space.begin(), space.end(), d.config) == 1);
  CHECK(std::count(space.begin(), space.end(),
                   default_config(p, BwdAcc::kF32, 227 * 1024).config) == 1);
}

TEST_CASE("the backward default spreads dstate 5 to 16 over 4 lanes where 2 leave few blocks",
          "[bwd]") {
  for (const Want& w :
       {// 192 blocks of 2 lanes (the warp scan before): 384 of 4, 2 states a thread, chunk 32.
        Want{8, 1536, 2048, 8, "seq.K32.D32.fp32.t128.s4.fast.b3"},
        Want{8, 1536, 2048, 6, "seq.K32.D32.fp32.t128.s4.fast.b3"},
        // 3 states a thread: chunk 16 (the history of 32 would pass 32 KiB).
        Want{8, 1536, 2048, 12, "seq.K16.D32.fp32.t128.s4.fast.b3"},
        // 256 blocks of 2 lanes: the sequential kernel as before.
        Want{8, 2048, 2048, 8, "seq.K16.D64.fp32.t128.s2.fast.b3"},
        // Few channels: multipass over the 4-lane block.
        Want{2, 256, 2048, 8, "mp.K16.D32.fp32.t128.s4.fast.S64"},
        // 384 blocks of 2 lanes already: as before.
        Want{16, 1536, 2048, 8, "seq.K16.D64.fp32.t128.s2.fast.b3"},
        // dstate 16 is 4 lanes anyway; dstate 4 keeps its one lane.
        Want{8, 1536, 2048, 16, "seq.K16.D32.fp32.t128.s4.fast.b3"}}) {
    const BwdProblem p = check_key(w, DType::kBF16);
    // fp64 sums keep chunk 16.
    CHECK(default_config(p, BwdAcc::kF64, 227 * 1024, 132).config.chunk <= 16);
  }
  // Past one wave of 3 blocks per SM (116 SMs): the rule's 4 blocks.
  BwdProblem p8;
  p8.fwd = testing::shape(8, 1536, 2048, 8, DType::kBF16);
  CHECK(default_config(p8, BwdAcc::kF32, 227 * 1024, 116).config.key() ==
        "seq.K32.D32.fp32.t128.s4.fast");
  BwdProblem p4;
  p4.fwd = testing::shape(8, 1536, 2048, 4, DType::kBF16);
  CHECK(default_config(p4, BwdAcc::kF32, 227 * 1024, 132).config.n_split == 1);
}

TEST_CASE("the backward search space is a few dozen legal configs", "[bwd]") {
  for (int64_t n : {1, 4, 16, 256}) {
    const BwdProblem p = mid(DType::kBF16, n);
    const auto space = search_space(p, 227 * 1024);
    INFO(p.key());
    CHECK(space.size() >= 4);
    CHECK(space.size() <= 64);
    for (const auto& c : space) CHECK(check_config(p, c, 227 * 1024).is_ok());
    // The default (what an untuned call runs) comes first, once.
    const BwdConfig def = default_config(p, BwdAcc::kF32, 227 * 1024).config;
    REQUIRE(!space.empty());
    CHECK(space.front() == def);
    CHECK(std::count(space.begin(), space.end(), def) == 1);
    // The warp scan's chunks and widths, where their B/C rows fit.
    const auto ws = std::count_if(space.begin(), space.end(),
                                  [](const BwdConfig& c) { return c.algo == BwdAlgo::kWarpScan; });
    if (n == 256) {
      CHECK(ws == 0);
    } else {
      CHECK(ws >= 6);
    }
    // The sequential default's block with 2 channels a thread, on half its
    // threads and on as many.
    if (def.algo == BwdAlgo::kSequential) {
      BwdConfig two = def;
      two.chan = 2;
      two.blocks = 0;
      two.threads = def.threads / 2;
      CHECK(std::count(space.begin(), space.end(), two) == (two.threads >= 32 ? 1 : 0));
      two.d_step *= 2;
      two.threads = def.threads;
      if (two.d_step <= 64) CHECK(std::count(space.begin(), space.end(), two) == 1);
    }
  }
}

TEST_CASE("the backward space holds a multipass default and its segment counts", "[bwd]") {
  // Batch-1 prefill: 128 blocks, the default is multipass (issue 15: a tune
  // whose space lacked it picked a sequential config 2.5x slower).
  BwdProblem p = mid(DType::kF16);
  p.fwd = testing::shape(1, 4096, 4096, 16, DType::kF16);
  const BwdConfig def = default_config(p, BwdAcc::kF32, 227 * 1024).config;
  REQUIRE(def.algo == BwdAlgo::kMultiPass);
  const auto space = search_space(p, 227 * 1024);
  REQUIRE(!space.empty());
  CHECK(space.front() == def);
  std::set<int> segments;
  for (const auto& c : space)
    if (c.algo == BwdAlgo::kMultiPass) segments.insert(c.segments);
  for (int s : {2, 8, 32, 128, 256}) CHECK(segments.count(s) == 1);
  for (int s : segments) CHECK(s <= 256);
}

}  // namespace
}  // namespace ssmtune::bwd
