// Device copies of a problem's tensors.
#include "tuner/fwd/device_problem.h"

#include "tuner/device_tensors.h"

namespace ssmtune {

Result<FwdDeviceProblem> FwdDeviceProblem::upload(const FwdHostInputs& in) {
  const FwdProblem& p = in.problem;
  SSMTUNE_RETURN_IF_ERROR(p.validate());
  FwdDeviceProblem dp;
  dp.problem_ = p;
  const DType f32 = DType::kF32, io = p.dtype;
  const DType bdt = p.variable_b ? io : f32, cdt = p.variable_c ? io : f32;
  SSMTUNE_ASSIGN_OR_RETURN(dp.u_, upload_values(in.u, io));
  SSMTUNE_ASSIGN_OR_RETURN(dp.delta_, upload_values(in.delta, io));
  SSMTUNE_ASSIGN_OR_RETURN(dp.A_, upload_values(in.A, f32));
  SSMTUNE_ASSIGN_OR_RETURN(dp.B_, upload_values(in.B, bdt));
  SSMTUNE_ASSIGN_OR_RETURN(dp.C_, upload_values(in.C, cdt));
  const std::vector<int64_t> bdl = {p.batch, p.dim, p.seqlen};
  const std::vector<int64_t> bc_var = {p.batch, p.groups, p.dstate, p.seqlen};
  const std::vector<int64_t> bc_const = {p.dim, p.dstate};
  const std::vector<int64_t> states = {p.batch, p.dim, p.dstate};
  FwdTensors& t = dp.tensors_;
  t.u = describe(dp.u_, io, bdl);
  t.delta = describe(dp.delta_, io, bdl);
  t.A = describe(dp.A_, f32, {p.dim, p.dstate});
  t.B = describe(dp.B_, bdt, p.variable_b ? bc_var : bc_const);
  t.C = describe(dp.C_, cdt, p.variable_c ? bc_var : bc_const);
  if (p.has_d) {
    SSMTUNE_ASSIGN_OR_RETURN(dp.D_, upload_values(in.D, f32));
    t.D = describe(dp.D_, f32, {p.dim});
  }
  if (p.has_delta_bias) {
    SSMTUNE_ASSIGN_OR_RETURN(dp.bias_, upload_values(in.delta_bias, f32));
    t.delta_bias = describe(dp.bias_, f32, {p.dim});
  }
  if (p.has_initial_state) {
    SSMTUNE_ASSIGN_OR_RETURN(dp.h0_, upload_values(in.h0, f32));
    t.h0 = describe(dp.h0_, f32, states);
  }
  const size_t n = static_cast<size_t>(p.batch * p.dim * p.seqlen);
  SSMTUNE_ASSIGN_OR_RETURN(dp.out_, jit::DeviceBuffer::allocate(n * dtype_bytes(io)));
  t.out = describe(dp.out_, io, bdl);
  if (p.has_z) {
    SSMTUNE_ASSIGN_OR_RETURN(dp.z_, upload_values(in.z, io));
    t.z = describe(dp.z_, io, bdl);
    SSMTUNE_ASSIGN_OR_RETURN(dp.out_z_, jit::DeviceBuffer::allocate(n * dtype_bytes(io)));
    t.out_z = describe(dp.out_z_, io, bdl);
  }
  if (p.return_last_state) {
    SSMTUNE_ASSIGN_OR_RETURN(
        dp.last_, jit::DeviceBuffer::allocate(sizeof(float) * p.batch * p.dim * p.dstate));
    t.last_state = describe(dp.last_, f32, states);
  }
  SSMTUNE_RETURN_IF_ERROR(validate_fwd_tensors(p, t).with_context("uploaded problem"));
  return dp;
}

Status FwdDeviceProblem::poison_outputs(CUstream stream) const {
  SSMTUNE_RETURN_IF_ERROR(fill_pattern(out_, problem_.dtype, stream));
  SSMTUNE_RETURN_IF_ERROR(fill_pattern(out_z_, problem_.dtype, stream));
  return fill_pattern(last_, DType::kF32, stream);
}

size_t FwdDeviceProblem::output_elements() const {
  return static_cast<size_t>(problem_.batch * problem_.dim * problem_.seqlen);
}

Result<std::vector<unsigned char>> FwdDeviceProblem::download_out() const {
  std::vector<unsigned char> v(out_.bytes());
  SSMTUNE_RETURN_IF_ERROR(out_.download(v.data(), v.size()));
  return v;
}

Result<std::vector<unsigned char>> FwdDeviceProblem::download_out_z() const {
  std::vector<unsigned char> v(out_z_.bytes());
  SSMTUNE_RETURN_IF_ERROR(out_z_.download(v.data(), v.size()));
  return v;
}

Result<std::vector<float>> FwdDeviceProblem::download_last_state() const {
  std::vector<float> v(last_.bytes() / sizeof(float));
  SSMTUNE_RETURN_IF_ERROR(last_.download(v.data(), last_.bytes()));
  return v;
}

Status FwdDeviceProblem::download_outputs(std::vector<unsigned char>& out,
                                          std::vector<unsigned char>& out_z,
                                          std::vector<float>& last_state) const {
  out.resize(out_.bytes());
  SSMTUNE_RETURN_IF_ERROR(out_.download(out.data(), out.size()));
  out_z.resize(out_z_.bytes());
  SSMTUNE_RETURN_IF_ERROR(out_z_.download(out_z.data(), out_z.size()));
  last_state.resize(last_.bytes() / sizeof(float));
  return last_.download(last_state.data(), last_.bytes());
}

}  // namespace ssmtune
