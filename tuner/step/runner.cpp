// Decode-step launches.
#include "tuner/step/runner.h"

#include <algorithm>
#include <cstdint>

#include "jit/program_kernels.h"

namespace ssmtune::step {
namespace {

// Whether every row of `a` (all but its last dimension) starts on a vector
// of `vec` elements, aligned as the kernel's StepVec (its size, at most 16
// bytes), and the last dimension is contiguous.
bool rows_aligned(const TensorArg& a, int vec) {
  const auto bytes = std::min<uintptr_t>(
      16, static_cast<uintptr_t>(dtype_bytes(a.dtype)) * static_cast<uintptr_t>(vec));
  if (reinterpret_cast<uintptr_t>(a.data) % bytes != 0) return false;
  if (a.stride[a.rank - 1] != 1) return false;
  for (int i = 0; i + 1 < a.rank; ++i)
    if (a.stride[i] % vec != 0) return false;
  return true;
}

}  // namespace

ssmtune_kernels::SsmStepParams make_params(const StepProblem& p, const StepTensors& t,
                                           const StepConfig& c) {
  ssmtune_kernels::SsmStepParams k{};
  k.batch = static_cast<int>(p.batch);
  k.heads = static_cast<int>(p.heads);
  k.headdim = static_cast<int>(p.headdim);
  k.dstate = static_cast<int>(p.dstate);
  k.heads_per_group = static_cast<int>(p.heads / p.groups);
  k.state = const_cast<void*>(t.state.data);
  k.state_batch_stride = t.state.stride[0];
  k.state_head_stride = t.state.stride[1];
  k.state_dim_stride = t.state.stride[2];
  k.state_dstate_stride = t.state.stride[3];
  auto bhp = [](const TensorArg& a, long long& s0, long long& s1, long long& s2) {
    s0 = a.stride[0];
    s1 = a.stride[1];
    s2 = a.stride[2];
  };
  k.x = t.x.data;
  bhp(t.x, k.x_batch_stride, k.x_head_stride, k.x_dim_stride);
  k.dt = t.dt.data;
  bhp(t.dt, k.dt_batch_stride, k.dt_head_stride, k.dt_dim_stride);
  if (p.has_z) {
    k.z = t.z.data;
    bhp(t.z, k.z_batch_stride, k.z_head_stride, k.z_dim_stride);
  }
  k.out = const_cast<void*>(t.out.data);
  bhp(t.out, k.out_batch_stride, k.out_head_stride, k.out_dim_stride);
  k.A = static_cast<const float*>(t.A.data);
  bhp(t.A, k.A_head_stride, k.A_dim_stride, k.A_dstate_stride);
  k.B = t.B.data;
  bhp(t.B, k.B_batch_stride, k.B_group_stride, k.B_dstate_stride);
  k.C = t.C.data;
  bhp(t.C, k.C_batch_stride, k.C_group_stride, k.C_dstate_stride);
  if (p.has_d) {
    k.D = t.D.data;
    k.D_head_stride = t.D.stride[0];
    k.D_dim_stride = t.D.stride[1];
    k.D_in_dtype = t.D.dtype != DType::kF32 ? 1 : 0;
  }
  if (p.has_dt_bias) {
    k.dt_bias = t.dt_bias.data;
    k.dt_bias_head_stride = t.dt_bias.stride[0];
    k.dt_bias_dim_stride = t.dt_bias.stride[1];
    k.dt_bias_in_dtype = t.dt_bias.dtype != DType::kF32 ? 1 : 0;
  }
  if (p.has_indices) {
    k.state_indices = t.state_indices.data;
    k.indices_64 = t.state_indices.bytes == 8 ? 1 : 0;
  }
  k.state_vec = rows_aligned(t.state, c.vec) ? 1 : 0;
  k.a_vec = rows_aligned(t.A, c.vec) ? 1 : 0;
  return k;
}

Result<StepKernel> StepKernel::load(StepConfig config, StepPlan plan,
                                    const jit::CompiledProgram& program) {
  SSMTUNE_ASSIGN_OR_RETURN(jit::Module module, jit::Module::load(program.cubin));
  StepKernel k(config, std::move(plan), std::move(module));
  SSMTUNE_ASSIGN_OR_RETURN(jit::ProgramKernels found,
                           jit::find_kernels(k.module_, program, {k.plan_.kernel}));
  k.kernel_ = found.kernels.front();
  k.images_ = std::move(found.images);
  return k;
}

Status StepKernel::launch(const ssmtune_kernels::SsmStepParams& params, CUstream stream) const {
  return kernel_.launch(plan_.grid, plan_.block, 0, stream, params);
}

Result<StepKernel> build_step_kernel(jit::Compiler& compiler, const StepProblem& p,
                                     const StepConfig& c, const std::string& arch) {
  SSMTUNE_ASSIGN_OR_RETURN(StepPlan plan, plan_step(p, c));
  auto specs = jit::make_programs({plan.kernel}, 0, arch, "ssm_step");
  SSMTUNE_ASSIGN_OR_RETURN(jit::CompiledProgram program, compiler.compile(specs.at(0)));
  return StepKernel::load(c, std::move(plan), program);
}

}  // namespace ssmtune::step
