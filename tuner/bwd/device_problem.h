// One backward problem's tensors on the device: the forward inputs, the
// saved forward output y, dout and dlast uploaded (in their storage dtypes,
// contiguous, except that u may take a larger batch stride, e.g. past 2^31
// elements, to exercise 64-bit offsets), outputs allocated and poisoned
// before each run, and the BwdTensors describing them. Move-only; needs a
// current context.
#pragma once

#include <cstdint>
#include <vector>

#include "jit/device_buffer.h"
#include "tuner/bwd/problem.h"
#include "tuner/fwd/host_inputs.h"

namespace ssmtune::bwd {

// Every gradient as the kernels wrote it: raw little-endian bytes in the
// output's dtype (empty when the problem lacks it).
struct DeviceGradBytes {
  std::vector<unsigned char> du, ddelta, dA, dB, dC, dD, dz, ddelta_bias, dh0;
};

class BwdDeviceProblem {
 public:
  // y: the forward's out (batch, dim, seqlen), used with z (rounded to the
  // dtype here); dout: (batch, dim, seqlen); dlast: (batch, dim, dstate)
  // when has_dlast. u_batch_stride: 0 for contiguous, else the stride (>=
  // dim * seqlen) u is laid out with.
  static Result<BwdDeviceProblem> upload(const FwdHostInputs& in, bool has_dlast,
                                         const std::vector<double>& y,
                                         const std::vector<double>& dout,
                                         const std::vector<double>& dlast,
                                         int64_t u_batch_stride = 0);

  const BwdProblem& problem() const { return problem_; }
  const BwdTensors& tensors() const { return tensors_; }

  Status poison_outputs(CUstream stream) const;
  Result<DeviceGradBytes> download() const;

 private:
  BwdDeviceProblem() = default;
  BwdProblem problem_;
  jit::DeviceBuffer u_, delta_, A_, B_, C_, D_, z_, bias_, h0_, out_, dout_, dlast_;
  jit::DeviceBuffer du_, ddelta_, dA_, dB_, dC_, dD_, dz_, dbias_, dh0_;
  BwdTensors tensors_;
};

}  // namespace ssmtune::bwd
