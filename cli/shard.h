// `ssmtune tune --shard I/N`: one of N deterministic parts of a shape list,
// for a scheduler that runs the parts on many machines (a Slurm job array,
// a Kubernetes indexed Job) before `ssmtune db merge` gathers them. Pure
// functions.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ssmtune/status.h"

namespace ssmtune::cli {

struct Shard {
  int index = 0;  // I: 0-based
  int count = 1;  // N >= 1
};

// "I/N" with decimal I and N, 0 <= I < N, N <= kMaxShards; anything else is
// kInvalidArgument saying what is expected.
Result<Shard> parse_shard(const std::string& text);
inline constexpr int kMaxShards = 1000000;

// The positions in `keys` (canonical problem keys) that shard `s` tunes:
// the distinct keys sorted bytewise, then every N-th starting at the I-th;
// each key's first position, in that sorted order. Every distinct key is in
// exactly one shard, whatever order or repetitions the list had.
std::vector<size_t> shard_positions(const std::vector<std::string>& keys, const Shard& s);

}  // namespace ssmtune::cli
