// Backward launches.
#include "tuner/bwd/runner.h"

#include <cstdint>

#include "tuner/scan_params.h"

namespace ssmtune::bwd {

ssmtune_kernels::SsmBwdParams make_params(const BwdProblem& bp, const BwdTensors& t) {
  const FwdProblem& p = bp.fwd;
  ssmtune_kernels::SsmBwdParams k{};
  ssmtune_kernels::SsmFwdParams& f = k.f;
  const ScanInputs in = scan_inputs(t);
  fill_scan_inputs(p, in, f);
  if (p.has_z) {  // the forward's output: the gate's gradient reads it
    f.out = const_cast<void*>(t.out.data);
    f.out_batch_stride = t.out.stride[0];
    f.out_dim_stride = t.out.stride[1];
  }
  k.dout = t.dout.data;
  k.dout_batch_stride = t.dout.stride[0];
  k.dout_dim_stride = t.dout.stride[1];
  if (bp.has_dlast) {
    k.dlast = static_cast<const float*>(t.dlast.data);
    k.dlast_batch_stride = t.dlast.stride[0];
    k.dlast_dim_stride = t.dlast.stride[1];
  }
  k.du = const_cast<void*>(t.du.data);
  k.du_batch_stride = t.du.stride[0];
  k.du_dim_stride = t.du.stride[1];
  k.ddelta = const_cast<void*>(t.ddelta.data);
  k.ddelta_batch_stride = t.ddelta.stride[0];
  k.ddelta_dim_stride = t.ddelta.stride[1];
  if (p.has_z) {
    k.dz = const_cast<void*>(t.dz.data);
    k.dz_batch_stride = t.dz.stride[0];
    k.dz_dim_stride = t.dz.stride[1];
  }
  k.dB = const_cast<void*>(t.dB.data);
  bc_strides(t.dB, p.variable_b, k.dB_batch_stride, k.dB_group_stride, k.dB_dstate_stride);
  k.dC = const_cast<void*>(t.dC.data);
  bc_strides(t.dC, p.variable_c, k.dC_batch_stride, k.dC_group_stride, k.dC_dstate_stride);
  k.dA = static_cast<float*>(const_cast<void*>(t.dA.data));
  k.dA_dim_stride = t.dA.stride[0];
  if (p.has_d) k.dD = static_cast<float*>(const_cast<void*>(t.dD.data));
  if (p.has_delta_bias) k.ddelta_bias = static_cast<float*>(const_cast<void*>(t.ddelta_bias.data));
  if (p.has_initial_state) {
    k.dh0 = static_cast<float*>(const_cast<void*>(t.dh0.data));
    k.dh0_batch_stride = t.dh0.stride[0];
    k.dh0_dim_stride = t.dh0.stride[1];
  }
  // Vector rows: every time-contiguous row read or written starts on a
  // multiple of 4 elements.
  bool vec4 = inputs_vec4(p, in) && rows_vec4(t.dout, 2, p.dtype) && rows_vec4(t.du, 2, p.dtype) &&
              rows_vec4(t.ddelta, 2, p.dtype);
  if (p.has_z) vec4 = vec4 && rows_vec4(t.out, 2, p.dtype) && rows_vec4(t.dz, 2, p.dtype);
  f.vec4 = vec4 ? 1 : 0;
  return k;
}

Status BwdScratch::reserve(const BwdPlan& plan) {
  const size_t need = static_cast<size_t>(plan.scratch.bytes);
  if (need > buf_.bytes()) {
    buf_ = jit::DeviceBuffer();  // free first: the peak is the larger buffer, not both
    SSMTUNE_ASSIGN_OR_RETURN(buf_, jit::DeviceBuffer::allocate(need));
  }
  return Status::ok();
}

Result<BwdKernel> BwdKernel::load(BwdPlan plan, const jit::CompiledProgram& program) {
  SSMTUNE_ASSIGN_OR_RETURN(jit::Module module, jit::Module::load(program.cubin));
  BwdKernel k(std::move(plan), std::move(module));
  SSMTUNE_ASSIGN_OR_RETURN(k.loaded_, jit::load_plan_kernels(k.module_, program, k.plan_));
  return k;
}

Status BwdKernel::launch(ssmtune_kernels::SsmBwdParams params, CUstream stream, BwdScratch& scratch,
                         const void* saved_ckpt) const {
  SSMTUNE_RETURN_IF_ERROR(scratch.reserve(plan_));
  return launch_on(params, stream, scratch.base(), saved_ckpt);
}

Status BwdKernel::launch_on(ssmtune_kernels::SsmBwdParams params, CUstream stream,
                            CUdeviceptr scratch, const void* saved_ckpt) const {
  const auto& l = plan_.scratch;
  char* base = reinterpret_cast<char*>(scratch);
  params.ckpt = saved_ckpt != nullptr ? const_cast<void*>(saved_ckpt) : base + l.ckpt;
  params.ckpt_ready = saved_ckpt != nullptr ? 1 : 0;
  params.carries = base + l.carries;
  params.part_b = reinterpret_cast<float*>(base + l.part_b);
  params.part_c = reinterpret_cast<float*>(base + l.part_c);
  params.part_a = reinterpret_cast<float*>(base + l.part_a);
  params.part_d = reinterpret_cast<float*>(base + l.part_d);
  params.part_bias = reinterpret_cast<float*>(base + l.part_bias);
  params.part_sb = base + l.part_sb;
  params.part_sa = base + l.part_sa;
  params.n_chunks = plan_.n_chunks;
  params.tiles_per_group = plan_.tiles_per_group;
  params.segments = plan_.segments;
  params.seg_chunks = plan_.seg_chunks;
  params.bias_slices = plan_.bias_slices;
  for (const auto& launch : plan_.launches)
    SSMTUNE_RETURN_IF_ERROR(loaded_.kernels[launch.kernel].launch(
        launch.grid, launch.block, launch.shared_bytes, stream, params));
  return Status::ok();
}

Result<BwdKernel> build_bwd_kernel(jit::Compiler& compiler, const BwdProblem& p, const BwdConfig& c,
                                   const std::string& arch, size_t max_shared_bytes) {
  SSMTUNE_ASSIGN_OR_RETURN(BwdPlan plan, plan_bwd(p, c, max_shared_bytes));
  auto specs = jit::make_programs(plan.kernels, 0, arch, "ssm_bwd");
  SSMTUNE_ASSIGN_OR_RETURN(jit::CompiledProgram program, compiler.compile(specs.at(0)));
  return BwdKernel::load(std::move(plan), program);
}

}  // namespace ssmtune::bwd
