// Host tensors for kernel templates run through tests/support/cuda_emulation.h:
// contiguous buffers (inputs encoded to their dtype, outputs filled with a
// 0xEE poison), kept alive with their TensorArg descriptions; the forward's
// tensors and the backward's outputs by problem.
#pragma once

#include <cstdint>
#include <vector>

#include "tuner/bwd/problem.h"
#include "tuner/dtype.h"
#include "tuner/fwd/host_inputs.h"
#include "tuner/fwd/problem.h"

namespace ssmtune::testing {

struct HostTensors {
  std::vector<std::vector<unsigned char>> keep;
  TensorArg put(const std::vector<double>& v, DType dt, std::vector<int64_t> shape) {
    keep.push_back(encode(v, dt));
    return describe(keep.back().data(), dt, shape);
  }
  TensorArg out(DType dt, std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    keep.emplace_back(static_cast<size_t>(n) * dtype_bytes(dt), 0xEE);
    return describe(keep.back().data(), dt, shape);
  }
  static TensorArg describe(const void* data, DType dt, const std::vector<int64_t>& shape) {
    TensorArg t;
    t.data = data;
    t.dtype = dt;
    t.rank = static_cast<int>(shape.size());
    int64_t s = 1;
    for (int i = t.rank - 1; i >= 0; --i) {
      t.shape[i] = shape[i];
      t.stride[i] = s;
      s *= shape[i];
    }
    return t;
  }
};

// The inputs of `in` in the problem's dtypes, contiguous, into `t`'s fields
// of those names (FwdTensors or BwdTensors): u, delta, A, B, C and the
// optional D, delta_bias, z and h0 its flags ask for.
template <typename Tensors>
void put_inputs(HostTensors& h, const FwdHostInputs& in, Tensors& t) {
  const FwdProblem& p = in.problem;
  const DType io = p.dtype, f32 = DType::kF32;
  const std::vector<int64_t> bdl = {p.batch, p.dim, p.seqlen}, st = {p.batch, p.dim, p.dstate};
  const std::vector<int64_t> var = {p.batch, p.groups, p.dstate, p.seqlen}, con = {p.dim, p.dstate};
  t.u = h.put(in.u, io, bdl);
  t.delta = h.put(in.delta, io, bdl);
  t.A = h.put(in.A, f32, con);
  t.B = h.put(in.B, p.variable_b ? io : f32, p.variable_b ? var : con);
  t.C = h.put(in.C, p.variable_c ? io : f32, p.variable_c ? var : con);
  if (p.has_d) t.D = h.put(in.D, f32, {p.dim});
  if (p.has_delta_bias) t.delta_bias = h.put(in.delta_bias, f32, {p.dim});
  if (p.has_z) t.z = h.put(in.z, io, bdl);
  if (p.has_initial_state) t.h0 = h.put(in.h0, f32, st);
}

// The forward's tensors of `in`: its inputs and poisoned outputs (out_z
// with z; last_state with return_last_state).
inline FwdTensors put_fwd_tensors(HostTensors& h, const FwdHostInputs& in) {
  const FwdProblem& p = in.problem;
  const std::vector<int64_t> bdl = {p.batch, p.dim, p.seqlen};
  FwdTensors t;
  put_inputs(h, in, t);
  t.out = h.out(p.dtype, bdl);
  if (p.has_z) t.out_z = h.out(p.dtype, bdl);
  if (p.return_last_state) t.last_state = h.out(DType::kF32, {p.batch, p.dim, p.dstate});
  return t;
}

// The backward's gradient outputs, poisoned, for the problem's flags: du,
// ddelta, dA, dB, dC (in B's and C's dtypes), and dD, ddelta_bias, dz, dh0
// where asked for. dout, the forward's out (with z) and dlast carry values:
// the caller puts those.
inline void put_bwd_outputs(HostTensors& h, const bwd::BwdProblem& bp, bwd::BwdTensors& t) {
  const FwdProblem& p = bp.fwd;
  const DType io = p.dtype, f32 = DType::kF32;
  const std::vector<int64_t> bdl = {p.batch, p.dim, p.seqlen}, st = {p.batch, p.dim, p.dstate};
  const std::vector<int64_t> var = {p.batch, p.groups, p.dstate, p.seqlen}, con = {p.dim, p.dstate};
  t.du = h.out(io, bdl);
  t.ddelta = h.out(io, bdl);
  t.dA = h.out(f32, con);
  t.dB = h.out(p.variable_b ? io : f32, p.variable_b ? var : con);
  t.dC = h.out(p.variable_c ? io : f32, p.variable_c ? var : con);
  if (p.has_d) t.dD = h.out(f32, {p.dim});
  if (p.has_delta_bias) t.ddelta_bias = h.out(f32, {p.dim});
  if (p.has_z) t.dz = h.out(io, bdl);
  if (p.has_initial_state) t.dh0 = h.out(f32, st);
}

}  // namespace ssmtune::testing
