// Compile-time description of one backward kernel variant. Its members are
// named as FwdTraits' so that the forward's device helpers (tiles, staging,
// ChannelStates, exps) serve the backward unchanged.
#pragma once

#include "ssm/bwd/bwd_params.cuh"
#include "ssm/fwd_traits.cuh"

namespace ssmtune_kernels {

template <typename InT_, typename AccT_, int kN_, int kChunk_, int kDStep_, int kNSplit_,
          ExpKind kExp_, bool kVarB_, bool kVarC_, bool kHasD_, bool kHasZ_, bool kHasBias_,
          bool kSoftplus_, bool kH0_, bool kDLast_, int kBlocks_ = 0, int kItems_ = 0,
          int kChan_ = 1>
struct BwdTraits {
  using InT = InT_;
  using AccT = AccT_;  // float or double: states, adjoints and per-thread sums
  static constexpr int kN = kN_;
  static constexpr int kChunk = kChunk_;
  static constexpr int kDStep = kDStep_;
  // Chunked kernels: threads sharing a channel's states; warp scan: blocks
  // (state groups, grid z).
  static constexpr int kNSplit = kNSplit_;
  // kItems_ > 0: the warp-scan backward (kWarps warps per channel, kItems_
  // consecutive timesteps a lane, a chunk of 32 * kWarps * kItems_); 0: the
  // chunked kernels (kNSplit_ threads per channel, one timestep at a time).
  static constexpr bool kWarpScan = kItems_ > 0;
  static constexpr int kWarps = kWarpScan ? kChunk_ / (32 * kItems_) : 1;
  // Channels a thread of the chunked kernels (the config's .c<chan>): thread
  // (c, s) carries states s + k * kNSplit of channels c + i * kDStep / kChan,
  // so the dB/dC sums over channels start in registers and the B/C rows a
  // state reads serve kChan channels.
  static constexpr int kChan = kChan_;
  static constexpr int kThreads = kWarpScan ? 32 * kDStep_ * kWarps : kDStep_ * kNSplit_ / kChan_;
  static constexpr int kItems = kWarpScan ? kItems_ : 1;
  static constexpr ExpKind kExp = kExp_;
  static constexpr int kPolyShare = 0;
  static constexpr bool kVarB = kVarB_, kVarC = kVarC_, kHasD = kHasD_, kHasZ = kHasZ_;
  static constexpr bool kHasBias = kHasBias_, kSoftplus = kSoftplus_;
  static constexpr bool kLastState = false, kH0 = kH0_, kDLast = kDLast_;

  static constexpr bool kAccDouble = sizeof(AccT) == 8;
  // Blocks per SM the register allocation must allow: 512 threads' worth
  // (at most 128 registers a thread) for blocks of 128 threads or more and
  // up to 4 states per thread, else 256; fp64 accumulation takes what it
  // needs.
  // The warp scan holds a lane's items, not states: 512 threads' worth.
  static constexpr int kPer = (kN + kNSplit - 1) / kNSplit;
  static constexpr int kResident = kWarpScan || (kPer * kChan <= 4 && kThreads >= 128) ? 512 : 256;
  // kBlocks_ > 0 (the config's .b<blocks>) overrides the rule: fewer blocks
  // give each thread more registers, which pays when the grid is under one
  // wave anyway (H200, (8,1536,2048,16) bf16 with the block's flags and
  // saved states: 3 blocks of 128 threads 0.933 ms against 0.985 at 4).
  static constexpr int kMinBlocks =
      kBlocks_ > 0 ? kBlocks_
                   : (kAccDouble ? 1 : (kResident / kThreads > 1 ? kResident / kThreads : 1));
  static_assert(sizeof(AccT) == 4 || sizeof(AccT) == 8, "AccT must be float or double");
  static_assert(kN >= 1 && kN <= 256, "dstate must be in [1, 256]");
  static_assert(kChunk >= 4 && kChunk <= kBwdMaxChunk && kChunk % 4 == 0,
                "chunk must be a multiple of 4 in [4, kBwdMaxChunk]");
  static_assert(kDStep >= 1 && kDStep <= 64, "d_step must be in [1, 64]");
  static_assert(kNSplit >= 1 && kNSplit <= 32 && (kNSplit & (kNSplit - 1)) == 0,
                "n_split must be a power of two <= 32");
  static_assert(kNSplit <= kN, "n_split must not exceed dstate");
  static_assert(!kWarpScan || (kChunk % (32 * kItems_) == 0 && (kWarps & (kWarps - 1)) == 0 &&
                               kItems_ % 4 == 0 && kDStep <= 32),
                "warp scan: chunk 32 * warps * items (warps a power of 2, items a multiple of 4), "
                "d_step <= 32");
  static_assert(kChan == 1 || (!kWarpScan && (kChan == 2 || kChan == 4) && kDStep % kChan == 0 &&
                               kNSplit >= kChan),
                "channels a thread: 1, or 2 or 4 in the chunked kernels (d_step a multiple, "
                "n_split at least as many)");
  static_assert(kThreads % 32 == 0 && kThreads <= 1024,
                "d_step * n_split / chan must be a multiple of 32, at most 1024");
  static_assert(kExp != ExpKind::kPoly, "the backward takes the accurate or the fast exp");
  static_assert(kBlocks_ >= 0 && kBlocks_ * kThreads <= 2048, "blocks * threads must be <= 2048");
  static_assert(!kAccDouble || kExp == ExpKind::kAccurate,
                "fp64 accumulation only with the accurate exp");
};

// The same variant without variable C: phase 1 stages no C rows.
template <typename Tr>
struct BwdNoC : Tr {
  static constexpr bool kVarC = false;
};

}  // namespace ssmtune_kernels
