// The forward algorithm descriptors (one file each in this folder) and the
// rules, space loops and default helpers that several of them share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tuner/fwd/algorithms.h"

namespace ssmtune {

const FwdAlgorithm& sequential_algorithm();
const FwdAlgorithm& warpscan_algorithm();
const FwdAlgorithm& blelloch_algorithm();
const FwdAlgorithm& multipass_algorithm();
const FwdAlgorithm& lookback_algorithm();
const FwdAlgorithm& pipelined_algorithm();
const FwdAlgorithm& split_algorithm();
const FwdAlgorithm& blockscan_algorithm();

// Segments of the split scan that give about `blocks` blocks for the layout
// of `c` on `p`, each of at least `min_chunks` chunks; 1 where the sequence
// is too short to split.
int split_segments(const FwdProblem& p, const FwdConfig& c, int64_t blocks, int min_chunks = 4);

// Rules of the layouts that split a channel's states over n_split threads
// (sequential, multipass, lookback, pipelined): empty, or the rule broken.
std::string split_layout_rules(const FwdProblem& p, const FwdConfig& c);
// Those plus the staged chunk's vector groups (sequential, multipass, lookback).
std::string staged_layout_rules(const FwdProblem& p, const FwdConfig& c);

// Shared memory of the chunk-staged kernels (chunk_smem_layout), bytes.
size_t staged_shared_bytes(const FwdProblem& p, const FwdConfig& c);

// The staged algorithms' grid: n_split x threads (64, 128, 256) x chunk x
// items; items == fp32_items once per fp32 exp mode, the others with the
// fast exp only.
void add_staged_space(FwdSpaceBuilder& b, ScanAlgo a, const std::vector<int>& chunks,
                      const std::vector<int>& splits, const std::vector<int>& items,
                      int fp32_items = 1);

// Shared memory of the warpscan and blelloch kernels (scan_smem_layout).
size_t scan_shared_bytes(const FwdProblem& p, const FwdConfig& c, bool blelloch);

// The default layout of the algorithms that split the sequence across
// blocks (multipass, lookback).
void set_multichunk_default(const FwdProblem& p, size_t max_shared_bytes, FwdConfig& c);

// Halves the chunk (down to 16) until the config fits `max_shared_bytes`.
void shrink_chunk_to_fit(const FwdProblem& p, size_t max_shared_bytes, FwdConfig& c);

}  // namespace ssmtune
