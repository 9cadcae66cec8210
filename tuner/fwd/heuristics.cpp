// Default configs.
#include "tuner/fwd/heuristics.h"

#include <optional>

#include "core/int_math.h"
#include "tuner/dtype.h"
#include "tuner/fwd/algorithms.h"
#include "tuner/fwd/algos/common.h"
#include "tuner/state_groups.h"

namespace ssmtune {
namespace {

// Shortest sequence the default splits across blocks (half of it at dstate
// 16 or more). On the H200 with the block's flags, bf16: (1, 1536, 1024,
// 16) split 0.044 ms, warpscan 0.052; (8, 256, 1024, 4) fp32 plain: split
// 0.033, warpscan 0.024.
constexpr int64_t kSplitMinSeqlen = 2048;

// Longest sequence the pipelined kernel takes below 16 warps per SM (its
// blocks then run the sequence alone; past this the split scan's segments
// pay for their second pass).
constexpr int64_t kPipelinedMaxSeqlenFewChains = 4096;

// At most this many channels and steps: each channel gets several warps of
// the warp scan, so a few long chunks run one after another in blocks alone
// on their SMs. On the H200 with the flags, fp32: (2, 4, 1024, 16) 0.017 ms
// (8 warps a channel) against the split scan's 0.043 and one warp a
// channel's 0.046; (2, 4, 4096, 8) 0.033 against 0.087. At 128 channels
// ((2, 64, 2048, 16) bf16) the split scan ties (0.044 against 0.046) with
// one group; over two, kMidScanMaxChains.
constexpr int64_t kWideScanMaxChains = 64;
constexpr int64_t kWideScanMaxSeqlen = 8192;

// Past kWideScanMaxChains, up to this many channels of dstate 9 to 16 and
// this many steps: the warp scan at 8 warps a channel over state groups,
// where 2 or more fit one wave (tuner/state_groups.h: on 132 SMs, up to 132
// channels). H200 with the flags, bf16, 2 groups of 8 warps against the
// split scan, the default before: (2, 64, 2048, 16) 0.0323 / 0.0433 ms,
// (4, 32, 2048, 16) 0.0326 / 0.0427, (1, 128, 1024, 16) 0.0205 / 0.0418;
// not at (2, 64, 4096, 16) (0.0550 / 0.0472) or at 192 and 256 channels
// ((2, 96, 2048, 16) 4 groups 0.0479 / 0.0437).
constexpr int64_t kMidScanMaxChains = 128;
constexpr int64_t kMidScanMaxSeqlen = 2048;

// Past kWideScanMaxChains, up to this many channels per SM at dstate <= 16
// and kBlockScanMinSeqlen to kBlockScanMaxSeqlen steps, while channels x
// steps x dstate stays within kBlockScanMaxWorkPerSm per SM: the block scan
// (one channel a block, several warps). H100, bf16 with the flags, ms
// (`ssmtune bench`, bench/NOTES.md version 27), the default before against
// the block scan at this rule's layout: (2, 64, 2048, 16) 0.0323 / 0.0224,
// (2, 128, 1024, 16) 0.0428 / 0.0206, (2, 256, 2048, 16) 0.0452 / 0.0387,
// (2, 512, 1024, 16) 0.0443 / 0.0365, (2, 128, 4096, 16) 0.0492 / 0.0427,
// (2, 256, 2048, 8) 0.0430 / 0.0251, (2, 512, 512, 16) 0.0255 / 0.0209,
// (4, 128, 2048, 4) 0.0602 / 0.0181. Past the bounds the split scan's
// segments win: (2, 256, 4096, 16) 0.0595 / 0.0718, (2, 512, 2048, 16)
// 0.0560 / 0.0671, (2, 64, 8192, 16) 0.0629 / 0.0730, and so do the warp
// scan's one-warp lanes at 12 channels per SM ((2, 768, 512, 16) 0.0283 /
// 0.0327).
constexpr int64_t kBlockScanMaxChainsPerSm = 8;
constexpr int64_t kBlockScanMinSeqlen = 512;
constexpr int64_t kBlockScanMaxSeqlen = 4096;
constexpr int64_t kBlockScanMaxWorkPerSm = int64_t{1} << 17;

// At dstate <= 4, from this many channels per SM the warp scan's lanes take
// 4 steps each, not 8 (in heuristic_default).
constexpr int64_t kShortLanesMinChainsPerSm = 32;

// Steps a lane of the warp scan at one channel a block (chunks of 2048 at
// 16 warps; 8 steps would spill there).
constexpr int kChannelItems = 4;

// The warp scan at one channel a block: `warps` warps a channel over
// `groups` state groups.
FwdConfig channel_warpscan(const FwdProblem& p, int warps, int groups, size_t max_shared_bytes) {
  FwdConfig c = default_config(p, ScanAlgo::kWarpScan, AccType::kF32, max_shared_bytes);
  c.d_step = 1;
  c.items = kChannelItems;
  c.threads = 32 * warps;
  c.chunk = 32 * warps * c.items;
  c.n_split = groups;
  return c;
}

// Warps enough to cover the sequence in one chunk (up to 16: chunks of
// 2048); fewer where the B/C tile does not fit. Nothing where not even one
// warp's does. H200, with the block's flags, 16 warps against 8: (2, 4,
// 2048, 8) bf16 0.0180 / 0.0295 ms, (2, 4, 4096, 8) fp32 0.0217 / 0.0330,
// (2, 4, 3000, 8) fp16 0.0319 / 0.0423, (1, 4, 2048, 4) bf16 0.0122 /
// 0.0184; 8 warps of 8 steps 0.016 to 0.047. A channel's states over
// several blocks (state groups) while they fit one wave, at 8 warps a
// channel or more (tuner/state_groups.cpp).
std::optional<FwdConfig> wide_warpscan(const FwdProblem& p, int sm_count, size_t max_shared_bytes) {
  int warps = 1;
  while (warps < 16 && int64_t{32} * warps * kChannelItems < p.seqlen) warps *= 2;
  const StateGroups sg = default_state_groups(p.batch * p.dim, p.dstate, p.seqlen, warps, sm_count);
  const FwdConfig g = channel_warpscan(p, sg.warps, sg.groups, max_shared_bytes);
  if (g.n_split > 1 && check_config(p, g, max_shared_bytes).is_ok()) return g;
  for (; warps >= 1; warps /= 2) {
    const FwdConfig c = channel_warpscan(p, warps, 1, max_shared_bytes);
    if (check_config(p, c, max_shared_bytes).is_ok()) return c;
  }
  return std::nullopt;
}

// The block scan's layout for `chains` channels on `sms` SMs: about 16
// warps an SM (4 to 16 warps a channel), 8 steps a lane up to 4 channels an
// SM (4 at more, where 64 registers, not 85, keep 8 blocks resident; and at
// 16 warps), then fewer warps and steps while half the chunk still covers
// the sequence.
std::optional<FwdConfig> mid_blockscan(const FwdProblem& p, int64_t sms, size_t max_shared_bytes) {
  const int64_t chains = p.batch * p.dim;
  if (chains <= kWideScanMaxChains || chains > kBlockScanMaxChainsPerSm * sms || p.dstate > 16 ||
      p.seqlen < kBlockScanMinSeqlen || p.seqlen > kBlockScanMaxSeqlen ||
      chains * p.seqlen * p.dstate > kBlockScanMaxWorkPerSm * sms)
    return std::nullopt;
  const int64_t per_sm = (chains + sms - 1) / sms;
  FwdConfig c = default_config(p, ScanAlgo::kBlockScan, AccType::kF32, max_shared_bytes);
  int warps = 16;
  while (warps > 4 && warps * per_sm > 16) warps /= 2;
  if (warps == 4 && p.seqlen >= 1024 && p.dstate >= 8 && dtype_bytes(p.dtype) == 2) {
    // Half-precision rows from 3 channels an SM, dstate 8 or more: 16 steps
    // a lane (the kernel is built for 16 warps an SM there), a chunk of 1024
    // or 2048. H100, one run, with the flags, ms, against the layout below:
    // bf16 (2, 512, 1024, 16) 0.0311 / 0.0364, (2, 256, 2048, 16) 0.0327 /
    // 0.0384, (2, 256, 2048, 8) 0.0236 / 0.0249, (2, 400, 4096, 8) 0.0689 /
    // 0.0721, fp16 (1, 1024, 1024, 16) 0.0320 / 0.0358; but bf16 (2, 512,
    // 2048, 8) 0.0413 / 0.0404. Not at dstate 4: fp16 (4, 128, 2048, 4)
    // 0.0188 / 0.0178.
    c.items = 16;
    c.threads = p.seqlen >= 2048 ? 128 : 64;
    c.chunk = c.threads * c.items;
    if (check_config(p, c, max_shared_bytes).is_ok()) return c;
  }
  c.items = per_sm <= 4 && warps < 16 ? 8 : 4;
  while (int64_t{16} * warps * c.items >= p.seqlen && (warps > 4 || c.items > 4)) {
    if (warps > 4)
      warps /= 2;
    else
      c.items /= 2;
  }
  c.threads = 32 * warps;
  c.chunk = c.threads * c.items;
  if (!check_config(p, c, max_shared_bytes).is_ok()) return std::nullopt;
  return c;
}

// At dstate 4 to 15, from this many channels per SM, on sequences of 1024
// to 4096 steps: the pipelined kernel with a channel's states over 2 or 4
// threads. At dstate 4 and 8, 4 threads (1 or 2 states a thread), in
// blocks of 16 channels, chunks of 64 steps in a ring of 2. H100, this
// layout against the defaults before (the warp scan at dstate 4; the split
// scan or the warp scan at 8), ms: with the flags, bf16 (4, 1536, 4096, 4)
// 0.165 / 0.229, (16, 768, 1024, 4) 0.086 / 0.102, (8, 1024, 2048, 4) 0.101
// / 0.134, (2, 1536, 2048, 4) 0.072 / 0.081, (8, 1536, 2048, 8) 0.190 /
// 0.390, (16, 768, 1024, 8) 0.101 / 0.180; fp32 (8, 1024, 2048, 4) 0.172 /
// 0.191; plain, fp16 (16, 1536, 1024, 4) 0.105 / 0.134, fp32 (4, 2048,
// 4096, 8) 0.181 / 0.310 (bench/NOTES.md, version 25). At 16 channels per
// SM the warp scan stays faster ((8, 256, 1024, 4) fp32 0.033 / 0.026, (1,
// 2048, 4096, 4) bf16 0.119 / 0.079).
//
// At the other dstates up to 15, the pipelined kernel's default before
// (pow2_floor(dstate / 4) lanes: 1 at dstate 5 to 7, 2 at 9 to 15) and the
// split scan lost to mamba_ssm. H100, bf16 with the flags, exhaustive tunes
// (45 s each), ms: dstate 5 to 7, 2 lanes of up to 4 states, blocks of 32
// channels, chunks of 32 in a ring of 2 (now that kernel's own default):
// (8, 1536, 2048, 6) 0.169 against the split scan's 0.380 (mamba_ssm
// 0.233); dstate 9 to 15, 4 lanes of up to 4 states, 16 channels, chunks of
// 32 in a ring of 3: (8, 1536, 2048, 12) 0.246 (the best, K64.D16.i2,
// 0.241) against the old pipelined default's 0.439 (mamba_ssm 0.361), (4,
// 2048, 4096, 12) 0.308, the best of the tune.
constexpr int64_t kSmallStatePipelinedMinChainsPerSm = 20;
constexpr int64_t kSmallStatePipelinedMinSeqlen = 1024;

// The pipelined kernel at 64 threads a block, `lanes` threads a channel,
// chunks of 32 in a ring of 2 (the short-sequence layouts), where legal.
std::optional<FwdConfig> ring_of_2_pipelined(const FwdProblem& p, int lanes,
                                             size_t max_shared_bytes) {
  FwdConfig c = default_config(p, ScanAlgo::kPipelined, AccType::kF32, max_shared_bytes);
  c.n_split = lanes;
  c.threads = 64;
  c.d_step = c.threads / lanes;
  c.chunk = 32;
  c.items = 2;
  if (!check_config(p, c, max_shared_bytes).is_ok()) return std::nullopt;
  return c;
}

// Short sequences over many channels, dstate 4 to 16: the pipelined kernel,
// 4 threads a channel in blocks of 16, chunks of 32 in a ring of 2, from 64
// steps to 256 (512 at dstate 5 to 8) and from 30 channels per SM (64 at
// dstate 4, where the warp scan's short lanes hold out longer). H100 with
// the flags, ms, this layout against the default before: fp16 (16, 384,
// 128, 16) 0.0167 / 0.0433 (warp scan, chunks of 256), fp32 (4, 2048, 256,
// 16) 0.0293 / 0.0618, bf16 (8, 1024, 256, 16) 0.0294 / 0.0537, fp32 (4,
// 1024, 512, 8) 0.0306 / 0.0447, bf16 (8, 2048, 64, 4) 0.0137 / 0.0227
// (warp scan, chunks of 128), (16, 1536, 256, 4) 0.0461 / 0.0521. Not at
// 23 channels per SM ((4, 768, 256, 8) 0.0188 against the warp scan's short
// lanes' 0.0170) or 31 at dstate 4 ((4, 1024, 128, 4) 0.0125 / 0.0100);
// past 256 steps at dstate 16 the pipelined kernel's own default is faster
// ((8, 1536, 512, 16) 0.0620 against this layout's 0.0696).
constexpr int64_t kShortPipelinedMinSeqlen = 64;
constexpr int64_t kShortPipelinedMaxSeqlen = 256;
constexpr int64_t kShortPipelinedMaxSeqlenMidStates = 512;  // dstate 5 to 8
constexpr int64_t kShortPipelinedMinChainsPerSm = 30;
constexpr int64_t kShortPipelinedMinChainsPerSmDstate4 = 64;

std::optional<FwdConfig> short_pipelined(const FwdProblem& p, int64_t sms,
                                         size_t max_shared_bytes) {
  const int64_t max_seqlen =
      p.dstate > 4 && p.dstate <= 8 ? kShortPipelinedMaxSeqlenMidStates : kShortPipelinedMaxSeqlen;
  const int64_t min_per_sm =
      p.dstate == 4 ? kShortPipelinedMinChainsPerSmDstate4 : kShortPipelinedMinChainsPerSm;
  if (p.dstate < 4 || p.dstate > 16 || p.seqlen < kShortPipelinedMinSeqlen ||
      p.seqlen > max_seqlen || p.batch * p.dim < min_per_sm * sms)
    return std::nullopt;
  return ring_of_2_pipelined(p, 4, max_shared_bytes);
}

// The warp scan's short lanes: blocks of 4 channels, 4 steps a lane (chunks
// of 128), 2 at 64 steps or fewer from dstate 4. At sequences of 512 or fewer from 16
// channels per SM a chunk of 256 leaves lanes idle. H100 with the flags, ms,
// 4 steps a lane in blocks of 4 against 8 in blocks of 8: bf16 (4, 1024,
// 128, 4) 0.0100 / 0.0161, (4, 768, 256, 8) 0.0170 / 0.0206, fp32 (4, 1024,
// 512, 8) 0.0384 / 0.0447, and at 64 steps bf16 (1, 4096, 64, 2) 0.0086 /
// 0.0138, (8, 512, 64, 1) 0.0082 / 0.0097; 2 steps against 4 at 64 steps:
// (8, 2048, 64, 4) 0.0195 / 0.0225, (16, 768, 64, 16) 0.0303 / 0.0389 (2
// steps were not timed below dstate 4, and spill 4 bytes at dstate 2 with
// half-precision rows). Not at 8 channels per SM ((2, 512, 256, 16) 0.0203
// / 0.0155).
constexpr int64_t kShortLanesMaxSeqlen = 512;
constexpr int64_t kShortLanesShortSeqMinChainsPerSm = 16;

FwdConfig short_lanes_warpscan(const FwdProblem& p, size_t max_shared_bytes) {
  FwdConfig c = default_config(p, ScanAlgo::kWarpScan, AccType::kF32, max_shared_bytes);
  c.d_step = 4;
  c.threads = 128;
  c.items = p.seqlen <= 64 && p.dstate >= 4 ? 2 : 4;
  c.chunk = 32 * c.items;
  return c;
}

bool short_lanes_pay(const FwdProblem& p, int64_t sms) {
  return p.seqlen <= kShortLanesMaxSeqlen &&
         p.batch * p.dim >= kShortLanesShortSeqMinChainsPerSm * sms;
}

// Where the sequential scan's threads fill the GPU, at dstate 8 to 16 and
// 96 to 384 steps (512 at dstate 8): the pipelined kernel at 2 threads a
// channel in blocks of 32, chunks of 32 in a ring of 2. H100 with the
// flags, ms (`ssmtune bench`, bench/NOTES.md version 30), the default before
// against this layout: bf16 (32, 1536, 256, 16) 0.126 / 0.108, (16, 1536,
// 384, 16) 0.105 / 0.085, (64, 1536, 128, 16) 0.122 / 0.112, (8, 1536, 96,
// 16) 0.0223 / 0.0197, (4, 4096, 128, 16) 0.0288 / 0.0258, (8, 2048, 256,
// 16) 0.0506 / 0.0428, (32, 1536, 256, 8) 0.128 / 0.087; fp16 (16, 2048,
// 192, 16) 0.0682 / 0.0587; fp32 (8, 1536, 256, 16) 0.0513 / 0.0402, (16,
// 1536, 512, 8) 0.136 / 0.107 (the pipelined kernel's own default there).
// Not at 64 steps ((16, 768, 64, 16) 0.0150 / 0.0158) nor at 512 steps of
// dstate 16 ((8, 1536, 512, 16) 0.0621 / 0.0665).
constexpr int64_t kFullPipelinedMinSeqlen = 96;
constexpr int64_t kFullPipelinedMaxSeqlen = 384;
constexpr int64_t kFullPipelinedMaxSeqlenDstate8 = 512;

std::optional<FwdConfig> full_short_pipelined(const FwdProblem& p, size_t max_shared_bytes) {
  const int64_t max_seqlen =
      p.dstate <= 8 ? kFullPipelinedMaxSeqlenDstate8 : kFullPipelinedMaxSeqlen;
  if (p.dstate < 8 || p.dstate > 16 || p.seqlen < kFullPipelinedMinSeqlen || p.seqlen > max_seqlen)
    return std::nullopt;
  return ring_of_2_pipelined(p, 2, max_shared_bytes);
}

std::optional<FwdConfig> small_state_pipelined(const FwdProblem& p, int64_t sms,
                                               size_t max_shared_bytes) {
  if (p.dstate < 4 || p.dstate > 15 || p.seqlen < kSmallStatePipelinedMinSeqlen ||
      p.seqlen > kPipelinedMaxSeqlenFewChains ||
      p.batch * p.dim < kSmallStatePipelinedMinChainsPerSm * sms)
    return std::nullopt;
  // At dstate 5 to 7 the kernel's own default is the layout wanted (2 lanes,
  // 32 channels, a ring of 2); elsewhere 4 lanes in blocks of 16 channels.
  FwdConfig c = default_config(p, ScanAlgo::kPipelined, AccType::kF32, max_shared_bytes);
  if (p.dstate == 4 || p.dstate >= 8) {
    const bool ring_of_2 = p.dstate == 4 || p.dstate == 8;
    c.n_split = 4;
    c.d_step = 16;
    c.threads = 64;
    c.chunk = ring_of_2 ? 64 : 32;
    c.items = ring_of_2 ? 2 : 3;
  }
  if (!check_config(p, c, max_shared_bytes).is_ok()) return std::nullopt;
  return c;
}

// Few channels of 17 to 64 states, where a thread a (channel, lane) does
// not fill the GPU (below the first rule of heuristic_default), from
// kFewChannels channels and 256 to 4096 steps: the pipelined kernel, with
// more lanes a channel the fewer channels there are. Up to 16 channels per
// SM, 8 lanes a channel and chunks of 64, in blocks of 16 channels and a
// ring of 3 (half-precision rows) or 8 channels and a ring of 2 (fp32, whose
// rows fill shared memory sooner); up to 24, 8 lanes in blocks of 32 (half)
// or 4 lanes in blocks of 16 (fp32), chunks of 64 in a ring of 2; from
// there the kernel's own default (4 lanes, 32 channels, chunks of 32 in a
// ring of 3). H100 with the flags, ms (`ssmtune bench`, bench/NOTES.md
// version 36), the default before (the warp scan or the split scan) against
// this rule's layout: bf16 (2, 512, 512, 24) 0.0330 / 0.0305, (5, 256, 512,
// 48) 0.0647 / 0.0387, (3, 1024, 256, 32) 0.0411 / 0.0265, (2, 1536, 1000,
// 40) 0.185 / 0.0874, (6, 512, 1024, 64) 0.177 / 0.115, (1, 2048, 4096,
// 64) 0.460 / 0.339, (4, 1536, 1000, 20) 0.173 / 0.0937, (2, 2048, 2048,
// 32) 0.238 / 0.157; fp16 (4, 512, 2048, 24) 0.112 / 0.0991, (4, 384, 512,
// 32) 0.0483 / 0.0333, (4, 768, 2048, 48) 0.266 / 0.179, (16, 256, 256,
// 48) 0.0974 / 0.0330; fp32 (8, 256, 1024, 32) 0.0775 / 0.0626, (2, 1024,
// 512, 64) 0.133 / 0.0839, (9, 256, 1000, 20) 0.117 / 0.0647, (6, 1024,
// 512, 24) 0.122 / 0.0630. Held out, same run, A/B of the two binaries:
// bf16 (3, 512, 768, 28) 0.0584 / 0.0546, (4, 640, 384, 40) 0.0679 /
// 0.0389, (5, 768, 2048, 20) 0.179 / 0.143, (2, 896, 3000, 48) 0.256 /
// 0.187; fp16 (2, 1280, 2048, 36) 0.173 / 0.173, (1, 3072, 1024, 24) 0.0828
// / 0.0739, (12, 256, 512, 64) 0.231 / 0.0630; fp32 (7, 256, 1536, 56)
// 0.217 / 0.205, (6, 448, 700, 33) 0.140 / 0.127. The other layouts timed
// lose up to 1.6x at some shape: (1, 2048, 4096, 64) bf16 8 lanes in blocks
// of 8 0.544, the kernel's own default 0.462; (4, 768, 2048, 48) fp16 8
// lanes in blocks of 16 0.252; (9, 256, 1000, 20) fp32 8 lanes in blocks of
// 16 0.118.
constexpr int kLargeStateMinDstate = 17;
constexpr int kLargeStateMaxDstate = 64;
constexpr int64_t kLargeStateMinSeqlen = 256;
constexpr int64_t kLargeStateMaxSeqlen = 4096;
constexpr int64_t kLargeStateEightLanesMaxChainsPerSm = 16;
constexpr int64_t kLargeStateWideMaxChainsPerSm = 24;

// `own`: the pipelined kernel's own default for `p`.
std::optional<FwdConfig> few_chains_large_state_pipelined(const FwdProblem& p, const FwdConfig& own,
                                                          int64_t sms, size_t max_shared_bytes) {
  const int64_t chains = p.batch * p.dim;
  if (p.dstate < kLargeStateMinDstate || p.dstate > kLargeStateMaxDstate || chains < kFewChannels ||
      p.seqlen < kLargeStateMinSeqlen || p.seqlen > kLargeStateMaxSeqlen)
    return std::nullopt;
  const bool half = dtype_bytes(p.dtype) == 2;
  FwdConfig c = own;
  if (chains <= kLargeStateEightLanesMaxChainsPerSm * sms) {
    c.n_split = 8;
    c.d_step = half ? 16 : 8;
    c.chunk = 64;
    c.items = half ? 3 : 2;
  } else if (chains <= kLargeStateWideMaxChainsPerSm * sms) {
    c.n_split = half ? 8 : 4;
    c.d_step = half ? 32 : 16;
    c.chunk = 64;
    c.items = 2;
  }
  c.threads = c.n_split * c.d_step;
  // Only the layouts timed: none where shared memory shrinks the chunk.
  if (c.chunk < 32 || !check_config(p, c, max_shared_bytes).is_ok()) return std::nullopt;
  return c;
}

// One to three states over 8 to 64 channels per SM, 1000 to 8192 steps:
// the block scan at one warp a channel, 8 steps a lane (chunks of 256); two
// warps (chunks of 512) up to 1024 steps and from 32 channels per SM. The
// warp scan's channels in blocks of 4 or 8 wait on each other's chunk. H100
// with the flags, ms (`ssmtune bench`, bench/NOTES.md version 36), the
// default before (the warp scan) against this rule's layout: bf16 (3, 768,
// 2048, 2) 0.0639 / 0.0360, (2, 1024, 4096, 2) 0.0687 / 0.0584, (8, 512,
// 8192, 2) 0.252 / 0.207, (1, 4096, 2048, 3) 0.0788 / 0.0695, (2, 768,
// 1024, 1) 0.0201 / 0.0139, (12, 512, 1024, 2) 0.0526 / 0.0454, (16, 512,
// 2048, 1) 0.0976 / 0.0798; fp16 (8, 256, 4096, 1) 0.0648 / 0.0501, (4,
// 1024, 2048, 2) 0.0702 / 0.0593; fp32 (4, 512, 1024, 1) 0.0321 / 0.0254.
// Held out, each pair from one run: bf16 (5, 384, 1500, 2) 0.0324 /
// 0.0293, (1, 1536, 8000, 1) 0.113 / 0.0861, (7, 640, 2048, 2) 0.0639 /
// 0.0628; fp16 (3, 1536, 3000, 1) 0.0849 / 0.0779 (one warp a channel:
// 0.0947), (10, 512, 1200, 2) 0.0643 / 0.0458 (one warp; two, this rule's
// layout there, not timed); fp32 (6, 256, 1000, 2) 0.0303 / 0.0241, (5,
// 1024, 2048, 2) 0.137 / 0.0944, (2, 2560, 1024, 3) 0.0773 / 0.0624. Lost:
// (6, 768, 1024, 2) bf16 0.0359 / 0.0369. Below 1000 steps it ties or
// loses (two warps: (2, 1536, 512, 2) fp32 0.0240 / 0.0233, (5, 512, 640, 3)
// fp16 0.0305 / 0.0305, (4, 1024, 768, 1) bf16 0.0229 / 0.0254), and at
// dstate 4 it loses ((10, 384, 2048, 4) fp16: the pipelined default 0.0722,
// one warp 0.0795; (2, 2048, 512, 4) fp32 0.0298 / 0.0315).
constexpr int kTinyStateMaxDstate = 3;
constexpr int64_t kTinyStateMinChainsPerSm = 8;
constexpr int64_t kTinyStateMaxChainsPerSm = 64;
constexpr int64_t kTinyStateMinSeqlen = 1000;
constexpr int64_t kTinyStateMaxSeqlen = 8192;
constexpr int64_t kTinyStateTwoWarpsMaxSeqlen = 1024;

std::optional<FwdConfig> tiny_state_blockscan(const FwdProblem& p, int64_t sms,
                                              size_t max_shared_bytes) {
  const int64_t chains = p.batch * p.dim;
  if (p.dstate > kTinyStateMaxDstate || chains <= kTinyStateMinChainsPerSm * sms ||
      chains > kTinyStateMaxChainsPerSm * sms || p.seqlen < kTinyStateMinSeqlen ||
      p.seqlen > kTinyStateMaxSeqlen)
    return std::nullopt;
  FwdConfig c = default_config(p, ScanAlgo::kBlockScan, AccType::kF32, max_shared_bytes);
  c.items = 8;
  const bool crowded = chains >= kShortLanesMinChainsPerSm * sms;
  c.threads = crowded || p.seqlen <= kTinyStateTwoWarpsMaxSeqlen ? 64 : 32;
  c.chunk = c.threads * c.items;
  if (!check_config(p, c, max_shared_bytes).is_ok()) return std::nullopt;
  return c;
}

}  // namespace

FwdConfig default_config(const FwdProblem& p, ScanAlgo algo, AccType acc, size_t max_shared_bytes) {
  FwdConfig c;
  c.algo = algo;
  c.acc = acc;
  // fp64 has no fast exp; fp32 uses the MUFU ex2 (2 ulp, far inside the budget).
  c.exp_mode = acc == AccType::kF64 ? ExpMode::kAccurate : ExpMode::kFast;
  // Each algorithm's layout, and why, is in its descriptor (tuner/fwd/algos/).
  if (const FwdAlgorithm* a = find_fwd_algorithm(algo)) a->set_default(p, max_shared_bytes, c);
  return c;
}

FwdDefaultChoice heuristic_default(const FwdProblem& p, int sm_count, size_t max_shared_bytes) {
  const int64_t chains = p.batch * p.dim;
  FwdConfig c = default_config(p, ScanAlgo::kSequential, AccType::kF32, max_shared_bytes);
  // The pipelined kernel wants a sequence long enough for its ring to fill
  // (16 chunks or more).
  const FwdConfig pipe = default_config(p, ScanAlgo::kPipelined, AccType::kF32, max_shared_bytes);
  const bool ring_fills = p.seqlen >= int64_t{16} * pipe.chunk;
  // With at least 16 warps per SM of (channel, split) threads, the
  // sequential scan has no combine overhead and enough parallelism
  // ((8, 1536, 2048, 16): 23 warps per SM on the H200; (1, 2048, 65536, 16)
  // would have 3.9).
  if (chains * c.n_split >= int64_t{sm_count} * 512) {
    if (const auto short_seq = full_short_pipelined(p, max_shared_bytes))
      return {*short_seq, "pipelined: batch x dim = " + std::to_string(chains) +
                              " channels fill the GPU; " + std::to_string(p.seqlen) +
                              " steps at dstate " + std::to_string(p.dstate) +
                              ": 2 threads a channel, chunks of 32 in a ring of 2"};
    // dstate 4: 4 threads a channel (a state each) in blocks of 16, chunks
    // of 32 in a ring of 2, not the kernel's own layout (a thread a channel
    // in blocks of 64, a ring of 3: a quarter of the threads). With the
    // flags, ms, the kernel's own layout against this one: H100, bf16 (15,
    // 2560, 512, 4) 0.267 / 0.118 (the best of a tune; mamba_ssm 0.139);
    // held out on the H200 (bench/NOTES.md, version 39), fp16 (32, 2048,
    // 1024, 4) 0.840 / 0.356, (12, 3072, 8192, 4) 4.122 / 1.642; fp32 (16,
    // 4096, 2048, 4) 2.118 / 0.819, (40, 1024, 768, 4) 0.504 / 0.193; bf16
    // (24, 2048, 512, 4) 0.320 / 0.144, (8, 8192, 4096, 4) 3.279 / 1.420.
    if (p.dstate == 4 && ring_fills)
      if (const auto four = ring_of_2_pipelined(p, 4, max_shared_bytes))
        return {*four, "pipelined: batch x dim = " + std::to_string(chains) +
                           " channels fill the GPU; dstate 4: 4 threads a channel, chunks of "
                           "32 in a ring of 2"};
    // Long enough for the ring to fill (16 chunks or more): the pipelined
    // kernel, whose compute warps never wait on memory. On the H200 at
    // dstate 16, side by side, its default took 0.212 ms to the sequential
    // default's 0.227 at (8, 1536, 2048) bf16 and 1.40 ms to 1.45 at
    // (4, 5120, 8192) bf16 (0.200 to 0.198 at the fp32 mid shape); later
    // changes (bench/NOTES.md, versions 4c and 5) took it to 0.172 and
    // 1.12 ms. At seqlen 64 the sequential kernel was faster.
    if (ring_fills)
      return {pipe, "pipelined: batch x dim = " + std::to_string(chains) +
                        " channels fill the GPU and " + std::to_string(p.seqlen) +
                        " steps fill the ring of " + std::to_string(pipe.items) + " stages"};
    // Reads in flight cost registers, hence resident blocks: worth it only
    // while the grid leaves room on each SM (on the H200 at dstate 16: 1.2x
    // faster at 2.9 blocks per SM, 1.08x slower at 4.8).
    const int64_t blocks = p.batch * p.groups * ((p.dim_per_group() + c.d_step - 1) / c.d_step);
    const bool crowded = blocks >= int64_t{sm_count} * 4;
    if (crowded) c.items = 1;
    return {c, "sequential: batch x dim = " + std::to_string(chains) +
                   " channels fill the GPU without splitting the sequence; " +
                   std::to_string(blocks) + " blocks, " +
                   (crowded ? "no reads in flight (registers for resident blocks)"
                            : "the next chunk's reads in flight")};
  }
  const int64_t sms = sm_count > 0 ? sm_count : 128;
  if (const auto large = few_chains_large_state_pipelined(p, pipe, sms, max_shared_bytes))
    return {*large,
            "pipelined: " + std::to_string(chains) + " channels of " + std::to_string(p.dstate) +
                " states, short of a thread each filling the GPU; " +
                std::to_string(large->n_split) + " threads a channel in blocks of " +
                std::to_string(large->d_step) + ", chunks of " + std::to_string(large->chunk) +
                " in a ring of " + std::to_string(large->items)};
  // Very few chains: several warps each, the sequence in a few long chunks.
  if (chains <= kWideScanMaxChains && p.seqlen <= kWideScanMaxSeqlen)
    if (const auto wide = wide_warpscan(p, sm_count, max_shared_bytes))
      return {*wide,
              "warpscan: only " + std::to_string(chains) + " channels; " +
                  std::to_string(wide->threads / 32) + (wide->threads == 32 ? " warp" : " warps") +
                  " each, the sequence in chunks of " + std::to_string(wide->chunk) + " steps" +
                  (wide->n_split > 1 ? ", a channel's states over " +
                                           std::to_string(wide->n_split) + " blocks (state groups)"
                                     : std::string())};
  // A few hundred channels, short of filling the SMs with one warp each:
  // the block scan, several warps a channel.
  if (const auto block = mid_blockscan(p, sms, max_shared_bytes))
    return {*block, "blockscan: " + std::to_string(chains) + " channels; " +
                        std::to_string(block->threads / 32) +
                        " warps each, the sequence in chunks of " + std::to_string(block->chunk) +
                        " steps"};
  if (const auto tiny = tiny_state_blockscan(p, sms, max_shared_bytes))
    return {*tiny,
            "blockscan: " + std::to_string(p.dstate) + (p.dstate == 1 ? " state" : " states") +
                " a channel over " + std::to_string(chains) + " channels; " +
                std::to_string(tiny->threads / 32) + (tiny->threads == 32 ? " warp" : " warps") +
                " a channel, the sequence in chunks of " + std::to_string(tiny->chunk) + " steps"};
  // A few more channels, up to 2048 steps at dstate 9 to 16: 8 warps a
  // channel over state groups.
  if (chains > kWideScanMaxChains && chains <= kMidScanMaxChains && p.dstate > 8 &&
      p.dstate <= 16 && p.seqlen <= kMidScanMaxSeqlen) {
    const StateGroups sg =
        default_state_groups(chains, p.dstate, p.seqlen, kStateGroupMinWarps, sm_count);
    const FwdConfig g = channel_warpscan(p, sg.warps, sg.groups, max_shared_bytes);
    if (sg.groups > 1 && check_config(p, g, max_shared_bytes).is_ok())
      return {g, "warpscan: " + std::to_string(chains) + " channels; " + std::to_string(sg.warps) +
                     " warps each, chunks of " + std::to_string(g.chunk) +
                     " steps, a channel's states over " + std::to_string(sg.groups) +
                     " blocks (state groups fill one wave)"};
  }
  // Few states and channels enough for 8 warps on every SM: the warp scan;
  // the split scan's extra pass costs more than its fuller grid gains when
  // a step's state update is this cheap. H200 with the flags: (8, 1024,
  // 2048, 4) bf16 warpscan 0.182 ms (4 steps a lane 0.150), split 0.233,
  // pipelined 0.198 (mamba_ssm 0.128); (4, 1536, 4096, 4) bf16 warpscan
  // 0.263 (4 steps a lane 0.269), split 0.331, pipelined 0.415.
  //
  // From 32 channels per SM, 4 steps a lane in blocks of 4 channels: 56
  // registers to 106 (four blocks an SM resident, not two), which the
  // chains' latency wants more than the fewer shuffles a step of 8. H100
  // with the flags (bench/NOTES.md, version 21), 4 steps in blocks of 4
  // against the default of 8 in blocks of 8: bf16 (8, 1024, 2048, 4) 0.140
  // / 0.161 ms, (16, 768, 1024, 4) 0.103 / 0.125, (4, 1536, 4096, 4) 0.227
  // / 0.233, fp32 (8, 1024, 2048, 4) 0.193 / 0.214; at 16 channels per SM,
  // (8, 256, 1024, 4) fp32, 0.040 / 0.036.
  if (const auto short_seq = short_pipelined(p, sms, max_shared_bytes))
    return {*short_seq, "pipelined: " + std::to_string(p.seqlen) + " steps over " +
                            std::to_string(chains) + " channels, dstate " +
                            std::to_string(p.dstate) +
                            "; 4 threads a channel, chunks of 32 in a ring of 2"};
  if (const auto small = small_state_pipelined(p, sms, max_shared_bytes))
    return {*small, "pipelined: " + std::to_string(p.dstate) + " states a channel over " +
                        std::to_string(chains) + " channels (" +
                        std::to_string(kSmallStatePipelinedMinChainsPerSm) + " or more per SM); " +
                        std::to_string(small->n_split) + " threads a channel, chunks of " +
                        std::to_string(small->chunk) + " in a ring of " +
                        std::to_string(small->items)};
  if (p.dstate <= 4 && chains >= 8 * sms) {
    FwdConfig ws = default_config(p, ScanAlgo::kWarpScan, AccType::kF32, max_shared_bytes);
    const FwdConfig short_lanes = short_lanes_warpscan(p, max_shared_bytes);
    const bool crowded = chains >= kShortLanesMinChainsPerSm * sms;
    const bool short_seq = short_lanes_pay(p, sms);
    const bool use_short =
        (crowded || short_seq) && check_config(p, short_lanes, max_shared_bytes).is_ok();
    if (use_short) ws = short_lanes;
    if (check_config(p, ws, max_shared_bytes).is_ok())
      return {ws, "warpscan: " + std::to_string(p.dstate) + " states a channel over " +
                      std::to_string(chains) + " channels, a warp each" +
                      (use_short ? ", " + std::to_string(ws.items) + " steps a lane (" +
                                       (crowded ? "32 channels per SM or more: registers for "
                                                  "resident blocks)"
                                                : "a sequence of 512 steps or fewer)")
                                 : std::string())};
  }
  // At dstate 9 to 16, from 24 channels per SM (three quarters of a
  // pipelined block of 32 channels each), on sequences its ring fills of at
  // most 4096 steps: the pipelined kernel beats the split scan's two passes
  // and the warp scan's shuffles. H200 with the flags, bf16: (8, 1024, 2048,
  // 16) pipelined 0.166 ms, split 0.266; (8, 512, 512, 16) 0.038 against
  // warpscan 0.046 (4 steps a lane) and 0.057; (1, 4096, 4096, 16) fp16
  // 0.265 against split 0.271 (bench/NOTES.md, version 7). With fewer
  // channels the others win ((4, 512, 1024, 16): split 0.053, pipelined
  // 0.068; (2, 768, 512, 16): warpscan 0.029, pipelined 0.037), and so they
  // do on longer sequences ((1, 5120, 16384, 16): split 1.21, pipelined
  // 1.31, version 7). Not measured at other dstates.
  if (p.dstate > 8 && p.dstate <= 16 && chains >= 24 * sms &&
      p.seqlen <= kPipelinedMaxSeqlenFewChains && ring_fills &&
      check_config(p, pipe, max_shared_bytes).is_ok())
    return {pipe, "pipelined: batch x dim = " + std::to_string(chains) +
                      " channels (24 or more per SM) and " + std::to_string(p.seqlen) +
                      " steps fill its ring"};
  // Few chains and a long sequence: the pipelined kernel over segments of
  // the sequence, about 1024 blocks (two waves on the H200), at twice the
  // exps.
  const FwdConfig split = default_config(p, ScanAlgo::kSplit, AccType::kF32, max_shared_bytes);
  const bool long_enough =
      p.seqlen >= kSplitMinSeqlen || (p.seqlen >= kSplitMinSeqlen / 2 && p.dstate >= 16);
  if (long_enough && split.segments >= 2 && check_config(p, split, max_shared_bytes))
    return {split, "split: only " + std::to_string(chains) + " channels; the sequence in " +
                       std::to_string(split.segments) +
                       " segments across blocks (segment states, their scan, then outputs)"};
  // Few chains, shorter sequences: time-parallel inside a warp, one exp per
  // element. (The look-back splits the sequence across blocks but computes
  // each exp twice; at (1, 2048, 65536, 16) bf16 on the H200 it took 3.08 ms
  // to warpscan's 2.47.)
  const FwdConfig short_lanes = short_lanes_warpscan(p, max_shared_bytes);
  if (short_lanes_pay(p, sms) && check_config(p, short_lanes, max_shared_bytes).is_ok())
    return {short_lanes, "warpscan: " + std::to_string(chains) + " channels over " +
                             std::to_string(p.seqlen) + " steps; time-parallel inside a warp, " +
                             std::to_string(short_lanes.items) + " steps a lane"};
  return {default_config(p, ScanAlgo::kWarpScan, AccType::kF32, max_shared_bytes),
          "warpscan: only " + std::to_string(chains) +
              " channels; time-parallel inside a warp, each channel's chunk on 32 lanes"};
}

}  // namespace ssmtune
