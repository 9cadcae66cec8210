// One decode-step problem's tensors on the device: inputs uploaded from
// StepHostInputs (contiguous, in their storage dtypes), the state kept in
// a pristine copy and restored before each scored run (the step updates it
// in place), out poisoned before each run so unwritten elements show.
// Move-only; needs a current context.
#pragma once

#include <vector>

#include "jit/device_buffer.h"
#include "tuner/step/host_inputs.h"

namespace ssmtune::step {

class StepDeviceProblem {
 public:
  static Result<StepDeviceProblem> upload(const StepHostInputs& in);

  const StepProblem& problem() const { return problem_; }
  const StepTensors& tensors() const { return tensors_; }

  // The state back to its uploaded values, out poisoned.
  Status reset(CUstream stream) const;
  // Raw bytes as the kernel left them.
  Result<std::vector<unsigned char>> download_out() const;
  Result<std::vector<unsigned char>> download_state() const;

 private:
  StepDeviceProblem() = default;
  StepProblem problem_;
  jit::DeviceBuffer state0_, state_, x_, dt_, A_, B_, C_, D_, z_, bias_, indices_, out_;
  StepTensors tensors_;
};

}  // namespace ssmtune::step
