// Device copies of a backward problem's tensors.
#include "tuner/bwd/device_problem.h"

#include "tuner/device_tensors.h"

namespace ssmtune::bwd {
namespace {

Result<jit::DeviceBuffer> allocate(size_t elements, DType dtype) {
  return jit::DeviceBuffer::allocate(elements * dtype_bytes(dtype));
}

}  // namespace

Result<BwdDeviceProblem> BwdDeviceProblem::upload(const FwdHostInputs& in, bool has_dlast,
                                                  const std::vector<double>& y,
                                                  const std::vector<double>& dout,
                                                  const std::vector<double>& dlast,
                                                  int64_t u_batch_stride) {
  const FwdProblem& p = in.problem;
  BwdDeviceProblem dp;
  dp.problem_.fwd = p;
  dp.problem_.has_dlast = has_dlast;
  SSMTUNE_RETURN_IF_ERROR(dp.problem_.validate());
  const DType f32 = DType::kF32, io = p.dtype;
  const DType bdt = p.variable_b ? io : f32, cdt = p.variable_c ? io : f32;
  const int64_t row = p.dim * p.seqlen;
  const size_t n = static_cast<size_t>(p.batch * row);
  const size_t ns = static_cast<size_t>(p.batch * p.dim * p.dstate);
  if (dout.size() != n)
    return Status::invalid_argument("dout: expected batch * dim * seqlen values");
  if (p.has_z && y.size() != n)
    return Status::invalid_argument("y: expected batch * dim * seqlen values");
  if (has_dlast && dlast.size() != ns)
    return Status::invalid_argument("dlast: expected batch * dim * dstate values");
  if (u_batch_stride != 0 && u_batch_stride < row)
    return Status::invalid_argument("u_batch_stride below dim * seqlen");
  const std::vector<int64_t> bdl = {p.batch, p.dim, p.seqlen};
  const std::vector<int64_t> bc_var = {p.batch, p.groups, p.dstate, p.seqlen};
  const std::vector<int64_t> bc_const = {p.dim, p.dstate};
  const std::vector<int64_t> states = {p.batch, p.dim, p.dstate};
  BwdTensors& t = dp.tensors_;
  if (u_batch_stride == 0) {
    SSMTUNE_ASSIGN_OR_RETURN(dp.u_, upload_values(in.u, io));
    t.u = describe(dp.u_, io, bdl);
  } else {  // batch b's rows at b * u_batch_stride
    const size_t es = dtype_bytes(io);
    SSMTUNE_ASSIGN_OR_RETURN(
        dp.u_, allocate(static_cast<size_t>((p.batch - 1) * u_batch_stride + row), io));
    for (int64_t b = 0; b < p.batch; ++b) {
      const std::vector<double> part(in.u.begin() + b * row, in.u.begin() + (b + 1) * row);
      const auto bytes = encode(part, io);
      SSMTUNE_RETURN_IF_ERROR(
          dp.u_.upload(bytes.data(), bytes.size(), static_cast<size_t>(b * u_batch_stride) * es));
    }
    t.u = describe(dp.u_, io, bdl);
    t.u.stride[0] = u_batch_stride;
  }
  SSMTUNE_ASSIGN_OR_RETURN(dp.delta_, upload_values(in.delta, io));
  SSMTUNE_ASSIGN_OR_RETURN(dp.A_, upload_values(in.A, f32));
  SSMTUNE_ASSIGN_OR_RETURN(dp.B_, upload_values(in.B, bdt));
  SSMTUNE_ASSIGN_OR_RETURN(dp.C_, upload_values(in.C, cdt));
  SSMTUNE_ASSIGN_OR_RETURN(dp.dout_, upload_values(dout, io));
  t.delta = describe(dp.delta_, io, bdl);
  t.A = describe(dp.A_, f32, {p.dim, p.dstate});
  t.B = describe(dp.B_, bdt, p.variable_b ? bc_var : bc_const);
  t.C = describe(dp.C_, cdt, p.variable_c ? bc_var : bc_const);
  t.dout = describe(dp.dout_, io, bdl);
  SSMTUNE_ASSIGN_OR_RETURN(dp.du_, allocate(n, io));
  SSMTUNE_ASSIGN_OR_RETURN(dp.ddelta_, allocate(n, io));
  SSMTUNE_ASSIGN_OR_RETURN(dp.dA_, allocate(static_cast<size_t>(p.dim * p.dstate), f32));
  const size_t nbc = static_cast<size_t>(p.batch * p.groups * p.dstate * p.seqlen);
  const size_t nconst = static_cast<size_t>(p.dim * p.dstate);
  SSMTUNE_ASSIGN_OR_RETURN(dp.dB_, allocate(p.variable_b ? nbc : nconst, bdt));
  SSMTUNE_ASSIGN_OR_RETURN(dp.dC_, allocate(p.variable_c ? nbc : nconst, cdt));
  t.du = describe(dp.du_, io, bdl);
  t.ddelta = describe(dp.ddelta_, io, bdl);
  t.dA = describe(dp.dA_, f32, {p.dim, p.dstate});
  t.dB = describe(dp.dB_, bdt, p.variable_b ? bc_var : bc_const);
  t.dC = describe(dp.dC_, cdt, p.variable_c ? bc_var : bc_const);
  if (p.has_d) {
    SSMTUNE_ASSIGN_OR_RETURN(dp.D_, upload_values(in.D, f32));
    SSMTUNE_ASSIGN_OR_RETURN(dp.dD_, allocate(static_cast<size_t>(p.dim), f32));
    t.D = describe(dp.D_, f32, {p.dim});
    t.dD = describe(dp.dD_, f32, {p.dim});
  }
  if (p.has_delta_bias) {
    SSMTUNE_ASSIGN_OR_RETURN(dp.bias_, upload_values(in.delta_bias, f32));
    SSMTUNE_ASSIGN_OR_RETURN(dp.dbias_, allocate(static_cast<size_t>(p.dim), f32));
    t.delta_bias = describe(dp.bias_, f32, {p.dim});
    t.ddelta_bias = describe(dp.dbias_, f32, {p.dim});
  }
  if (p.has_initial_state) {
    SSMTUNE_ASSIGN_OR_RETURN(dp.h0_, upload_values(in.h0, f32));
    SSMTUNE_ASSIGN_OR_RETURN(dp.dh0_, allocate(ns, f32));
    t.h0 = describe(dp.h0_, f32, states);
    t.dh0 = describe(dp.dh0_, f32, states);
  }
  if (p.has_z) {
    SSMTUNE_ASSIGN_OR_RETURN(dp.z_, upload_values(in.z, io));
    SSMTUNE_ASSIGN_OR_RETURN(dp.out_, upload_values(y, io));
    SSMTUNE_ASSIGN_OR_RETURN(dp.dz_, allocate(n, io));
    t.z = describe(dp.z_, io, bdl);
    t.out = describe(dp.out_, io, bdl);
    t.dz = describe(dp.dz_, io, bdl);
  }
  if (has_dlast) {
    SSMTUNE_ASSIGN_OR_RETURN(dp.dlast_, upload_values(dlast, f32));
    t.dlast = describe(dp.dlast_, f32, states);
  }
  SSMTUNE_RETURN_IF_ERROR(
      validate_bwd_tensors(dp.problem_, t).with_context("uploaded backward problem"));
  return dp;
}

Status BwdDeviceProblem::poison_outputs(CUstream stream) const {
  const FwdProblem& p = problem_.fwd;
  const DType io = p.dtype, f32 = DType::kF32;
  SSMTUNE_RETURN_IF_ERROR(fill_pattern(du_, io, stream));
  SSMTUNE_RETURN_IF_ERROR(fill_pattern(ddelta_, io, stream));
  SSMTUNE_RETURN_IF_ERROR(fill_pattern(dz_, io, stream));
  SSMTUNE_RETURN_IF_ERROR(fill_pattern(dA_, f32, stream));
  SSMTUNE_RETURN_IF_ERROR(fill_pattern(dB_, p.variable_b ? io : f32, stream));
  SSMTUNE_RETURN_IF_ERROR(fill_pattern(dC_, p.variable_c ? io : f32, stream));
  SSMTUNE_RETURN_IF_ERROR(fill_pattern(dD_, f32, stream));
  SSMTUNE_RETURN_IF_ERROR(fill_pattern(dbias_, f32, stream));
  return fill_pattern(dh0_, f32, stream);
}

Result<DeviceGradBytes> BwdDeviceProblem::download() const {
  DeviceGradBytes g;
  SSMTUNE_ASSIGN_OR_RETURN(g.du, bytes_of(du_));
  SSMTUNE_ASSIGN_OR_RETURN(g.ddelta, bytes_of(ddelta_));
  SSMTUNE_ASSIGN_OR_RETURN(g.dA, bytes_of(dA_));
  SSMTUNE_ASSIGN_OR_RETURN(g.dB, bytes_of(dB_));
  SSMTUNE_ASSIGN_OR_RETURN(g.dC, bytes_of(dC_));
  SSMTUNE_ASSIGN_OR_RETURN(g.dD, bytes_of(dD_));
  SSMTUNE_ASSIGN_OR_RETURN(g.dz, bytes_of(dz_));
  SSMTUNE_ASSIGN_OR_RETURN(g.ddelta_bias, bytes_of(dbias_));
  SSMTUNE_ASSIGN_OR_RETURN(g.dh0, bytes_of(dh0_));
  return g;
}

}  // namespace ssmtune::bwd
