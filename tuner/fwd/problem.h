// The problem a forward selective scan solves: sizes, dtypes and feature
// flags (everything that selects a kernel variant or changes its cost), and
// the device tensors of one call, validated against it. Values; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "ssmtune/status.h"
#include "tuner/dtype.h"

namespace ssmtune {

// Largest dstate the kernels support.
inline constexpr int kMaxDstate = 256;
// Largest batch, dim, seqlen or groups: the kernels take sizes as 32-bit ints.
inline constexpr int64_t kMaxSize = 2147483647;

// The forward family's prefix of problem keys.
inline constexpr const char kFwdKeyPrefix[] = "fwd:";

struct FwdProblem {
  int64_t batch = 1;
  int64_t dim = 1;
  int64_t seqlen = 1;
  int64_t dstate = 16;
  int64_t groups = 1;  // for variable B/C
  DType dtype = DType::kF32;
  bool variable_b = true;  // B is (batch, groups, dstate, seqlen), else (dim, dstate) fp32
  bool variable_c = true;
  bool has_d = false;
  bool has_z = false;
  bool has_delta_bias = false;
  bool delta_softplus = false;
  bool return_last_state = false;
  bool has_initial_state = false;

  // Every size and flag checked: seqlen >= 1, dstate in [1, kMaxDstate],
  // dim divisible by groups, ... The message names the argument.
  Status validate() const;
  // Canonical text key, e.g. "fwd:b8.d1536.l2048.n16.g1.fp32.vB.vC.D.z.bias.sp.last.h0"
  // (flags that are off are left out). Stable: the tuning database keys on it.
  std::string key() const;
  // Inverse of key(); the "fwd:" prefix may be left out (keys from before
  // kernel families).
  static Result<FwdProblem> from_key(const std::string& key);
  // Same dtypes and flags (all but the four sizes and groups): the nearest-
  // shape selector only compares problems of one class.
  std::string family_key() const;

  int64_t dim_per_group() const { return dim / groups; }
  // Minimal device-memory traffic of one forward call, bytes.
  double min_bytes() const;
  // One exp per (batch, dim, dstate, seqlen).
  double exp_count() const { return double(batch) * dim * dstate * seqlen; }
};

bool operator==(const FwdProblem& a, const FwdProblem& b);

// A device tensor as a caller passes it: pointer, dtype, shape and strides
// in elements (rank <= 4). For validation of the call against the FwdProblem.
struct TensorArg {
  const void* data = nullptr;
  DType dtype = DType::kF32;
  int rank = 0;
  int64_t shape[4] = {0, 0, 0, 0};
  int64_t stride[4] = {0, 0, 0, 0};
  bool present() const { return data != nullptr; }
};

struct FwdTensors {
  TensorArg u, delta, A, B, C, D, z, delta_bias, h0;  // inputs (D, z, delta_bias, h0 optional)
  TensorArg out, out_z, last_state;                   // outputs (out_z, last_state optional)
};

// Checks every tensor against the problem: presence matching the flags,
// rank, shape, dtype, last-dimension contiguity, alignment of the pointer to
// the element size, and non-overlap of outputs with inputs. Each error names
// the argument ("B: expected shape (8, 1, 16, 2048), got (8, 16, 2048)").
Status validate_fwd_tensors(const FwdProblem& p, const FwdTensors& t);

}  // namespace ssmtune
