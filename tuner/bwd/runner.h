// Launching backward configs: BwdKernel is a config's kernels loaded from a
// compiled program and launched in its plan's order on one stream, with
// scratch from a BwdScratch reserved for that plan (sized by the layout the
// kernels index it with). BwdKernel is move-only and may launch from several
// threads with distinct BwdScratch objects; BwdScratch is not thread-safe.
#pragma once

#include <vector>

#include "jit/compiler.h"
#include "jit/device_buffer.h"
#include "jit/module.h"
#include "jit/program_kernels.h"
#include "ssm/bwd/bwd_params.cuh"
#include "tuner/bwd/plan.h"

namespace ssmtune::bwd {

// Kernel params from validated tensors (scratch fields left empty).
ssmtune_kernels::SsmBwdParams make_params(const BwdProblem& p, const BwdTensors& t);

class BwdScratch {
 public:
  // Grows (never shrinks) the buffer to the plan's layout.
  Status reserve(const BwdPlan& plan);
  CUdeviceptr base() const { return buf_.get(); }
  size_t bytes() const { return buf_.bytes(); }

 private:
  jit::DeviceBuffer buf_;
};

class BwdKernel {
 public:
  static Result<BwdKernel> load(BwdPlan plan, const jit::CompiledProgram& program);

  // Runs the config: the params' scratch fields are carved from `scratch`,
  // reserved here for this plan. saved_ckpt: chunk-start states already
  // computed for this plan's chunk (layout bwd_ckpt_index, AccT; e.g. kept
  // by the forward), read instead of recomputed; null: computed here.
  Status launch(ssmtune_kernels::SsmBwdParams params, CUstream stream, BwdScratch& scratch,
                const void* saved_ckpt = nullptr) const;
  // The same with caller-owned scratch: `scratch` of plan().scratch.bytes
  // bytes, 256-aligned, used in stream order. Enqueues kernels only (no
  // allocation, no synchronisation): safe in graph capture.
  Status launch_on(ssmtune_kernels::SsmBwdParams params, CUstream stream, CUdeviceptr scratch,
                   const void* saved_ckpt = nullptr) const;

  const BwdPlan& plan() const { return plan_; }
  const std::vector<jit::KernelImage>& images() const { return loaded_.images; }

 private:
  BwdKernel(BwdPlan plan, jit::Module module)
      : plan_(std::move(plan)), module_(std::move(module)) {}
  BwdPlan plan_;
  jit::Module module_;
  jit::ProgramKernels loaded_;
};

// Compiles (through the compiler's cache) and loads one config.
Result<BwdKernel> build_bwd_kernel(jit::Compiler& compiler, const BwdProblem& p, const BwdConfig& c,
                                   const std::string& arch, size_t max_shared_bytes);

}  // namespace ssmtune::bwd
