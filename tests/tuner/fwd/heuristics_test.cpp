#include "tuner/fwd/heuristics.h"

#include <catch2/catch.hpp>
#include <initializer_list>

#include "support/problems.h"
#include "tuner/fwd/plan.h"

namespace ssmtune {
namespace {

// bf16 unless said otherwise: the dtype of the large benchmark shapes.
FwdProblem shape(int64_t b, int64_t d, int64_t l, int64_t n, DType dt = DType::kBF16) {
  return testing::shape(b, d, l, n, dt);
}

constexpr int kSms = 132;
constexpr size_t kShared = 227 * 1024;

// Each problem's default (132 SMs) is a legal `algo` config of `items` steps
// a lane.
void check_defaults(std::initializer_list<FwdProblem> problems, ScanAlgo algo, int items) {
  for (const FwdProblem& p : problems) {
    const FwdDefaultChoice d = heuristic_default(p, kSms, kShared);
    INFO(p.key() << " " << d.config.key() << ": " << d.reason);
    CHECK(d.config.algo == algo);
    CHECK(d.config.items == items);
    CHECK(check_config(p, d.config, kShared).is_ok());
  }
}

// A problem and its default's key (132 SMs).
struct Want {
  FwdProblem p;
  const char* key;
};

// Each problem's default is its key, and legal.
void check_keys(std::initializer_list<Want> wants) {
  for (const Want& w : wants) {
    const FwdDefaultChoice d = heuristic_default(w.p, kSms, kShared);
    INFO(w.p.key() << ": " << d.reason);
    CHECK(d.config.key() == w.key);
    CHECK(check_config(w.p, d.config, kShared).is_ok());
  }
}

TEST_CASE("long sequences over many channels default to the pipelined kernel", "[tuner]") {
  for (const FwdProblem& p : {shape(8, 1536, 2048, 16), shape(4, 5120, 8192, 16),
                              shape(8, 1536, 2048, 16, DType::kF32)}) {
    const FwdDefaultChoice d = heuristic_default(p, kSms, kShared);
    INFO(p.key() << " " << d.config.key() << ": " << d.reason);
    CHECK(d.config.algo == ScanAlgo::kPipelined);
    CHECK(d.config.n_split == 4);  // four states per thread at dstate 16
    CHECK(d.config.chunk == 32);
    CHECK(d.config.items == 3);
    CHECK(check_config(p, d.config, kShared).is_ok());
  }
}

TEST_CASE("short sequences keep the sequential default and its reads in flight", "[tuner]") {
  // (256, 1536, 64): 12288 blocks of 32 channels; the ring would not fill.
  const FwdDefaultChoice d = heuristic_default(shape(256, 1536, 64, 16), kSms, kShared);
  INFO(d.config.key() << ": " << d.reason);
  CHECK(d.config.algo == ScanAlgo::kSequential);
  CHECK(d.config.items == 1);  // crowded grid: no reads in flight
  CHECK(d.config.n_split == 8);
  CHECK(check_config(shape(256, 1536, 64, 16), d.config, kShared).is_ok());
  // (8, 1536, 64): 384 blocks, 2.9 per SM, 2 chunks of the pipelined default.
  const FwdDefaultChoice few = heuristic_default(shape(8, 1536, 64, 16), kSms, kShared);
  CHECK(few.config.algo == ScanAlgo::kSequential);
  CHECK(few.config.items == 2);
  CHECK(few.reason.find("384 blocks") != std::string::npos);
}

TEST_CASE("pipelined defaults stay legal from dstate 1 to 256", "[tuner]") {
  for (DType t : {DType::kF32, DType::kBF16})
    for (int64_t n : {1, 2, 4, 16, 64, 256}) {
      const FwdProblem p = shape(8, 1536, 2048, n, t);
      const FwdConfig c = default_config(p, ScanAlgo::kPipelined, AccType::kF32, kShared);
      INFO(p.key() << " " << c.key());
      CHECK(check_config(p, c, kShared).is_ok());
      CHECK(c.threads == c.d_step * c.n_split);
      CHECK(c.items == 3);
    }
}

TEST_CASE("few channels and long sequences go to the split scan", "[tuner]") {
  for (const FwdProblem& p :
       {shape(1, 2048, 65536, 16), shape(1, 5120, 16384, 16), shape(2, 64, 8192, 16, DType::kF32),
        shape(1, 1536, 1024, 16), shape(4, 512, 1024, 16), shape(1, 2048, 2048, 16),
        shape(2, 256, 4096, 16), shape(2, 512, 2048, 16)}) {
    const FwdDefaultChoice d = heuristic_default(p, kSms, kShared);
    INFO(p.key() << " " << d.config.key() << ": " << d.reason);
    CHECK(d.config.algo == ScanAlgo::kSplit);
    CHECK(check_config(p, d.config, kShared).is_ok());
    // About 1024 blocks (2048 where segments stay 64 chunks long), each
    // segment at least 8 chunks.
    const int64_t tiles = (p.dim + d.config.d_step - 1) / d.config.d_step;
    const int64_t chunks = (p.seqlen + d.config.chunk - 1) / d.config.chunk;
    const int64_t s = d.config.segments;
    CHECK(s >= 2);
    CHECK(s * 8 <= chunks);
    CHECK((tiles * p.batch * s >= 1024 || s == chunks / 8));
    CHECK(tiles * p.batch * (s - 1) < 2048);
  }
}

TEST_CASE("few channels and shorter sequences go to the warp scan", "[tuner]") {
  for (const FwdProblem& p : {shape(1, 2048, 512, 16), shape(8, 256, 1024, 4, DType::kF32)}) {
    const FwdDefaultChoice d = heuristic_default(p, kSms, kShared);
    INFO(p.key() << " " << d.config.key() << ": " << d.reason);
    CHECK(d.config.algo == ScanAlgo::kWarpScan);
    CHECK(d.config.d_step == 8);
    CHECK(check_config(p, d.config, kShared).is_ok());
  }
}

TEST_CASE("few states over many channels take the warp scan, not the split scan", "[tuner]") {
  // At dstate <= 4 from 8 channels per SM, at any length: 8 steps a lane in
  // blocks of 8 channels, and from 32 channels per SM 4 steps in blocks of 4.
  check_defaults({shape(1, 2048, 65536, 2, DType::kF32), shape(8, 256, 1024, 4)},
                 ScanAlgo::kWarpScan, 8);
  // (Sequences shorter than the small-state pipelined kernel's.)
  check_defaults(
      {shape(16, 1024, 512, 4), shape(32, 768, 512, 4), shape(16, 1024, 512, 4, DType::kF32)},
      ScanAlgo::kWarpScan, 4);
  for (const FwdProblem& p : {shape(16, 1024, 512, 4), shape(8, 256, 1024, 4)}) {
    const FwdConfig c = heuristic_default(p, kSms, kShared).config;
    CHECK(c.d_step == (p.dim == 1024 ? 4 : 8));
    CHECK(c.threads == 32 * c.d_step);
    CHECK(c.chunk == 32 * c.items);
  }
  // Fewer channels than that still split a long sequence.
  CHECK(heuristic_default(shape(1, 512, 8192, 4), kSms, kShared).config.algo == ScanAlgo::kSplit);
}

TEST_CASE("dstate 16 from 24 channels per SM up to 4096 steps takes the pipelined kernel",
          "[tuner]") {
  check_defaults({shape(8, 1024, 2048, 16), shape(8, 512, 512, 16),
                  shape(1, 4096, 4096, 16, DType::kF16), shape(4, 1024, 1024, 16)},
                 ScanAlgo::kPipelined, 3);
  // Past 4096 steps the split scan; fewer channels, or a sequence the ring
  // does not fill, the rules below; dstate 8 is not in the band (below 20
  // channels per SM; from there the small-state layout).
  CHECK(heuristic_default(shape(1, 5120, 16384, 16), kSms, kShared).config.algo ==
        ScanAlgo::kSplit);
  CHECK(heuristic_default(shape(2, 768, 512, 16), kSms, kShared).config.algo ==
        ScanAlgo::kWarpScan);
  CHECK(heuristic_default(shape(2, 1024, 256, 16), kSms, kShared).config.algo ==
        ScanAlgo::kWarpScan);
  CHECK(heuristic_default(shape(2, 1024, 2048, 8), kSms, kShared).config.algo !=
        ScanAlgo::kPipelined);
}

TEST_CASE("dstate 4 and 8 from 20 channels per SM take the pipelined kernel, 4 threads a channel",
          "[tuner]") {
  for (const FwdProblem& p :
       {shape(4, 1536, 4096, 4), shape(16, 768, 1024, 4), shape(8, 1024, 2048, 4),
        shape(2, 1536, 2048, 4), shape(8, 1536, 2048, 8), shape(16, 768, 1024, 8),
        shape(16, 1536, 1024, 4, DType::kF16), shape(8, 1024, 2048, 4, DType::kF32),
        shape(4, 2048, 4096, 8, DType::kF32)}) {
    const FwdDefaultChoice d = heuristic_default(p, kSms, kShared);
    INFO(p.key() << " " << d.config.key() << ": " << d.reason);
    CHECK(d.config.algo == ScanAlgo::kPipelined);
    CHECK(d.config.n_split == 4);
    CHECK(d.config.d_step == 16);
    CHECK(d.config.chunk == 64);
    CHECK(d.config.items == 2);
    CHECK(check_config(p, d.config, kShared).is_ok());
    CHECK(d.reason.find("4 threads a channel") != std::string::npos);
  }
  // Below 20 channels per SM, outside 1024 to 4096 steps, or at another
  // dstate: not this layout.
  for (const FwdProblem& p :
       {shape(8, 256, 1024, 4, DType::kF32), shape(1, 2048, 4096, 4), shape(16, 1024, 512, 4),
        shape(4, 1536, 8192, 4), shape(16, 1536, 1024, 2), shape(8, 1024, 2048, 6),
        shape(16, 1536, 1024, 12)}) {
    const FwdDefaultChoice d = heuristic_default(p, kSms, kShared);
    INFO(p.key() << " " << d.config.key() << ": " << d.reason);
    CHECK_FALSE((d.config.algo == ScanAlgo::kPipelined && d.config.d_step == 16 &&
                 d.config.n_split == 4 && d.config.threads == 64));
  }
}

TEST_CASE("dstate 4 over channels that fill the GPU takes 4 threads a channel, a ring of 2",
          "[tuner]") {
  // From 256 channels per SM (a sequential thread pair each fills the GPU)
  // where the ring of 32-step chunks fills (512 steps or more).
  constexpr const char* kFour = "pipelined.K32.D16.fp32.t64.i2.s4.fast";
  check_keys(
      {Want{shape(15, 2560, 512, 4), kFour}, Want{shape(32, 2048, 1024, 4, DType::kF16), kFour},
       Want{shape(16, 4096, 2048, 4, DType::kF32), kFour}, Want{shape(8, 8192, 4096, 4), kFour},
       Want{shape(40, 1024, 768, 4, DType::kF32), kFour},
       Want{shape(12, 3072, 8192, 4, DType::kF16), kFour}});
  // Not under 512 steps, below 256 channels per SM (the rule above, chunks of
  // 64), nor at dstate 3 or 5.
  for (const FwdProblem& p : {shape(64, 1536, 256, 4), shape(16, 1536, 1024, 4, DType::kF16),
                              shape(32, 2048, 1024, 3), shape(32, 2048, 1024, 5)}) {
    const FwdDefaultChoice d = heuristic_default(p, kSms, kShared);
    INFO(p.key() << " " << d.config.key() << ": " << d.reason);
    CHECK(d.config.key() != std::string(kFour));
  }
}

TEST_CASE("dstate 5 to 15 spread a channel's states over 2 or 4 threads", "[tuner]") {
  check_keys({// From 20 channels per SM, 1024 to 4096 steps (the small-state rule).
              Want{shape(8, 1536, 2048, 6), "pipelined.K32.D32.fp32.t64.i2.s2.fast"},
              Want{shape(8, 1536, 2048, 5), "pipelined.K32.D32.fp32.t64.i2.s2.fast"},
              Want{shape(8, 1536, 2048, 12), "pipelined.K32.D16.fp32.t64.i3.s4.fast"},
              Want{shape(16, 768, 1024, 10), "pipelined.K32.D16.fp32.t64.i3.s4.fast"},
              // Channels enough for the pipelined kernel's own default.
              Want{shape(16, 1536, 2048, 12), "pipelined.K32.D32.fp32.t128.i3.s4.fast"},
              Want{shape(16, 1536, 1024, 12), "pipelined.K32.D32.fp32.t128.i3.s4.fast"},
              Want{shape(16, 1536, 2048, 8), "pipelined.K32.D32.fp32.t128.i3.s4.fast"},
              Want{shape(32, 1536, 2048, 6), "pipelined.K32.D32.fp32.t64.i2.s2.fast"}});
  // The pipelined kernel's own default: 1 lane to dstate 4, 2 to 7, 4 from 8.
  for (int64_t n = 1; n <= 16; ++n) {
    const FwdConfig c =
        default_config(shape(8, 1536, 2048, n), ScanAlgo::kPipelined, AccType::kF32, kShared);
    INFO("dstate " << n);
    CHECK(c.n_split == (n <= 4 ? 1 : n < 8 ? 2 : 4));
  }
}

TEST_CASE("short sequences over many channels take the pipelined kernel or short lanes",
          "[tuner]") {
  constexpr const char* kPipe = "pipelined.K32.D16.fp32.t64.i2.s4.fast";
  check_keys({// dstate 4 to 16, 64 to 256 steps (512 at dstate 5 to 8), from 30
              // channels per SM (64 at dstate 4).
              Want{shape(16, 384, 128, 16, DType::kF16), kPipe},
              Want{shape(4, 2048, 256, 16, DType::kF32), kPipe},
              Want{shape(8, 1024, 256, 16), kPipe},
              Want{shape(4, 1024, 512, 8, DType::kF32), kPipe}, Want{shape(8, 2048, 64, 4), kPipe},
              Want{shape(16, 1536, 256, 4), kPipe}, Want{shape(8, 1024, 256, 12), kPipe},
              Want{shape(8, 1024, 512, 6), kPipe},
              // Fewer channels, or dstate 1 to 3: the warp scan's short lanes
              // from 16 channels per SM at 512 steps or fewer (2 steps a lane
              // at 64 or fewer from dstate 4).
              Want{shape(4, 768, 256, 8), "warpscan.K128.D4.fp32.t128.i4.s1.fast"},
              Want{shape(4, 1024, 128, 4), "warpscan.K128.D4.fp32.t128.i4.s1.fast"},
              Want{shape(1, 4096, 64, 2), "warpscan.K128.D4.fp32.t128.i4.s1.fast"},
              Want{shape(8, 512, 64, 1), "warpscan.K128.D4.fp32.t128.i4.s1.fast"},
              Want{shape(4, 768, 64, 8), "warpscan.K64.D4.fp32.t128.i2.s1.fast"},
              Want{shape(16, 1536, 128, 1, DType::kF32), "warpscan.K128.D4.fp32.t128.i4.s1.fast"},
              // Below 16 channels per SM: a warp's lanes over 256 steps.
              Want{shape(2, 512, 256, 16), "warpscan.K256.D8.fp32.t256.i8.s1.fast"}});
  // Past the band: the pipelined kernel's own default at 512 steps and dstate
  // 16; the sequential scan where its threads fill the GPU; a warp's lanes
  // over 256 steps past 512 steps below 32 channels per SM (dstate 4).
  CHECK(heuristic_default(shape(8, 1536, 512, 16), kSms, kShared).config.key() ==
        "pipelined.K32.D32.fp32.t128.i3.s4.fast");
  CHECK(heuristic_default(shape(16, 768, 64, 16), kSms, kShared).config.algo ==
        ScanAlgo::kSequential);
  CHECK(heuristic_default(shape(2, 1024, 1024, 4), kSms, kShared).config.key() ==
        "warpscan.K256.D8.fp32.t256.i8.s1.fast");
}

TEST_CASE(
    "one to three states over 8 to 64 channels per SM take the block scan, a warp or two "
    "a channel",
    "[tuner]") {
  constexpr const char* kOneWarp = "blockscan.K256.D1.fp32.t32.i8.s1.fast";
  constexpr const char* kTwoWarps = "blockscan.K512.D1.fp32.t64.i8.s1.fast";
  check_keys({Want{shape(3, 768, 2048, 2), kOneWarp}, Want{shape(2, 1024, 4096, 2), kOneWarp},
              Want{shape(8, 512, 8192, 2), kOneWarp}, Want{shape(1, 4096, 2048, 3), kOneWarp},
              Want{shape(8, 256, 4096, 1, DType::kF16), kOneWarp},
              // Up to 1024 steps (from 1000), and from 32 channels per SM: two
              // warps, chunks of 512.
              Want{shape(2, 768, 1024, 1), kTwoWarps}, Want{shape(12, 512, 1024, 2), kTwoWarps},
              Want{shape(4, 512, 1024, 1, DType::kF32), kTwoWarps},
              Want{shape(6, 256, 1000, 2, DType::kF32), kTwoWarps},
              Want{shape(16, 512, 2048, 1), kTwoWarps},
              Want{shape(3, 1536, 3000, 1, DType::kF16), kTwoWarps}});
  // Outside: dstate 4, 8 channels per SM or fewer (the block scan's few
  // hundred channels, or the warp scan), more than 64 per SM, fewer than 1000
  // or more than 8192 steps.
  for (const FwdProblem& p :
       {shape(10, 384, 2048, 4, DType::kF16), shape(2, 2048, 512, 4, DType::kF32),
        shape(2, 512, 2048, 2), shape(24, 512, 2048, 2), shape(4, 1024, 768, 1),
        shape(2, 1536, 512, 2, DType::kF32), shape(2, 1024, 16384, 2)}) {
    const FwdDefaultChoice d = heuristic_default(p, kSms, kShared);
    INFO(p.key() << " " << d.config.key() << ": " << d.reason);
    CHECK_FALSE(
        (d.config.algo == ScanAlgo::kBlockScan && d.config.threads <= 64 && d.config.items == 8));
  }
}

TEST_CASE("few channels of 17 to 64 states take the pipelined kernel, more lanes the fewer",
          "[tuner]") {
  check_keys(
      {// Up to 16 channels per SM: 8 lanes, chunks of 64; blocks of 16
       // channels in a ring of 3 (halves) or 8 in a ring of 2 (fp32).
       Want{shape(2, 512, 512, 24), "pipelined.K64.D16.fp32.t128.i3.s8.fast"},
       Want{shape(5, 256, 512, 48), "pipelined.K64.D16.fp32.t128.i3.s8.fast"},
       Want{shape(1, 2048, 4096, 64), "pipelined.K64.D16.fp32.t128.i3.s8.fast"},
       Want{shape(4, 384, 512, 32, DType::kF16), "pipelined.K64.D16.fp32.t128.i3.s8.fast"},
       Want{shape(8, 256, 1024, 32, DType::kF32), "pipelined.K64.D8.fp32.t64.i2.s8.fast"},
       Want{shape(2, 1024, 512, 64, DType::kF32), "pipelined.K64.D8.fp32.t64.i2.s8.fast"},
       // Up to 24: 8 lanes in blocks of 32 (halves), 4 in blocks of 16
       // (fp32), a ring of 2.
       Want{shape(2, 1536, 1000, 40), "pipelined.K64.D32.fp32.t256.i2.s8.fast"},
       Want{shape(6, 512, 1024, 64), "pipelined.K64.D32.fp32.t256.i2.s8.fast"},
       Want{shape(4, 768, 2048, 48, DType::kF16), "pipelined.K64.D32.fp32.t256.i2.s8.fast"},
       Want{shape(9, 256, 1000, 20, DType::kF32), "pipelined.K64.D16.fp32.t64.i2.s4.fast"},
       // Past 24 per SM: the kernel's own default.
       Want{shape(4, 1536, 1000, 20), "pipelined.K32.D32.fp32.t128.i3.s4.fast"},
       Want{shape(2, 2048, 2048, 32), "pipelined.K32.D32.fp32.t128.i3.s4.fast"},
       Want{shape(16, 256, 256, 48, DType::kF16), "pipelined.K32.D32.fp32.t128.i3.s4.fast"},
       Want{shape(6, 1024, 512, 24, DType::kF32), "pipelined.K32.D32.fp32.t128.i3.s4.fast"}});
  // Outside: dstate 16 or past 64, fewer than 1024 channels, fewer than 256
  // or more than 4096 steps; and where a thread a channel's lanes fills the
  // GPU (the first rule's pipelined or sequential layouts).
  for (const FwdProblem& p :
       {shape(2, 512, 512, 16), shape(2, 512, 512, 128), shape(2, 256, 512, 24),
        shape(8, 512, 128, 32), shape(2, 1024, 8192, 32), shape(8, 1536, 2048, 64)}) {
    const FwdDefaultChoice d = heuristic_default(p, kSms, kShared);
    INFO(p.key() << " " << d.config.key() << ": " << d.reason);
    CHECK_FALSE((d.config.algo == ScanAlgo::kPipelined && d.config.chunk == 64));
  }
  // Where shared memory would shrink the chunk (48 KB a block), the rules
  // before.
  const FwdDefaultChoice small = heuristic_default(shape(4, 512, 2048, 24), kSms, 48 * 1024);
  INFO(small.config.key() << ": " << small.reason);
  CHECK(small.config.algo != ScanAlgo::kPipelined);
}

TEST_CASE(
    "short sequences where the sequential scan fills the GPU take 2 pipelined threads a channel",
    "[tuner]") {
  constexpr const char* kPipe = "pipelined.K32.D32.fp32.t64.i2.s2.fast";
  check_keys(
      {// dstate 8 to 16, 96 to 384 steps (512 at dstate 8).
       Want{shape(32, 1536, 256, 16), kPipe}, Want{shape(16, 1536, 384, 16), kPipe},
       Want{shape(64, 1536, 128, 16), kPipe}, Want{shape(8, 1536, 96, 16), kPipe},
       Want{shape(4, 4096, 128, 16), kPipe}, Want{shape(16, 2048, 192, 16, DType::kF16), kPipe},
       Want{shape(8, 1536, 256, 16, DType::kF32), kPipe}, Want{shape(32, 1536, 256, 8), kPipe},
       Want{shape(16, 1536, 512, 8, DType::kF32), kPipe}, Want{shape(16, 2048, 256, 12), kPipe}});
  // Outside the band: 64 steps (the sequential scan), 512 steps at dstate 16
  // (the pipelined kernel's own default), dstate 4 (the sequential scan).
  CHECK(heuristic_default(shape(16, 768, 64, 16), kSms, kShared).config.algo ==
        ScanAlgo::kSequential);
  CHECK(heuristic_default(shape(16, 1536, 512, 16), kSms, kShared).config.key() ==
        "pipelined.K32.D32.fp32.t128.i3.s4.fast");
  CHECK(heuristic_default(shape(64, 1536, 256, 4), kSms, kShared).config.algo !=
        ScanAlgo::kPipelined);
}

TEST_CASE("very few channels get several warps each of the warp scan", "[tuner]") {
  struct Case {
    FwdProblem p;
    int warps;
    int groups;
  };
  // mamba_ssm's test grid (2, 4, seqlen, 8) among them; the chunk covers the
  // sequence up to 16 warps (2048 steps), and from 128 steps a channel's
  // states go over as many blocks (state groups, at least 8 warps each) as
  // fill one wave of 16 warps per SM, up to 8; one warp and one group below.
  for (const Case& k :
       {Case{shape(2, 4, 1024, 16, DType::kF32), 8, 8},
        Case{shape(2, 4, 4096, 8, DType::kF32), 16, 8},
        Case{shape(2, 4, 2048, 8, DType::kBF16), 16, 8},
        Case{shape(2, 4, 512, 8, DType::kF16), 8, 8}, Case{shape(2, 4, 256, 8), 8, 8},
        Case{shape(2, 4, 128, 8), 8, 8}, Case{shape(2, 4, 127, 8), 1, 1},
        Case{shape(2, 4, 7, 8), 1, 1}, Case{shape(1, 4, 2048, 4, DType::kBF16), 16, 4},
        // 64 channels of 16 warps: 2 groups fill the wave (2048 warps of 2112).
        Case{shape(1, 64, 2048, 16), 16, 2}, Case{shape(2, 32, 4096, 8), 16, 2},
        // dstate 64: 8 groups of 8 states, whose chunk of 2048 fits.
        Case{shape(2, 4, 2048, 64, DType::kF32), 16, 8}}) {
    const FwdDefaultChoice d = heuristic_default(k.p, kSms, kShared);
    INFO(k.p.key() << " " << d.config.key() << ": " << d.reason);
    CHECK(d.config.algo == ScanAlgo::kWarpScan);
    CHECK(d.config.d_step == 1);
    CHECK(d.config.threads == 32 * k.warps);
    CHECK(d.config.chunk == 32 * k.warps * d.config.items);
    CHECK(d.config.n_split == k.groups);
    CHECK((d.reason.find("state groups") != std::string::npos) == (k.groups > 1));
    CHECK(check_config(k.p, d.config, kShared).is_ok());
  }
  // Fewer SMs, fewer groups: 16 SMs hold 256 warps, 2 groups of 8 channels at 16 warps.
  CHECK(heuristic_default(shape(2, 4, 2048, 8, DType::kBF16), 16, kShared).config.n_split == 2);
  // A sequence past 8 chunks: the rules before.
  CHECK(heuristic_default(shape(1, 4, 65536, 16), kSms, kShared).config.algo == ScanAlgo::kSplit);
}

TEST_CASE("up to 128 channels at dstate 9 to 16 take 8 warps over state groups", "[tuner]") {
  // 128 channels of 8 warps: 2 groups fill the wave (2048 warps of 2112);
  // below the block scan's 512 steps.
  for (const FwdProblem& p : {shape(2, 64, 384, 16), shape(4, 32, 256, 16, DType::kF32),
                              shape(1, 128, 500, 16), shape(1, 80, 300, 12, DType::kF16)}) {
    const FwdDefaultChoice d = heuristic_default(p, kSms, kShared);
    INFO(p.key() << " " << d.config.key() << ": " << d.reason);
    CHECK(d.config.algo == ScanAlgo::kWarpScan);
    CHECK(d.config.d_step == 1);
    CHECK(d.config.threads == 256);
    CHECK(d.config.chunk == 1024);
    CHECK(d.config.n_split == 2);
    CHECK(d.reason.find("state groups") != std::string::npos);
    CHECK(check_config(p, d.config, kShared).is_ok());
  }
  // From 512 steps: the block scan.
  for (const FwdProblem& p : {shape(2, 64, 2048, 16), shape(4, 32, 2048, 16, DType::kF32),
                              shape(1, 128, 1024, 16), shape(2, 96, 2048, 16)}) {
    INFO(p.key());
    CHECK(heuristic_default(p, kSms, kShared).config.algo == ScanAlgo::kBlockScan);
  }
  // A GPU whose wave two groups would not fit: the rules after (the split scan here).
  CHECK(heuristic_default(shape(2, 64, 384, 16), 16, kShared).config.n_split == 1);
  const FwdConfig eight = heuristic_default(shape(2, 64, 384, 8), kSms, kShared).config;
  CHECK_FALSE((eight.algo == ScanAlgo::kWarpScan && eight.n_split > 1));
}

TEST_CASE("a few hundred channels take the block scan", "[tuner]") {
  struct Case {
    FwdProblem p;
    int threads, items;
  };
  // About 16 warps an SM: 16 warps a channel at one channel an SM, 8 at two,
  // 4 from three; 8 steps a lane up to 4 channels an SM; a chunk no more than
  // twice the sequence. From three channels an SM and 1024 steps, halves at
  // dstate 8 or more take 16 steps a lane on 2 or 4 warps (chunks of 1024 or 2048).
  for (const Case& k :
       {Case{shape(2, 64, 2048, 16), 512, 4}, Case{shape(2, 64, 1024, 16), 256, 4},
        Case{shape(2, 64, 512, 16), 128, 4}, Case{shape(2, 128, 2048, 16), 256, 8},
        Case{shape(2, 128, 512, 16), 128, 4}, Case{shape(2, 256, 2048, 8), 128, 16},
        Case{shape(2, 256, 2048, 8, DType::kF32), 128, 8},
        Case{shape(2, 256, 1024, 16, DType::kF32), 128, 8}, Case{shape(2, 512, 1024, 16), 64, 16},
        Case{shape(2, 512, 512, 16), 128, 4}, Case{shape(4, 128, 2048, 4, DType::kF16), 128, 8},
        Case{shape(1, 768, 1024, 16, DType::kF32), 128, 4},
        Case{shape(2, 128, 4096, 16), 256, 8}}) {
    const FwdDefaultChoice d = heuristic_default(k.p, kSms, kShared);
    INFO(k.p.key() << " " << d.config.key() << ": " << d.reason);
    CHECK(d.config.algo == ScanAlgo::kBlockScan);
    CHECK(d.config.threads == k.threads);
    CHECK(d.config.items == k.items);
    CHECK(d.config.chunk == k.threads * k.items);
    CHECK(check_config(k.p, d.config, kShared).is_ok());
  }
  // Outside the bounds: 64 channels or fewer, more than 8 an SM, dstate past
  // 16, fewer than 512 or more than 4096 steps, more work than 2^17
  // (channel, step, state) an SM.
  for (const FwdProblem& p :
       {shape(2, 32, 2048, 16), shape(2, 768, 1024, 16), shape(2, 128, 2048, 32),
        shape(2, 256, 256, 16), shape(2, 128, 8192, 16), shape(2, 256, 4096, 16)}) {
    const FwdDefaultChoice d = heuristic_default(p, kSms, kShared);
    INFO(p.key() << " " << d.config.key() << ": " << d.reason);
    CHECK(d.config.algo != ScanAlgo::kBlockScan);
  }
}

TEST_CASE("sequential defaults stay legal from dstate 1 to 256", "[tuner]") {
  for (int64_t n : {1, 2, 4, 16, 64, 256}) {
    const FwdProblem p = shape(8, 1536, 2048, n);
    const FwdConfig c = default_config(p, ScanAlgo::kSequential, AccType::kF32, kShared);
    INFO(c.key());
    CHECK(check_config(p, c, kShared).is_ok());
    CHECK(c.d_step <= 64);
    CHECK(c.threads == c.d_step * c.n_split);
  }
}

}  // namespace
}  // namespace ssmtune
