// One point of the backward kernel space: algorithm, chunk, channels per
// block, state split, accumulation dtype and exp mode, with a stable text
// key; its legality for a problem (mirroring the templates' static_asserts
// and the shared-memory limit), the heuristic default and the search space.
// Values and pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ssmtune/status.h"
#include "tuner/bwd/problem.h"

namespace ssmtune::bwd {

enum class BwdAlgo {
  kSequential,  // one block per (batch, channel tile) walks the whole sequence
  kMultiPass,   // segments of the sequence across blocks (three kernels)
  kWarpScan,    // warps per channel scan chunks of 32 * warps * items timesteps per state
};
const char* to_string(BwdAlgo a);  // "seq", "mp", "ws"

enum class BwdAcc { kF32, kF64 };
enum class BwdExp { kAccurate, kFast };

struct BwdConfig {
  BwdAlgo algo = BwdAlgo::kSequential;
  int chunk = 32;    // K: timesteps staged (and their history kept) per chunk;
                     // warp scan: 32 lanes x warps a channel x 4 to 16 items
  int d_step = 8;    // channels per block
  int n_split = 4;   // threads sharing one channel's states (warp scan: blocks,
                     // each running states s, s + n_split, ...; 1 for one block)
  int threads = 32;  // d_step * n_split, a multiple of 32 (warp scan: 32 * d_step *
                     // warps a channel, a power of 2)
  BwdAcc acc = BwdAcc::kF32;
  BwdExp exp = BwdExp::kFast;
  int segments = 1;  // multipass: sequence segments per (batch, tile)
  // Resident blocks per SM the kernel's registers must allow (launch
  // bounds); 0: the templates' rule (512 threads' worth up to 4 states a
  // thread at 128 threads or more, else 256). Fewer blocks, more registers.
  int blocks = 0;
  // Channels a thread (sequential: 1, 2 or 4; threads = d_step * n_split /
  // chan): a thread's dB/dC values over its channels are summed in registers
  // before the lane reductions, and a state's B/C rows serve every channel
  // of the thread.
  int chan = 1;

  // "seq.K32.D8.fp32.t32.s4.fast" (multipass appends ".S<segments>"; more
  // channels a thread, ".c<chan>"; a block count, ".b<blocks>", last; warp
  // scan: "ws.K256.D4.fp32.t128.s1.fast", with 8 warps a channel
  // "ws.K1024.D1.fp32.t256.s1.fast", its states over 4 blocks
  // "ws.K1024.D1.fp32.t256.s4.fast").
  std::string key() const;
  static Result<BwdConfig> from_key(const std::string& key);
};

// Warps per channel of a warp-scan config (threads / (32 * d_step)); 1 otherwise.
int scan_warps(const BwdConfig& c);
// Timesteps a lane of a warp-scan config (chunk / (32 * warps a channel)).
int scan_items(const BwdConfig& c);

bool operator==(const BwdConfig& a, const BwdConfig& b);

// Shared memory of one block, bytes (bwd_smem_layout).
size_t shared_bytes(const BwdProblem& p, const BwdConfig& c);

// Ok, or kInvalidArgument naming the broken rule. max_shared_bytes: the
// device's opt-in limit per block (0: unchecked).
Status check_config(const BwdProblem& p, const BwdConfig& c, size_t max_shared_bytes = 0);

// A warp-scan config: `channels` a block, `warps` a channel, chunk
// timesteps, a channel's states over `groups` blocks.
BwdConfig warp_scan(int chunk, int channels, int warps, BwdAcc acc = BwdAcc::kF32,
                    BwdExp exp = BwdExp::kFast, int groups = 1);

struct BwdDefault {
  BwdConfig config;
  std::string reason;
};
// A legal config for `p` (tuner/bwd/defaults.cpp; the chunk shrinks until the block fits
// max_shared_bytes; 0: no limit). sm_count (0: unknown): a sequential grid
// that fits 3 blocks per SM takes 3 (.b3: more registers a thread); a
// problem whose channels give the SMs 8 warps each (128 SMs when
// unknown) but would go multipass takes the warp scan, except at dstate 16
// (the chunked kernels' 4 lanes of 4 states, where multipass is faster).
BwdDefault default_config(const BwdProblem& p, BwdAcc acc = BwdAcc::kF32,
                          size_t max_shared_bytes = 0, int sm_count = 0);

// The resident blocks per SM the templates' rule asks of c's registers
// when c.blocks is 0 (BwdTraits::kMinBlocks).
int rule_blocks(const BwdProblem& p, const BwdConfig& c);

// The legal configs to tune over (a few dozen).
std::vector<BwdConfig> search_space(const BwdProblem& p, size_t max_shared_bytes);

}  // namespace ssmtune::bwd
