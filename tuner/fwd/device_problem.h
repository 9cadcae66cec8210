// One problem's tensors on the device: inputs uploaded from FwdHostInputs (in
// their storage dtypes, contiguous), outputs allocated and poisoned before
// each run so unwritten elements show, and the FwdTensors that describe them.
// Move-only; needs a current context.
#pragma once

#include <vector>

#include "jit/device_buffer.h"
#include "tuner/fwd/host_inputs.h"
#include "tuner/fwd/problem.h"

namespace ssmtune {

class FwdDeviceProblem {
 public:
  static Result<FwdDeviceProblem> upload(const FwdHostInputs& in);

  const FwdProblem& problem() const { return problem_; }
  const FwdTensors& tensors() const { return tensors_; }

  // Writes the poison pattern into every output (see tuner/accuracy.h).
  Status poison_outputs(CUstream stream) const;

  // Raw output bytes, as the kernel wrote them.
  Result<std::vector<unsigned char>> download_out() const;
  Result<std::vector<unsigned char>> download_out_z() const;  // empty without z
  Result<std::vector<float>> download_last_state() const;     // empty unless asked
  // The same into buffers kept between runs (resized, not cleared): a bench
  // that scores many configs skips allocating and zeroing them each time.
  Status download_outputs(std::vector<unsigned char>& out, std::vector<unsigned char>& out_z,
                          std::vector<float>& last_state) const;

  size_t output_elements() const;

 private:
  FwdDeviceProblem() = default;
  FwdProblem problem_;
  jit::DeviceBuffer u_, delta_, A_, B_, C_, D_, z_, bias_, h0_, out_, out_z_, last_;
  FwdTensors tensors_;
};

}  // namespace ssmtune
