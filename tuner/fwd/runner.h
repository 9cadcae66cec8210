// Launching forward configs: FwdKernel is a config's kernels loaded from a
// compiled program, launched in its plan's order on one stream with scratch
// from an FwdScratch sized for the config actually launched (so a caller can
// never hand a kernel buffers sized for another chunk length).
// FwdKernel is move-only and may be launched from several threads at once
// with distinct FwdScratch objects; FwdScratch is not thread-safe.
#pragma once

#include <vector>

#include "jit/compiler.h"
#include "jit/device_buffer.h"
#include "jit/module.h"
#include "jit/program_kernels.h"
#include "ssm/fwd_params.cuh"
#include "tuner/fwd/plan.h"

namespace ssmtune {

// Kernel params from validated tensors (scratch fields left empty).
ssmtune_kernels::SsmFwdParams make_params(const FwdProblem& p, const FwdTensors& t);

class FwdScratch {
 public:
  // Grows (never shrinks) the buffers to the plan's needs.
  Status reserve(const FwdPlan& plan);
  CUdeviceptr carries() const { return carries_.get(); }
  CUdeviceptr flags() const { return flags_.get(); }

 private:
  jit::DeviceBuffer carries_, flags_;
};

class FwdKernel {
 public:
  // Loads `program` (which must hold every kernel of `plan`) into the
  // current context.
  static Result<FwdKernel> load(FwdPlan plan, const jit::CompiledProgram& program);

  // Runs the config: params' scratch fields are filled from `scratch`,
  // reserved here for this plan.
  Status launch(ssmtune_kernels::SsmFwdParams params, CUstream stream, FwdScratch& scratch) const;
  // The same with caller-owned scratch: `carries` of plan().carries_bytes
  // and `flags` of plan().flags_bytes (either 0 when the plan needs none).
  // Enqueues only (kernels and the flags' memset): safe in graph capture.
  Status launch_on(ssmtune_kernels::SsmFwdParams params, CUstream stream, CUdeviceptr carries,
                   CUdeviceptr flags) const;

  const FwdPlan& plan() const { return plan_; }
  const std::vector<jit::KernelImage>& images() const { return loaded_.images; }

 private:
  FwdKernel(FwdPlan plan, jit::Module module)
      : plan_(std::move(plan)), module_(std::move(module)) {}
  FwdPlan plan_;
  jit::Module module_;
  jit::ProgramKernels loaded_;
};

// The NVRTC option that compiles a forward's saving variant: its output
// passes write SsmFwdParams::states (ssm/fwd_chunk.cuh StateSink), which
// the plain kernels do not even test for.
inline constexpr const char* kSavesStatesOption = "-DSSMTUNE_FWD_SAVES_STATES=1";

// Compiles (through the compiler's cache) and loads one config; with
// saves_states, its saving variant (the training forward's).
Result<FwdKernel> build_fwd_kernel(jit::Compiler& compiler, const FwdProblem& p, const FwdConfig& c,
                                   const std::string& arch, size_t max_shared_bytes,
                                   bool saves_states = false);

}  // namespace ssmtune
