// Device copies of a decode-step problem's tensors.
#include "tuner/step/device_problem.h"

#include "jit/driver.h"
#include "tuner/device_tensors.h"

namespace ssmtune::step {

Result<StepDeviceProblem> StepDeviceProblem::upload(const StepHostInputs& in) {
  const StepProblem& p = in.problem;
  SSMTUNE_RETURN_IF_ERROR(p.validate());
  StepDeviceProblem dp;
  dp.problem_ = p;
  const DType io = p.dtype, f32 = DType::kF32;
  const std::vector<int64_t> bhp = {p.batch, p.heads, p.headdim};
  const std::vector<int64_t> hp = {p.heads, p.headdim};
  const std::vector<int64_t> bgn = {p.batch, p.groups, p.dstate};
  StepTensors& t = dp.tensors_;
  SSMTUNE_ASSIGN_OR_RETURN(dp.state0_, upload_values(in.state, p.state_dtype));
  SSMTUNE_ASSIGN_OR_RETURN(dp.state_, upload_values(in.state, p.state_dtype));
  t.state = describe(dp.state_, p.state_dtype, {in.rows, p.heads, p.headdim, p.dstate});
  SSMTUNE_ASSIGN_OR_RETURN(dp.x_, upload_values(in.x, io));
  t.x = describe(dp.x_, io, bhp);
  SSMTUNE_ASSIGN_OR_RETURN(dp.dt_, upload_values(in.dt, io));
  t.dt = describe(dp.dt_, io, bhp);
  SSMTUNE_ASSIGN_OR_RETURN(dp.A_, upload_values(in.A, f32));
  t.A = describe(dp.A_, f32, {p.heads, p.headdim, p.dstate});
  SSMTUNE_ASSIGN_OR_RETURN(dp.B_, upload_values(in.B, io));
  t.B = describe(dp.B_, io, bgn);
  SSMTUNE_ASSIGN_OR_RETURN(dp.C_, upload_values(in.C, io));
  t.C = describe(dp.C_, io, bgn);
  if (p.has_d) {
    SSMTUNE_ASSIGN_OR_RETURN(dp.D_, upload_values(in.D, f32));
    t.D = describe(dp.D_, f32, hp);
  }
  if (p.has_z) {
    SSMTUNE_ASSIGN_OR_RETURN(dp.z_, upload_values(in.z, io));
    t.z = describe(dp.z_, io, bhp);
  }
  if (p.has_dt_bias) {
    SSMTUNE_ASSIGN_OR_RETURN(dp.bias_, upload_values(in.dt_bias, f32));
    t.dt_bias = describe(dp.bias_, f32, hp);
  }
  if (p.has_indices) {
    SSMTUNE_ASSIGN_OR_RETURN(dp.indices_,
                             jit::DeviceBuffer::allocate(in.indices.size() * sizeof(int64_t)));
    SSMTUNE_RETURN_IF_ERROR(dp.indices_.upload(in.indices));
    t.state_indices.data = reinterpret_cast<const void*>(dp.indices_.get());
    t.state_indices.bytes = 8;
    t.state_indices.size = p.batch;
  }
  SSMTUNE_ASSIGN_OR_RETURN(dp.out_, jit::DeviceBuffer::allocate(
                                        static_cast<size_t>(p.batch * p.dim() * dtype_bytes(io))));
  t.out = describe(dp.out_, io, bhp);
  SSMTUNE_RETURN_IF_ERROR(validate_step_tensors(p, t).with_context("uploaded problem"));
  return dp;
}

Status StepDeviceProblem::reset(CUstream stream) const {
  SSMTUNE_ASSIGN_OR_RETURN(const jit::Driver* d, jit::Driver::get());
  const jit::Driver& drv = *d;
  SSMTUNE_CU(drv.cuMemcpyDtoDAsync(state_.get(), state0_.get(), state_.bytes(), stream));
  return fill_pattern(out_, problem_.dtype, stream);
}

Result<std::vector<unsigned char>> StepDeviceProblem::download_out() const {
  return bytes_of(out_);
}

Result<std::vector<unsigned char>> StepDeviceProblem::download_state() const {
  return bytes_of(state_);
}

}  // namespace ssmtune::step
