// The fp64 backward reference computed on the GPU
// (templates/ssm/bwd/bwd_reference.cuh), for shapes too large for the CPU
// reference: uploads the rounded inputs and incoming gradients as doubles,
// runs, downloads every gradient in fp64. Deterministic (no atomics).
#pragma once

#include <cstddef>
#include <vector>

#include "jit/compiler.h"
#include "jit/device.h"
#include "jit/program_builder.h"
#include "ssm/bwd/bwd_reference_params.cuh"
#include "tuner/bwd/reference_cpu.h"

namespace ssmtune::bwd {

// The reference's two kernels (units, then reduce), for compiling.
std::vector<jit::Instantiation> reference_gpu_instantiations();

// Channels per work unit (one thread each): the fewest that keep the
// scratch within `scratch_limit_bytes`, so that as many threads as possible
// run; at most dim / groups.
int reference_gpu_slice(const FwdProblem& p, size_t scratch_limit_bytes);
// Scratch bytes the reference allocates for `slice` (besides the inputs
// and the gradients themselves).
size_t reference_gpu_scratch_bytes(const FwdProblem& p, int slice);

// The reference kernels' sizes and flags for `p` with units of `slice`
// channels (slices a (batch, group), units in all); every pointer null.
ssmtune_kernels::BwdRefParams reference_gpu_params(const FwdProblem& p, bool has_dlast, int slice);

// Same contract as reference_backward_cpu (layouts, empty tensors); sizes
// that do not match in.problem give kInvalidArgument. A context must be
// current. scratch_limit_bytes 0: an eighth of the device's memory, within
// [256 MiB, 8 GiB] (tests pass small limits to make units of many channels).
Result<BwdHostGrads> reference_backward_gpu(const FwdHostInputs& in,
                                            const std::vector<double>& dout,
                                            const std::vector<double>& dlast,
                                            const jit::DeviceInfo& device, jit::Compiler& compiler,
                                            CUstream stream, size_t scratch_limit_bytes = 0);

}  // namespace ssmtune::bwd
