// Forward launches.
#include "tuner/fwd/runner.h"

#include <cstdint>

#include "jit/driver.h"
#include "tuner/scan_params.h"

namespace ssmtune {

ssmtune_kernels::SsmFwdParams make_params(const FwdProblem& p, const FwdTensors& t) {
  ssmtune_kernels::SsmFwdParams k{};
  const ScanInputs in = scan_inputs(t);
  fill_scan_inputs(p, in, k);
  if (p.has_z) {
    k.out_z = const_cast<void*>(t.out_z.data);
    k.out_z_batch_stride = t.out_z.stride[0];
    k.out_z_dim_stride = t.out_z.stride[1];
  }
  k.out = const_cast<void*>(t.out.data);
  k.out_batch_stride = t.out.stride[0];
  k.out_dim_stride = t.out.stride[1];
  // Vector rows: every row start of the time-contiguous tensors is a
  // multiple of 4 elements.
  bool vec4 = inputs_vec4(p, in) && rows_vec4(t.out, 2, p.dtype);
  if (p.has_z) vec4 = vec4 && rows_vec4(t.out_z, 2, p.dtype);
  k.vec4 = vec4 ? 1 : 0;
  const auto es = static_cast<uintptr_t>(dtype_bytes(p.dtype));
  // 16-byte rows (the pipelined kernel's copies): the inputs it copies.
  auto rows_16b = [es](const TensorArg& a, int strides) {
    if (reinterpret_cast<uintptr_t>(a.data) % 16 != 0) return false;
    for (int i = 0; i < strides; ++i)
      if (static_cast<uintptr_t>(a.stride[i]) * es % 16 != 0) return false;
    return true;
  };
  bool align16 = rows_16b(t.u, 2) && rows_16b(t.delta, 2);
  if (p.variable_b) align16 = align16 && rows_16b(t.B, 3);
  if (p.variable_c) align16 = align16 && rows_16b(t.C, 3);
  if (p.has_z) align16 = align16 && rows_16b(t.z, 2);
  k.align16 = align16 ? 1 : 0;
  if (p.return_last_state) {
    k.last_state = static_cast<float*>(const_cast<void*>(t.last_state.data));
    k.last_state_batch_stride = t.last_state.stride[0];
    k.last_state_dim_stride = t.last_state.stride[1];
  }
  return k;
}

Status FwdScratch::reserve(const FwdPlan& plan) {
  if (plan.carries_bytes > carries_.bytes()) {
    carries_ = jit::DeviceBuffer();  // free first: the peak is the larger buffer, not both
    SSMTUNE_ASSIGN_OR_RETURN(carries_, jit::DeviceBuffer::allocate(plan.carries_bytes));
  }
  if (plan.flags_bytes > flags_.bytes()) {
    flags_ = jit::DeviceBuffer();
    SSMTUNE_ASSIGN_OR_RETURN(flags_, jit::DeviceBuffer::allocate(plan.flags_bytes));
  }
  return Status::ok();
}

Result<FwdKernel> FwdKernel::load(FwdPlan plan, const jit::CompiledProgram& program) {
  SSMTUNE_ASSIGN_OR_RETURN(jit::Module module, jit::Module::load(program.cubin));
  FwdKernel k(std::move(plan), std::move(module));
  SSMTUNE_ASSIGN_OR_RETURN(k.loaded_, jit::load_plan_kernels(k.module_, program, k.plan_));
  return k;
}

Status FwdKernel::launch(ssmtune_kernels::SsmFwdParams params, CUstream stream,
                         FwdScratch& scratch) const {
  SSMTUNE_RETURN_IF_ERROR(scratch.reserve(plan_));
  return launch_on(params, stream, scratch.carries(), scratch.flags());
}

Status FwdKernel::launch_on(ssmtune_kernels::SsmFwdParams params, CUstream stream,
                            CUdeviceptr carries, CUdeviceptr flags) const {
  params.n_chunks = plan_.n_chunks;
  params.segments = plan_.segments;
  params.seg_chunks = plan_.seg_chunks;
  params.carries = reinterpret_cast<void*>(carries);
  if (plan_.flags_bytes != 0) {
    params.flags = reinterpret_cast<unsigned*>(flags);
    params.tile_counter = params.flags + (plan_.flags_bytes / sizeof(unsigned) - 1);
    SSMTUNE_ASSIGN_OR_RETURN(const jit::Driver* d, jit::Driver::get());
    const jit::Driver& drv = *d;
    SSMTUNE_CU(drv.cuMemsetD32Async(flags, 0, plan_.flags_bytes / sizeof(unsigned), stream));
  }
  for (const auto& l : plan_.launches)
    SSMTUNE_RETURN_IF_ERROR(
        loaded_.kernels[l.kernel].launch(l.grid, l.block, l.shared_bytes, stream, params));
  return Status::ok();
}

Result<FwdKernel> build_fwd_kernel(jit::Compiler& compiler, const FwdProblem& p, const FwdConfig& c,
                                   const std::string& arch, size_t max_shared_bytes,
                                   bool saves_states) {
  SSMTUNE_ASSIGN_OR_RETURN(FwdPlan plan, plan_fwd(p, c, max_shared_bytes));
  auto specs =
      jit::make_programs(plan.kernels, 0, arch, saves_states ? "ssm_fwd_states" : "ssm_fwd");
  if (saves_states) specs.at(0).extra_options.push_back(kSavesStatesOption);
  SSMTUNE_ASSIGN_OR_RETURN(jit::CompiledProgram program, compiler.compile(specs.at(0)));
  return FwdKernel::load(std::move(plan), program);
}

}  // namespace ssmtune
