// The fp64 reference computed on the GPU (templates/ssm/fwd_reference.cuh)
// from the same device inputs the candidates read: for shapes too large for
// the CPU reference. Returns out (y with D*u), out_z and last_state in fp64.
#pragma once

#include "jit/compiler.h"
#include "tuner/fwd/device_problem.h"
#include "tuner/fwd/reference_cpu.h"

namespace ssmtune {

Result<FwdHostOutputs> reference_fwd_gpu(jit::Compiler& compiler, const std::string& arch,
                                         const FwdDeviceProblem& dp, CUstream stream);

}  // namespace ssmtune
