// The backward's built-in default: a sequential layout sized to the problem
// (states a thread, channels a block, chunk), then rules measured on the
// GPU that move it to multipass, the warp scan or another block, each
// leaving its reason for `ssmtune explain`.
#include <algorithm>
#include <array>
#include <iomanip>
#include <sstream>
#include <string>

#include "ssm/bwd/bwd_params.cuh"
#include "tuner/bwd/config.h"
#include "tuner/state_groups.h"

namespace ssmtune::bwd {
namespace {

// What every rule reads: the problem, the device, and the channels.
struct Context {
  const BwdProblem& p;
  const FwdProblem& f;
  size_t max_shared_bytes;  // the chunked layout's fit (0: unchecked)
  // The warp scan's B/C rows must fit the device's shared memory (227 KiB
  // where it is not given).
  size_t limit;
  int sm_count;      // 0: unknown
  int64_t sms;       // sm_count, or 128 where unknown
  int64_t channels;  // batch x dim
  // Channels enough for a warp each to give every SM 8 warps (the warp
  // scans' threshold where the chunked kernels' grid is small or slow).
  int64_t warp_fill_channels;
};

// The largest power of 2 at most `want` and at most the group's channels.
int channels_a_block(const FwdProblem& f, int want) {
  while (want > 1 && want > f.dim_per_group()) want /= 2;
  return want;
}

// Up to 128 threads: a tile's variable dB/dC partials are written per
// tile, so wider tiles cut that traffic (dim / d_step partial rows per
// B/C row); no wider than the group needs.
int tile_channels(const FwdProblem& f, int lanes) {
  int d = 32 / lanes;
  while (d * lanes < 128 && d < 64 && d < f.dim_per_group()) d *= 2;
  return d;
}

// Blocks of d_step channels over the batch and the groups.
int64_t grid_blocks(const FwdProblem& f, int d_step) {
  return f.batch * f.groups * ((f.dim_per_group() + d_step - 1) / d_step);
}

// The chunked layouts' fp32 history a block (chunk x states a thread x
// threads x 4 bytes), at most.
constexpr int64_t kHistoryBytes = int64_t{32} * 1024;

// The sequential layout at `lanes` threads a channel: tile_channels
// channels a block; chunk 16, halved while the chunk's fp32 history (chunk *
// states per thread * threads) passes 32 KiB: 4 blocks of 128 threads per SM
// at dstate 16, 2 beyond (fp64 takes the same chunk, within the device's
// limit).
BwdConfig lanes_a_channel(const Context& x, BwdAcc acc, int lanes) {
  BwdConfig c;
  c.acc = acc;
  c.exp = acc == BwdAcc::kF64 ? BwdExp::kAccurate : BwdExp::kFast;
  c.n_split = lanes;
  c.d_step = tile_channels(x.f, lanes);
  c.threads = c.d_step * lanes;
  c.chunk = 16;
  const int64_t per = (x.f.dstate + lanes - 1) / lanes;
  while (c.chunk > 4 && c.chunk * per * c.threads * 4 > kHistoryBytes) c.chunk /= 2;
  while (c.chunk > 4 && x.max_shared_bytes != 0 && shared_bytes(x.p, c) > x.max_shared_bytes)
    c.chunk /= 2;
  return c;
}

// The guard of the band rules below: c runs `algo` with fp32 sums over
// `lanes` lanes a channel, at a dstate from lo to hi.
bool in_band(const Context& x, const BwdConfig& c, BwdAlgo algo, int lo, int hi, int lanes) {
  return c.algo == algo && c.acc == BwdAcc::kF32 && x.f.dstate >= lo && x.f.dstate <= hi &&
         c.n_split == lanes;
}

// "n_split L (S states per thread), d_step D": the start of a reason.
std::string lanes_reason(const FwdProblem& f, const BwdConfig& c) {
  return "n_split " + std::to_string(c.n_split) + " (" +
         std::to_string((f.dstate + c.n_split - 1) / c.n_split) + " states per thread), d_step " +
         std::to_string(c.d_step);
}

// The sequential layout: lanes a channel, channels a block, chunk.
BwdDefault chunked_layout(const Context& x, BwdAcc acc) {
  const FwdProblem& f = x.f;
  // About 4 states per thread up to dstate 16, 8 beyond (registers: h, r,
  // dA and A twice per state). Fewer lanes per channel means fewer lane
  // reductions of the per-step sums over states; on the H200 at
  // (8,1536,2048,64) bf16 with the block's flags, 8 states per thread at
  // chunk 8 ran 6.04 ms against 7.73 for 4 at chunk 16 (exhaustive tune);
  // at dstate 32, 4 states over 8 lanes (below) mostly win.
  const int per_thread = f.dstate > 16 ? 8 : 4;
  int s = 1;
  while (s * 2 <= 32 && int64_t{s} * 2 * per_thread <= f.dstate) s *= 2;
  // Past dstate 32 at no power of 2 this leaves 9 to 16 states a thread. One lane more (H100,
  // the block's flags, saved states, ms) won at (8,1536,2048,48) bf16 6.998 -> 4.408 and
  // (8,1024,1024,40) fp16 1.657 -> 1.195 but lost at (4,2048,1024,56) fp32 1.623 -> 2.002,
  // (4,1024,2048,100) bf16 4.537 -> 5.690 and (2,1024,1024,200) bf16 3.044 -> 3.685: at dstate
  // 40 to 48 only, a rule below (eight_lanes_at_dstate40_to_48).
  // Fewer than 256 blocks of 1 or 2 lanes a channel (dstate 5 to 16): 4 lanes,
  // twice the blocks and warps, before multipass or the warp scan. H100,
  // bf16 with the block's flags and saved states, ms, 4 lanes against the
  // rule before: (8,1536,2048,8) seq.K32.D32.t128.s4.b3 0.617 against the
  // warp scan ws.K256.D16 0.818 (fp32 plain 0.457 / 0.853); (8,1536,2048,12)
  // 0.805 / 1.141; (8,1024,2048,8) 0.524 / 0.550; (2,256,2048,8) multipass
  // 0.068 / 0.089. From 256 blocks the 2 lanes stay ((16,1536,2048,8):
  // seq.K16.D64.t128.s2.b3 1.176 against 4 lanes 1.204).
  if (s < 4 && f.dstate > 4 && f.dstate <= 16 && grid_blocks(f, tile_channels(f, s)) < 256) s = 4;
  const BwdConfig c = lanes_a_channel(x, acc, s);
  std::string reason = lanes_reason(f, c) + " (" + std::to_string(c.threads) +
                       " threads: fewer per-tile dB/dC partials), chunk " +
                       std::to_string(c.chunk) + " (history in shared memory)";
  return {c, reason};
}

// Multipass segments for c's blocks: up to about 2048 blocks in all, at
// least 2 chunks each (0 or 1: too few chunks to split).
int64_t multipass_segments(const FwdProblem& f, const BwdConfig& c) {
  const int64_t blocks = grid_blocks(f, c.d_step);
  const int64_t n_chunks = (f.seqlen + c.chunk - 1) / c.chunk;
  return std::min<int64_t>({n_chunks / 2, (2048 + blocks - 1) / blocks, 65535});
}

// Few blocks, 8 chunks or more: segments across blocks (multipass), up to
// about 2048 blocks of at least 2 chunks each. On the H200, exhaustive
// tunes: (8, 256, 1024, 4) fp32 0.123 ms at 32 segments (8: 0.157; with the block's flags
// 0.163 against 0.236), (2, 64, 4096, 16) fp32 0.106 at 32 or 128 (8: 0.325).
void multipass_for_few_blocks(const Context& x, BwdDefault& d) {
  BwdConfig& c = d.config;
  const int64_t blocks = grid_blocks(x.f, c.d_step);
  const int64_t n_chunks = (x.f.seqlen + c.chunk - 1) / c.chunk;
  if (blocks < 256 && n_chunks >= 8) {
    const int64_t segments = multipass_segments(x.f, c);
    if (segments >= 2) {
      c.algo = BwdAlgo::kMultiPass;
      c.segments = static_cast<int>(segments);
      d.reason += "; multipass over " + std::to_string(segments) + " segments (" +
                  std::to_string(blocks) + " blocks alone would leave the GPU idle)";
    }
  }
}

// Multipass at dstate 17 to 31 over 2 lanes (9 to 16 states a thread): 4
// lanes of 5 to 8, 32 channels a block. The chunk kernel of 2 lanes holds 253
// to 255 registers there and spills 60 to 808 bytes at dstate 17, 25 and 27
// to 31 (ptxas sm_90, bf16 with the flags and the last state); 4 lanes take
// 154 to 220 and spill nothing. Held out on an H100 (saved states, the
// block's flags, ms, 2 lanes / 4): (2,128,2048,31) bf16 0.208 / 0.124,
// (4,256,1024,25) fp16 0.253 / 0.201, (1,512,4096,28) fp32 0.411 / 0.263,
// (8,96,2048,30) bf16 0.422 / 0.306, (2,256,2048,22) bf16 0.257 / 0.204,
// (2,384,4096,17) fp16 0.457 / 0.370.
void multipass_four_lanes_at_dstate17_to_31(const Context& x, BwdDefault& d) {
  BwdConfig& c = d.config;
  const FwdProblem& f = x.f;
  if (!in_band(x, c, BwdAlgo::kMultiPass, 17, 31, 2)) return;
  BwdConfig four = lanes_a_channel(x, c.acc, 4);
  four.algo = BwdAlgo::kMultiPass;
  const int64_t segments = multipass_segments(f, four);
  four.segments = static_cast<int>(segments);
  if (segments < 2 || !check_config(x.p, four, x.limit).is_ok()) return;
  c = four;
  d.reason = lanes_reason(f, c) + ", chunk " + std::to_string(c.chunk) + "; multipass over " +
             std::to_string(segments) + " segments (" + std::to_string(grid_blocks(f, c.d_step)) +
             " blocks alone would leave the GPU idle; 2 lanes of up to 16 states spill)";
}

// The warp scan instead of multipass where it measured faster (H200,
// ms, `ssmtune bench`, states recomputed, warp scan against multipass):
// (8,256,1024,4) fp32 0.059 / 0.092 (with the block's flags 0.073 /
// 0.142), (8,256,1024,8) fp32 0.088 / 0.115, (4,512,2048,8) bf16 with the
// flags 0.196 / 0.267, (8,512,1024,32) bf16 with the flags 0.538 / 0.665,
// (8,256,1024,64) fp32 0.496 / 0.633. Not where the chunked block is 4
// lanes of 4 states (dstate 16), which multipass runs faster
// ((1,1536,2048,16) bf16 with the flags 0.315 / 0.238, (4,512,2048,16)
// fp32 0.326 / 0.294, (16,256,1024,16) 0.306 / 0.302); nor with too few
// channels, a warp each, to fill the GPU ((2,128,2048,16) fp32 0.227 /
// 0.054).
void warp_scan_for_many_channels(const Context& x, BwdDefault& d) {
  BwdConfig& c = d.config;
  const FwdProblem& f = x.f;
  const bool four_by_four = c.n_split == 4 && (f.dstate + 3) / 4 == 4;
  const int64_t channels = x.channels;
  if (c.algo == BwdAlgo::kMultiPass && !four_by_four && channels >= x.warp_fill_channels) {
    // 8 warps a block at dstate <= 4, 16 beyond (H200: (8,1536,2048,4) fp32
    // with the flags 0.739 ms at 8 against 0.800 at 16; (8,256,1024,64)
    // fp32 0.496 at 16 against 0.849 at 8, (8,512,1024,32) bf16 with the
    // flags 0.538 against 0.581).
    const int per_block = channels_a_block(f, f.dstate <= 4 ? 8 : 16);
    // B/C rows of the chunk in shared memory: within the device's limit.
    // Chunks of 128 (72 to 80 registers a thread at dstate 1 to 3, sm_90:
    // 3 blocks of 256 threads an SM) where the grid fits one wave at 3
    // blocks an SM but not at 2, the residency of chunks of 256 (118 to 126
    // registers); 256 elsewhere, where its 8 steps a lane pay. H100, the
    // flags, saved states, ms, 256 against 128, inside that window: (3,
    // 1024, 2048, 3) fp16 0.1578 / 0.1332, (1, 3072, 2048, 2) bf16 0.1637 /
    // 0.1388, (2, 1536, 8192, 1) bf16 0.3712 / 0.2986, (1, 2560, 3000, 3)
    // fp32 0.2644 / 0.2352, (5, 512, 1536, 3) bf16 0.1143 / 0.0963,
    // (1, 2560, 2048, 1) bf16 0.1268 / 0.1112; below it (one wave either
    // way) (2, 768, 2048, 2) bf16 0.0743 / 0.0901, (1, 1536, 4096, 2) fp32
    // 0.1613 / 0.1967; above it (two waves or more either way)
    // (1, 4096, 2048, 1) bf16 0.1606 / 0.1832, (4, 1024, 1536, 2) fp32
    // 0.1369 / 0.1686, (8, 768, 2048, 2) fp32 0.2437 / 0.2552. Held out
    // (bench/NOTES.md, version 38), this rule against the dstate-1 rule
    // before it, 11 shapes: 1.14x to 1.24x faster at each, e.g. (3, 896,
    // 8192, 2) bf16 0.4535 / 0.3642, (1, 1792, 4096, 1) bf16 0.1460 / 0.1192.
    const int64_t ws_blocks = grid_blocks(f, per_block);
    const bool short_chunks = f.dstate <= 3 && ws_blocks > 2 * x.sms && ws_blocks <= 3 * x.sms;
    const std::array<int, 2> chunks =
        short_chunks ? std::array<int, 2>{128, 256} : std::array<int, 2>{256, 128};
    for (int chunk : chunks) {
      const BwdConfig ws = warp_scan(chunk, per_block, 1, c.acc, c.exp);
      if (check_config(x.p, ws, x.limit).is_ok()) {
        c = ws;
        d.reason = "warp scan, chunk " + std::to_string(chunk) + ", " + std::to_string(ws.d_step) +
                   " channels a block (" + std::to_string(channels) +
                   " channels, a warp each, fill the GPU; dstate " + std::to_string(f.dstate) +
                   ": faster than multipass there)";
        if (short_chunks && chunk == 128)
          d.reason += "; chunks of 128: " + std::to_string(ws_blocks) +
                      " blocks fit one wave at 3 an SM, not at 2 (chunks of 256)";
        break;
      }
    }
  }
}

// dstate <= 4 from 65 channels to where a warp each fills the GPU: the
// warp scan at 512 threads a block, 8 warps a channel halved while the
// channels' warps pass one wave of 16 per SM (the 512 threads' registers),
// a chunk no longer than twice the sequence. 8 steps a lane at dstate 2
// and 4; 4 at dstate 1 and 3, where 8 spill a few registers with some
// flags (ptxas, sm_90). H100, bf16 with the flags and saved states unless
// said, ms, against multipass: (2,64,4096,4) 128 channels, 8 warps 0.052 /
// 0.084; (2,100,2048,1) bf16 plain 0.018 / 0.043 (4 steps a lane 0.024);
// (4,128,2048,4) 4 warps 0.046 / 0.081 (fp32 plain 0.044 / 0.056);
// (2,256,1024,4) 0.029 / 0.071; (1,512,4096,4) 0.093 / 0.134;
// (8,64,2048,2) fp32 0.040 / 0.076; (1,1000,2048,4) 2 warps 0.076 /
// 0.128; (8,128,1024,4) fp16 0.038 / 0.077; (4,256,512,4) fp32 0.028 /
// 0.065. Each the best of 14 warp-scan layouts there. Not at dstate 8:
// (2,256,2048,8) 0.072 / 0.068.
void warp_scan_for_few_states(const Context& x, BwdDefault& d) {
  BwdConfig& c = d.config;
  const FwdProblem& f = x.f;
  const int64_t channels = x.channels;
  if (c.algo == BwdAlgo::kMultiPass && c.acc == BwdAcc::kF32 && f.dstate <= 4 && f.seqlen > 128 &&
      channels > 64) {
    const int64_t wave = 16 * x.sms;
    const int items = f.dstate % 2 == 0 ? 8 : 4;
    int warps = 8;
    while (warps > 1 && channels * warps > wave) warps /= 2;
    while (warps > 1 && int64_t{16} * warps * items >= f.seqlen) warps /= 2;
    const BwdConfig ws =
        warp_scan(32 * warps * items, channels_a_block(f, 16 / warps), warps, c.acc, c.exp);
    if (check_config(x.p, ws, x.limit).is_ok()) {
      c = ws;
      d.reason = "warp scan, chunks of " + std::to_string(ws.chunk) + " (" + std::to_string(warps) +
                 " warps a channel, " + std::to_string(ws.d_step) + " channels a block; " +
                 std::to_string(channels) + " channels at dstate " + std::to_string(f.dstate) +
                 " fill a wave of 16 warps per SM): faster than multipass there";
    }
  }
}

// Few channels, or a short sequence: the warp scan with several warps a
// channel (chunks of 128 x warps, up to 2048) instead of multipass, one
// launch and no pass over segments. H200, `ssmtune bench`, fp32 with the
// block's flags, ms, warp scan against multipass (the best of a tune where
// given): (2,4,128,8) 0.0167 / 0.040; (2,4,1024,8) 0.0236 / 0.035 (best
// 0.038 in its tune); (2,4,1024,16) 0.0367 / 0.040; with the forward's
// saved states (the training path) (2,4,2048,8) 0.039 / 0.058,
// (2,4,4096,8) 0.071 / 0.085, (2,32,4096,8) 0.074 / 0.097 (recomputing
// them, (2,4,4096,8) 0.082 / 0.074). Not at more channels and steps:
// (2,768,512,16) bf16 0.170 / 0.075, nor at dstate 16 past one chunk
// ((2,4,2048,16) 0.094 / 0.046). At 128 steps and many channels one warp
// a channel still wins ((1,1536,128,16) bf16 0.0389 / 0.0444). Past 1024
// steps 16 warps (a chunk of 2048) against 8 (1024), saved states:
// (2,4,2048,8) bf16 0.0392 / 0.0514, (2,4,4096,8) fp32 0.0588 / 0.0706,
// bf16 0.0703 / 0.0942; 8 warps of 8 steps (also 2048) 0.057 to 0.106.
void warp_scan_for_few_channels(const Context& x, BwdDefault& d) {
  BwdConfig& c = d.config;
  const FwdProblem& f = x.f;
  const int64_t channels = x.channels;
  const bool one_chunk = f.seqlen <= 1024 && f.seqlen * f.dstate <= 16384;
  const bool few_states = f.seqlen <= 4096 && f.dstate <= 8;
  // Up to dstate 16 where 4 or more blocks share a channel's states (state
  // groups; H100, (2,4,2048,16) bf16 with the flags and saved states: 4
  // groups at 16 warps 0.0313 ms, one group at 8 warps 0.0887).
  const bool grouped_states =
      f.seqlen <= 4096 && f.dstate <= 16 && c.acc == BwdAcc::kF32 &&
      default_state_groups(channels, f.dstate, f.seqlen, 16, x.sm_count).groups >= 4;
  if (c.algo == BwdAlgo::kMultiPass &&
      (f.seqlen <= 128 || (channels <= 64 && (one_chunk || few_states || grouped_states)))) {
    // Warps enough to cover the sequence, up to 16 (a chunk of 2048; 8 with
    // fp64 sums, which spill at 512 threads), fewer where the chunk's B/C
    // rows do not fit; 256 threads a block up to 8 warps a channel (more
    // threads share the dB/dC sums over channels).
    const int max_warps = c.acc == BwdAcc::kF32 ? 16 : 8;
    int warps = 1;
    while (warps < max_warps && int64_t{128} * warps < f.seqlen) warps *= 2;
    const int wanted_warps = warps;
    BwdConfig ws;
    for (;; warps /= 2) {
      ws = warp_scan(128 * warps, channels_a_block(f, std::max(1, 8 / warps)), warps, c.acc, c.exp);
      if (warps <= 8 || check_config(x.p, ws, x.limit).is_ok()) break;
    }
    if (check_config(x.p, ws, x.limit).is_ok()) {
      c = ws;
      const int64_t chunks = (f.seqlen + ws.chunk - 1) / ws.chunk;
      d.reason = "warp scan, " + std::to_string(chunks) + " chunk(s) of " +
                 std::to_string(ws.chunk) + " (" + std::to_string(warps) + " warps a channel, " +
                 std::to_string(ws.d_step) + " channels a block; " + std::to_string(channels) +
                 " channels): faster than multipass there";
    }
    // A channel's states over several blocks (state groups) while they fit
    // one wave (tuner/state_groups.cpp has the measurements), at 8 warps a
    // channel or more; fp32 sums only (the configs the spaces hold).
    if (c.algo == BwdAlgo::kWarpScan && c.acc == BwdAcc::kF32 && channels <= 64) {
      const StateGroups sg =
          default_state_groups(channels, f.dstate, f.seqlen, wanted_warps, x.sm_count);
      const BwdConfig g = warp_scan(128 * sg.warps, 1, sg.warps, c.acc, c.exp, sg.groups);
      if (sg.groups > 1 && check_config(x.p, g, x.limit).is_ok()) {
        c = g;
        d.reason = "warp scan, a channel's states over " + std::to_string(sg.groups) +
                   " blocks (state groups), chunks of " + std::to_string(g.chunk) + " (" +
                   std::to_string(sg.warps) + " warps a channel; " + std::to_string(channels) +
                   " channels: the groups fill one wave of 16 warps per SM)";
      }
    }
  }
}

// dstate <= 3 where the sequential kernel stays (256 blocks or more, or
// under 8 chunks) and a warp a channel fills the GPU: the warp scan, 4
// steps a lane (chunks of 128), 8 channels a block; not at 64 steps or
// fewer above dstate 1. H100, the flags, saved states, ms, sequential
// against this layout: bf16 (16, 1536, 2048, 1) 1.063 / 0.570, (16, 1536,
// 1024, 2) 0.513 / 0.387, (32, 1536, 256, 1) 0.241 / 0.164, (16, 1536, 256,
// 3) 0.167 / 0.140; fp32 (16, 1536, 128, 1) 0.0904 / 0.0763, (16, 1536,
// 512, 2) 0.302 / 0.277; fp16 (8, 1024, 64, 1) 0.0441 / 0.0277, (64, 1024,
// 128, 2) 0.159 / 0.150. Not (8, 2048, 64, 2) fp32 (0.0522 / 0.0576); at
// dstate 4 a tie ((16, 2048, 512, 4) bf16 0.3652 / 0.3658).
void warp_scan_at_dstate_le3(const Context& x, BwdDefault& d) {
  BwdConfig& c = d.config;
  const FwdProblem& f = x.f;
  const int64_t channels = x.channels;
  if (c.algo == BwdAlgo::kSequential && c.acc == BwdAcc::kF32 && f.dstate <= 3 &&
      (f.seqlen > 64 || f.dstate == 1) && channels >= x.warp_fill_channels) {
    const BwdConfig ws = warp_scan(128, channels_a_block(f, 8), 1, c.acc, c.exp);
    if (check_config(x.p, ws, x.limit).is_ok()) {
      c = ws;
      d.reason = "warp scan, chunks of 128, " + std::to_string(ws.d_step) + " channels a block (" +
                 std::to_string(channels) + " channels, a warp each, fill the GPU; dstate " +
                 std::to_string(f.dstate) + ": faster than the sequential kernel there)";
    }
  }
}

// dstate 40 to 48, where the chunked layout takes 4 lanes of 10 to 12
// states at chunk 4 (252 registers at dstate 48, ptxas sm_90) and the
// sequential kernel stays: 8 lanes of 5 or 6 states, 16 channels a block
// (128 threads), chunk 8. The block's flags, saved states, ms, 4 lanes
// against 8: H100, (8, 1536, 2048, 48) bf16 6.998 / 4.408, (9, 1536, 2048,
// 48) bf16 8.67 / 5.77 (the best of its tune; mamba_ssm 5.85), (8, 1024,
// 1024, 40) fp16 1.657 / 1.195; held out on the H200 (bench/NOTES.md,
// version 39), (16, 768, 1024, 48) fp16 3.514 / 2.199, (8, 1536, 1024, 40)
// fp32 2.718 / 1.829, (12, 1024, 1024, 44) bf16 3.396 / 2.782. Not below:
// (4, 2048, 1024, 36) fp16 1.613 / 1.907, (2, 4096, 2048, 33) bf16 3.300 /
// 4.063, (16, 1024, 512, 34) fp32 1.344 / 1.320 (H200); nor past 48 (H100:
// (4, 2048, 1024, 56) fp32 1.623 / 2.002, and at dstate 100 and 200).
void eight_lanes_at_dstate40_to_48(const Context& x, BwdDefault& d) {
  BwdConfig& c = d.config;
  const FwdProblem& f = x.f;
  if (!in_band(x, c, BwdAlgo::kSequential, 40, 48, 4)) return;
  const BwdConfig eight = lanes_a_channel(x, c.acc, 8);
  if (!check_config(x.p, eight, x.limit).is_ok()) return;
  c = eight;
  d.reason = lanes_reason(f, c) + " (" + std::to_string(c.threads) + " threads), chunk " +
             std::to_string(c.chunk) + " (dstate " + std::to_string(f.dstate) +
             ": faster than 4 lanes of 10 to 12 states at chunk 4)";
}

// Multipass at dstate 33 to 48 over 4 lanes (9 to 12 states a thread):
// chunk 8, not 4, where it fits. At chunk 4 the chunk kernel (254
// registers) stores 32 to 48 bytes of spills at dstate 36, 44 and 48 (88 to
// 136 with the loads; ptxas sm_90, fp16 with the flags; none at 40), which the
// tuner prunes; chunk 8 holds 232 registers without spilling. The block's
// flags, saved states, ms, chunk 4 against 8: H100, (2, 384, 8192, 48) fp16
// 2.146 / 1.561 (mamba_ssm 1.466); held out on the H200 (bench/NOTES.md,
// version 39), (2, 512, 8192, 44) bf16 2.242 / 1.567, (1, 768, 4096, 36)
// fp16 0.789 / 0.561, (4, 256, 2048, 40) fp32 0.472 / 0.388.
void multipass_chunk8_at_9_to_12_states(const Context& x, BwdDefault& d) {
  BwdConfig& c = d.config;
  const FwdProblem& f = x.f;
  if (!in_band(x, c, BwdAlgo::kMultiPass, 33, 48, 4) || c.chunk != 4) return;
  BwdConfig longer = c;
  longer.chunk = 8;
  const int64_t n_chunks = (f.seqlen + longer.chunk - 1) / longer.chunk;
  longer.segments = static_cast<int>(std::min<int64_t>(c.segments, n_chunks / 2));
  if (longer.segments < 2 || !check_config(x.p, longer, x.limit).is_ok()) return;
  c = longer;
  d.reason += "; chunk 8 (" + std::to_string((f.dstate + 3) / 4) +
              " states a thread: faster than chunk 4, which spills at some dstates)";
}

// The sequential kernel at 8 lanes a channel, up to 32 channels a block
// (256 threads), chunk 16: 3 or 4 states a thread from dstate 17 to 32; c's
// sums and exp.
BwdConfig eight_lanes(const FwdProblem& f, const BwdConfig& c) {
  BwdConfig e;
  e.acc = c.acc;
  e.exp = c.exp;
  e.n_split = 8;
  e.d_step = channels_a_block(f, 32);
  e.threads = e.d_step * e.n_split;
  e.chunk = 16;
  return e;
}

// dstate 17 to 31: 3 or 4 states a thread over 8 lanes, 32 channels a block
// (256 threads, chunk 16). The chunked layout there takes 2 lanes of 9 to
// 16 states at chunk 4 (242 to 255 registers, ptxas sm_90), which
// multipass and then the warp scan (ws.K256.D16) replace where its grid is
// small. H100, the flags, saved states, ms, against 2 lanes at chunk 4 /
// the warp scan / this layout: bf16 (16, 2048, 1024, 24) 3.392 / 2.691 /
// 2.127, (16, 1536, 1024, 18) 1.876 / 1.598 / 1.575; fp16 (16, 1536, 1024,
// 20) 3.161 / 1.734 / 1.571. Against the warp scan: bf16 (8, 1536, 2048,
// 24) 2.019 / 1.718, (2, 4096, 2048, 24) 1.352 / 1.078; fp16 (8, 1024,
// 1024, 20) 0.589 / 0.536; fp32 (4, 2048, 1024, 28) 0.867 / 0.642, (8,
// 1536, 512, 31) 0.704 / 0.565, (12, 1024, 2048, 22) 2.098 / 1.800. Below
// dstate 20 (3 states a thread, up to 7 of 24 unused) the warp scan stays:
// (16, 768, 512, 17) bf16 0.390 / 0.445, (6, 1536, 1024, 19) fp16 0.698 /
// 0.864. 16 channels a block (128 threads) ran 2 % to 5 % slower than 32;
// 6 to 8 states over 4 lanes at chunk 8, 5 % to 60 % slower.
void eight_lanes_at_dstate17_to_31(const Context& x, BwdDefault& d) {
  BwdConfig& c = d.config;
  const FwdProblem& f = x.f;
  if (c.acc != BwdAcc::kF32 || f.dstate < 17 || f.dstate > 31) return;
  // The sequential block the chunked layout sized, or the warp scan of a
  // warp a channel that replaced multipass (not the few-channel scans).
  const bool warp_a_channel =
      c.algo == BwdAlgo::kWarpScan && c.n_split == 1 && c.threads == 32 * c.d_step;
  if (c.algo != BwdAlgo::kSequential && (!warp_a_channel || f.dstate < 20)) return;
  const BwdConfig eight = eight_lanes(f, c);
  const int64_t blocks = grid_blocks(f, eight.d_step);
  // The warp scan stays where the grid fills less than 15/16 of a wave of 2
  // blocks an SM (every win above had 256 blocks or more on 132 SMs; 192
  // lost: (3, 2048, 4096, 30) bf16 2.466 / 2.615 ms; 128, (2, 2048, 2048,
  // 26) bf16 0.741 / 0.882, (1, 4096, 2048, 28) fp32 0.875 / 0.867), and
  // under 512 steps (not measured there).
  const bool fills = 8 * blocks >= 15 * x.sms && f.seqlen >= 512;
  if (eight.d_step != 32 || (warp_a_channel && !fills) ||
      !check_config(x.p, eight, x.limit).is_ok())
    return;
  const std::string before =
      warp_a_channel ? "the warp scan" : "2 lanes of 9 to 16 states at chunk 4";
  c = eight;
  d.reason = lanes_reason(f, c) + " (256 threads), chunk 16 (dstate " + std::to_string(f.dstate) +
             ", " + std::to_string(blocks) + " blocks: faster than " + before + ")";
}

// dstate 32: 4 states a thread over 8 lanes, 32 channels a block (256
// threads, chunk 16), instead of 8 states over 4 lanes (148 registers, 3
// blocks of 128 an SM), except where those 3 blocks an SM fill most of
// one wave (more than 2 an SM): there the 8 states keep a small lead.
// H100, the flags, saved states, ms, 8 states against 4: 256 blocks, fp16
// (8, 1024, 4096, 32) 3.865 / 2.588, (2, 4096, 2048, 32) 1.923 / 1.304,
// bf16 (4, 2048, 1024, 32) 0.974 / 0.680; 512 blocks, (8, 2048, 512, 32)
// fp16 1.056 / 0.661, bf16 1.069 / 0.681; 384 blocks on 132 SMs, bf16
// (8, 1536, 2048, 32) 2.181 / 2.210, fp32 (16, 768, 1000, 32) 0.995 /
// 1.042. 16 channels a block (128 threads) ran 3 % to 7 % slower than 32.
void eight_lanes_at_dstate32(const Context& x, BwdDefault& d) {
  BwdConfig& c = d.config;
  const FwdProblem& f = x.f;
  const int sm_count = x.sm_count;
  const int64_t blocks = grid_blocks(f, c.d_step);
  if (in_band(x, c, BwdAlgo::kSequential, 32, 32, 4) && c.d_step == 32 && sm_count > 0) {
    const bool one_wave_of_3 = blocks > 2 * int64_t{sm_count} && blocks <= 3 * int64_t{sm_count};
    const BwdConfig four = eight_lanes(f, c);
    if (!one_wave_of_3 && check_config(x.p, four, x.limit).is_ok()) {
      c = four;
      d.reason = lanes_reason(f, c) + " (256 threads), chunk 16 (" + std::to_string(blocks) +
                 " blocks: at 8 states a thread, 3 blocks an SM " +
                 (blocks <= 2 * int64_t{sm_count} ? "would leave SMs idle"
                                                  : "would take more than one wave") +
                 ")";
    }
  }
}

// The sequential kernel at 2 states a thread: chunk 32, as much history as
// chunk 16 at 4 (the chunk's fixed work over twice the steps; H100,
// (8,1536,2048,8) bf16 with the flags and saved states: 0.612 ms against
// 0.636 at chunk 16). Decided last: the chunk count at 16
// picks the algorithms above.
void longer_chunk_at_two_states(const Context& x, BwdDefault& d) {
  BwdConfig& c = d.config;
  const int64_t per = (x.f.dstate + c.n_split - 1) / c.n_split;
  if (c.algo == BwdAlgo::kSequential && c.acc == BwdAcc::kF32 && per == 2 && c.n_split == 4) {
    BwdConfig longer = c;
    longer.chunk = 32;
    if (longer.chunk * per * longer.threads * 4 <= kHistoryBytes &&
        (x.max_shared_bytes == 0 || shared_bytes(x.p, longer) <= x.max_shared_bytes)) {
      c = longer;
      d.reason += "; chunk 32 (2 states per thread: the same history)";
    }
  }
}

// Under one wave of 4 blocks per SM anyway: 3, with more registers (H200,
// (8,1536,2048,16) bf16 with the block's flags and saved states, 384 blocks
// on 132 SMs: 0.933 ms at 3 against 0.985 at 4; at 2048 blocks 3 cost 12%).
void three_blocks_under_one_wave(const Context& x, BwdDefault& d) {
  BwdConfig& c = d.config;
  const int sm_count = x.sm_count;
  const int64_t blocks = grid_blocks(x.f, c.d_step);
  if (c.algo == BwdAlgo::kSequential && sm_count > 0 && rule_blocks(x.p, c) == 4 &&
      blocks <= 3 * int64_t{sm_count}) {
    c.blocks = 3;
    d.reason += "; 3 blocks per SM (" + std::to_string(blocks) + " blocks fit one wave of 3 on " +
                std::to_string(sm_count) + " SMs: more registers a thread)";
  }
}

// The chunked kernels' grid in waves of the blocks per SM their launch
// bounds allow, for `explain`: a grid just past a whole number of waves
// leaves most SMs with one block or none in its last wave.
void describe_waves(const Context& x, BwdDefault& d) {
  const BwdConfig& c = d.config;
  const int sm_count = x.sm_count;
  if (c.algo == BwdAlgo::kWarpScan || sm_count <= 0) return;
  const int64_t grid =
      grid_blocks(x.f, c.d_step) * (c.algo == BwdAlgo::kMultiPass ? c.segments : 1);
  const int64_t per_sm = c.blocks != 0 ? c.blocks : rule_blocks(x.p, c);
  std::ostringstream os;
  os << std::fixed << std::setprecision(2)
     << static_cast<double>(grid) / static_cast<double>(per_sm * sm_count);
  d.reason += "; grid " + std::to_string(grid) + " blocks, " + os.str() + " waves of up to " +
              std::to_string(per_sm) + " per SM on " + std::to_string(sm_count) + " SMs";
}

}  // namespace

BwdDefault default_config(const BwdProblem& p, BwdAcc acc, size_t max_shared_bytes, int sm_count) {
  const Context x{
      p,
      p.fwd,
      max_shared_bytes,
      max_shared_bytes != 0 ? max_shared_bytes : size_t{ssmtune_kernels::kSm90SmemPerBlock},
      sm_count,
      sm_count > 0 ? sm_count : 128,
      p.fwd.batch * p.fwd.dim,
      8 * int64_t{sm_count > 0 ? sm_count : 128}};
  BwdDefault d = chunked_layout(x, acc);
  // In this order: multipass reads the chunk count at the chunked layout's
  // chunk; the warp scans replace multipass (or, at dstate <= 3, the
  // sequential kernel) where they measured faster; the rest refine the
  // sequential block, and the last describes the grid.
  multipass_for_few_blocks(x, d);
  warp_scan_for_many_channels(x, d);
  warp_scan_for_few_states(x, d);
  warp_scan_for_few_channels(x, d);
  warp_scan_at_dstate_le3(x, d);
  multipass_four_lanes_at_dstate17_to_31(x, d);
  eight_lanes_at_dstate40_to_48(x, d);
  multipass_chunk8_at_9_to_12_states(x, d);
  eight_lanes_at_dstate17_to_31(x, d);
  eight_lanes_at_dstate32(x, d);
  longer_chunk_at_two_states(x, d);
  three_blocks_under_one_wave(x, d);
  describe_waves(x, d);
  return d;
}

}  // namespace ssmtune::bwd
