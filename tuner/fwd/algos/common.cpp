// What several forward algorithm descriptors share.
#include "tuner/fwd/algos/common.h"

#include <algorithm>

#include "core/int_math.h"
#include "ssm/fwd_params.cuh"

namespace ssmtune {
std::string split_layout_rules(const FwdProblem& p, const FwdConfig& c) {
  if (!is_pow2(c.n_split) || c.n_split > 32) return "n_split must be a power of 2 <= 32";
  if (c.n_split > p.dstate) return "n_split exceeds dstate";
  if (c.threads != c.d_step * c.n_split) return "threads must equal d_step * n_split";
  return {};
}

std::string staged_layout_rules(const FwdProblem& p, const FwdConfig& c) {
  std::string why = split_layout_rules(p, c);
  if (!why.empty()) return why;
  if (c.chunk % 4 != 0) return "chunk must be a multiple of 4 (vector groups)";
  return {};
}

size_t staged_shared_bytes(const FwdProblem& p, const FwdConfig& c) {
  const auto l = ssmtune_kernels::chunk_smem_layout(static_cast<int>(p.dstate), c.chunk, c.d_step,
                                                    p.variable_b, p.variable_c);
  return sizeof(float) * static_cast<size_t>(l.floats);
}

void add_staged_space(FwdSpaceBuilder& b, ScanAlgo a, const std::vector<int>& chunks,
                      const std::vector<int>& splits, const std::vector<int>& items,
                      int fp32_items) {
  for (int n_split : splits)
    for (int threads : {64, 128, 256})
      for (int chunk : chunks)
        for (int in_flight : items) {
          FwdConfig c;
          c.algo = a;
          c.n_split = n_split;
          c.threads = threads;
          c.d_step = threads / n_split;
          c.chunk = chunk;
          c.items = in_flight;
          if (in_flight == fp32_items)
            b.add_fp32(c);
          else
            b.add_fast(c);
        }
}

void set_multichunk_default(const FwdProblem& p, size_t max_shared_bytes, FwdConfig& c) {
  // At most 8 states per thread keeps h and A in registers at any dstate;
  // 64 threads per block: d_step = 64 / n_split channels share B/C.
  c.n_split = std::clamp(pow2_floor(std::max<int64_t>(1, p.dstate / 8)), 1, 32);
  c.threads = 64;
  c.d_step = c.threads / c.n_split;
  // Multi-chunk algorithms want several chunks per sequence.
  c.chunk = 128;
  c.items = 1;
  shrink_chunk_to_fit(p, max_shared_bytes, c);
}

void shrink_chunk_to_fit(const FwdProblem& p, size_t max_shared_bytes, FwdConfig& c) {
  while (max_shared_bytes != 0 && c.chunk > 16 && !check_config(p, c, max_shared_bytes))
    c.chunk /= 2;
}

size_t scan_shared_bytes(const FwdProblem& p, const FwdConfig& c, bool blelloch) {
  return static_cast<size_t>(
      ssmtune_kernels::scan_smem_layout(static_cast<int>(p.dstate), c.chunk, c.d_step, c.threads,
                                        c.acc == AccType::kF64 ? 8 : 4, p.variable_b, p.variable_c,
                                        blelloch, c.n_split)
          .bytes);
}

}  // namespace ssmtune
