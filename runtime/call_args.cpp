// FwdProblem inference and validation of a call.
#include "runtime/call_args.h"

namespace ssmtune {
namespace {

Result<TensorArg> to_arg(const ssmtune_tensor& t, const char* name) {
  TensorArg a;
  a.data = t.data;
  if (t.data == nullptr) return a;
  if (t.dtype < SSMTUNE_FP32 || t.dtype > SSMTUNE_BF16)
    return Status::invalid_argument(std::string(name) + ": unknown dtype code " +
                                    std::to_string(t.dtype));
  if (t.rank < 1 || t.rank > 4)
    return Status::invalid_argument(std::string(name) + ": rank " + std::to_string(t.rank) +
                                    " is not in [1, 4]");
  a.dtype = static_cast<DType>(t.dtype);
  a.rank = t.rank;
  for (int i = 0; i < t.rank; ++i) {
    a.shape[i] = t.shape[i];
    a.stride[i] = t.stride[i];
  }
  return a;
}

}  // namespace

Result<CallProblem> read_call(const ssmtune_fwd_args& args) {
  CallProblem c;
  FwdTensors& t = c.tensors;
  SSMTUNE_ASSIGN_OR_RETURN(t.u, to_arg(args.u, "u"));
  SSMTUNE_ASSIGN_OR_RETURN(t.delta, to_arg(args.delta, "delta"));
  SSMTUNE_ASSIGN_OR_RETURN(t.A, to_arg(args.A, "A"));
  SSMTUNE_ASSIGN_OR_RETURN(t.B, to_arg(args.B, "B"));
  SSMTUNE_ASSIGN_OR_RETURN(t.C, to_arg(args.C, "C"));
  SSMTUNE_ASSIGN_OR_RETURN(t.D, to_arg(args.D, "D"));
  SSMTUNE_ASSIGN_OR_RETURN(t.z, to_arg(args.z, "z"));
  SSMTUNE_ASSIGN_OR_RETURN(t.delta_bias, to_arg(args.delta_bias, "delta_bias"));
  SSMTUNE_ASSIGN_OR_RETURN(t.h0, to_arg(args.h0, "h0"));
  SSMTUNE_ASSIGN_OR_RETURN(t.out, to_arg(args.out, "out"));
  SSMTUNE_ASSIGN_OR_RETURN(t.out_z, to_arg(args.out_z, "out_z"));
  SSMTUNE_ASSIGN_OR_RETURN(t.last_state, to_arg(args.last_state, "last_state"));
  if (!t.u.present()) return Status::invalid_argument("u: required, got a null pointer");
  if (t.u.rank != 3) return Status::invalid_argument("u: expected rank 3 (batch, dim, seqlen)");
  if (!t.A.present()) return Status::invalid_argument("A: required, got a null pointer");
  if (t.A.rank != 2) return Status::invalid_argument("A: expected rank 2 (dim, dstate)");
  if (!t.B.present()) return Status::invalid_argument("B: required, got a null pointer");
  if (!t.C.present()) return Status::invalid_argument("C: required, got a null pointer");
  FwdProblem& p = c.problem;
  p.batch = t.u.shape[0];
  p.dim = t.u.shape[1];
  p.seqlen = t.u.shape[2];
  p.dstate = t.A.shape[1];
  p.dtype = t.u.dtype;
  p.variable_b = t.B.rank == 4;
  p.variable_c = t.C.rank == 4;
  p.groups = p.variable_b ? t.B.shape[1] : p.variable_c ? t.C.shape[1] : 1;
  p.has_d = t.D.present();
  p.has_z = t.z.present();
  p.has_delta_bias = t.delta_bias.present();
  p.delta_softplus = args.delta_softplus != 0;
  p.return_last_state = t.last_state.present();
  p.has_initial_state = t.h0.present();
  SSMTUNE_RETURN_IF_ERROR(p.validate());
  SSMTUNE_RETURN_IF_ERROR(validate_fwd_tensors(p, t));
  return c;
}

ssmtune_tensor to_c_tensor(const TensorArg& t) {
  ssmtune_tensor c{};
  c.data = t.data;
  if (t.data == nullptr) return c;
  c.dtype = static_cast<int32_t>(t.dtype);
  c.rank = t.rank;
  for (int i = 0; i < t.rank; ++i) {
    c.shape[i] = t.shape[i];
    c.stride[i] = t.stride[i];
  }
  return c;
}

ssmtune_fwd_args to_c_args(const FwdTensors& t, bool delta_softplus) {
  ssmtune_fwd_args a{};
  a.u = to_c_tensor(t.u);
  a.delta = to_c_tensor(t.delta);
  a.A = to_c_tensor(t.A);
  a.B = to_c_tensor(t.B);
  a.C = to_c_tensor(t.C);
  a.D = to_c_tensor(t.D);
  a.z = to_c_tensor(t.z);
  a.delta_bias = to_c_tensor(t.delta_bias);
  a.h0 = to_c_tensor(t.h0);
  a.out = to_c_tensor(t.out);
  a.out_z = to_c_tensor(t.out_z);
  a.last_state = to_c_tensor(t.last_state);
  a.delta_softplus = delta_softplus ? 1 : 0;
  return a;
}

}  // namespace ssmtune
