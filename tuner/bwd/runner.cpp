// Backward launches.
#include "tuner/bwd/runner.h"

#include <cstdint>

namespace ssmtune::bwd {

ssmtune_kernels::SsmBwdParams make_params(const BwdProblem& bp, const BwdTensors& t) {
  const FwdProblem& p = bp.fwd;
  ssmtune_kernels::SsmBwdParams k{};
  ssmtune_kernels::SsmFwdParams& f = k.f;
  f.batch = static_cast<int>(p.batch);
  f.dim = static_cast<int>(p.dim);
  f.seqlen = static_cast<int>(p.seqlen);
  f.dstate = static_cast<int>(p.dstate);
  f.groups = static_cast<int>(p.groups);
  f.dim_per_group = static_cast<int>(p.dim_per_group());
  f.u = t.u.data;
  f.u_batch_stride = t.u.stride[0];
  f.u_dim_stride = t.u.stride[1];
  f.delta = t.delta.data;
  f.delta_batch_stride = t.delta.stride[0];
  f.delta_dim_stride = t.delta.stride[1];
  f.A = static_cast<const float*>(t.A.data);
  f.A_dim_stride = t.A.stride[0];
  auto bc = [](const TensorArg& a, bool variable, long long& s0, long long& s1, long long& s2) {
    s0 = a.stride[0];  // variable: batch stride; constant: dim stride
    s1 = variable ? a.stride[1] : 0;
    s2 = variable ? a.stride[2] : 0;
  };
  f.B = t.B.data;
  bc(t.B, p.variable_b, f.B_batch_stride, f.B_group_stride, f.B_dstate_stride);
  f.C = t.C.data;
  bc(t.C, p.variable_c, f.C_batch_stride, f.C_group_stride, f.C_dstate_stride);
  f.D = p.has_d ? static_cast<const float*>(t.D.data) : nullptr;
  f.delta_bias = p.has_delta_bias ? static_cast<const float*>(t.delta_bias.data) : nullptr;
  if (p.has_z) {
    f.z = t.z.data;
    f.z_batch_stride = t.z.stride[0];
    f.z_dim_stride = t.z.stride[1];
    f.out = const_cast<void*>(t.out.data);
    f.out_batch_stride = t.out.stride[0];
    f.out_dim_stride = t.out.stride[1];
  }
  if (p.has_initial_state) {
    f.h0 = static_cast<const float*>(t.h0.data);
    f.h0_batch_stride = t.h0.stride[0];
    f.h0_dim_stride = t.h0.stride[1];
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
  bc(t.dB, p.variable_b, k.dB_batch_stride, k.dB_group_stride, k.dB_dstate_stride);
  k.dC = const_cast<void*>(t.dC.data);
  bc(t.dC, p.variable_c, k.dC_batch_stride, k.dC_group_stride, k.dC_dstate_stride);
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
  const auto es = static_cast<uintptr_t>(dtype_bytes(p.dtype));
  auto rows_vec4 = [es](const TensorArg& a, int strides) {
    if (reinterpret_cast<uintptr_t>(a.data) % (4 * es) != 0) return false;
    for (int i = 0; i < strides; ++i)
      if (a.stride[i] % 4 != 0) return false;
    return true;
  };
  bool vec4 = rows_vec4(t.u, 2) && rows_vec4(t.delta, 2) && rows_vec4(t.dout, 2) &&
              rows_vec4(t.du, 2) && rows_vec4(t.ddelta, 2);
  if (p.variable_b) vec4 = vec4 && rows_vec4(t.B, 3);
  if (p.variable_c) vec4 = vec4 && rows_vec4(t.C, 3);
  if (p.has_z) vec4 = vec4 && rows_vec4(t.z, 2) && rows_vec4(t.out, 2) && rows_vec4(t.dz, 2);
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
  for (const auto& inst : k.plan_.kernels) {
    const jit::KernelImage* image = program.find(inst.name_expression);
    if (image == nullptr) return Status::internal("compiled program lacks " + inst.name_expression);
    SSMTUNE_ASSIGN_OR_RETURN(jit::Kernel kernel, k.module_.kernel(image->lowered_name));
    k.kernels_.push_back(kernel);
    k.images_.push_back(*image);
  }
  for (const auto& l : k.plan_.launches)
    if (l.shared_bytes > 48 * 1024)
      SSMTUNE_RETURN_IF_ERROR(
          k.kernels_[l.kernel].set_max_dynamic_shared(static_cast<int>(l.shared_bytes)));
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
    SSMTUNE_RETURN_IF_ERROR(kernels_[launch.kernel].launch(launch.grid, launch.block,
                                                           launch.shared_bytes, stream, params));
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
