// The problem a decode step solves (mamba_ssm's selective_state_update):
// sizes, dtypes and flags, and the device tensors of one call, validated
// against it. Channels are (head, p < headdim): Mamba-1 is one head of
// headdim = d_inner, Mamba-2 many heads sharing B/C groups. Values;
// thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "ssmtune/status.h"
#include "tuner/fwd/problem.h"

namespace ssmtune::step {

inline constexpr const char kStepKeyPrefix[] = "step:";
// The grid's y dimension holds the batch.
inline constexpr int64_t kMaxStepBatch = 65535;

struct StepProblem {
  int64_t batch = 1;
  int64_t heads = 1;
  int64_t headdim = 1;
  int64_t dstate = 16;
  int64_t groups = 1;         // B/C groups; head h reads group h / (heads / groups)
  DType dtype = DType::kF32;  // x, dt, z, B, C and out
  DType state_dtype = DType::kF32;
  bool has_d = false;
  bool has_z = false;
  bool has_dt_bias = false;
  bool softplus = false;
  bool has_indices = false;  // state rows picked per batch entry (continuous batching)

  // Sizes in range (batch <= 65535, dstate in [1, 256], 32-bit sizes),
  // groups dividing heads. The message names the argument.
  Status validate() const;
  // "step:b64.h1.p5120.n16.g1.bf16.sfp32.D.z.bias.sp.idx" (flags that are off left out).
  std::string key() const;
  static Result<StepProblem> from_key(const std::string& key);
  // Dtypes, flags and dstate: configs of one class are legal for each other.
  std::string class_key() const;

  int64_t dim() const { return heads * headdim; }
  // State read and written, A read, x/dt/z read and out written once; bytes.
  double min_bytes() const;
  double exp_count() const { return double(batch) * dim() * dstate; }
};

bool operator==(const StepProblem& a, const StepProblem& b);

// state_indices: (batch,) int32 or int64, contiguous.
struct IndexArg {
  const void* data = nullptr;
  int bytes = 4;  // 4: int32, 8: int64
  int64_t size = 0;
  int64_t stride = 1;
  bool present() const { return data != nullptr; }
};

// The indices as the 4-byte words they span, as a TensorArg (absent when
// they are): for the overlap and pointer checks, which take TensorArgs.
TensorArg index_words(const IndexArg& ix);

// state (rows, heads, headdim, dstate) in the state dtype, read and written
// in place (rows = batch without indices); x, dt, z (batch, heads, headdim)
// and B, C (batch, groups, dstate) in the input dtype; A (heads, headdim,
// dstate) fp32; D, dt_bias (heads, headdim) fp32 or the input dtype; out
// (batch, heads, headdim) in the input dtype. Any strides >= 0 (a broadcast
// input has 0), but the state and out need one element per index.
struct StepTensors {
  TensorArg state, x, dt, A, B, C, D, z, dt_bias, out;
  IndexArg state_indices;
};

// Presence (matching the flags), rank, shape, dtype, strides, alignment, and
// no overlap of the state or out with any other tensor; each error names
// the argument.
Status validate_step_tensors(const StepProblem& p, const StepTensors& t);

}  // namespace ssmtune::step
