// Problem inference and validation of a call (forward and backward).
#include "runtime/call_args.h"

namespace ssmtune {
namespace {

// The forward's sizes and flags from the tensors both directions share
// (u, A, B, C, D, z, delta_bias, h0), with the checks the inference needs.
Result<FwdProblem> infer_problem(const TensorArg& u, const TensorArg& A, const TensorArg& B,
                                 const TensorArg& C, const TensorArg& D, const TensorArg& z,
                                 const TensorArg& delta_bias, const TensorArg& h0,
                                 int32_t delta_softplus) {
  if (!u.present()) return Status::invalid_argument("u: required, got a null pointer");
  if (u.rank != 3) return Status::invalid_argument("u: expected rank 3 (batch, dim, seqlen)");
  if (!A.present()) return Status::invalid_argument("A: required, got a null pointer");
  if (A.rank != 2) return Status::invalid_argument("A: expected rank 2 (dim, dstate)");
  if (!B.present()) return Status::invalid_argument("B: required, got a null pointer");
  if (!C.present()) return Status::invalid_argument("C: required, got a null pointer");
  FwdProblem p;
  p.batch = u.shape[0];
  p.dim = u.shape[1];
  p.seqlen = u.shape[2];
  p.dstate = A.shape[1];
  p.dtype = u.dtype;
  p.variable_b = B.rank == 4;
  p.variable_c = C.rank == 4;
  p.groups = p.variable_b ? B.shape[1] : p.variable_c ? C.shape[1] : 1;
  p.has_d = D.present();
  p.has_z = z.present();
  p.has_delta_bias = delta_bias.present();
  p.delta_softplus = delta_softplus != 0;
  p.has_initial_state = h0.present();
  return p;
}

// The fields both call structs and both tensor sets share: the forward's
// inputs u ... h0 and its output `out`.
template <typename Args, typename Tensors>
Status read_inputs(const Args& args, Tensors& t) {
  SSMTUNE_ASSIGN_OR_RETURN(t.u, from_c_tensor(args.u, "u"));
  SSMTUNE_ASSIGN_OR_RETURN(t.delta, from_c_tensor(args.delta, "delta"));
  SSMTUNE_ASSIGN_OR_RETURN(t.A, from_c_tensor(args.A, "A"));
  SSMTUNE_ASSIGN_OR_RETURN(t.B, from_c_tensor(args.B, "B"));
  SSMTUNE_ASSIGN_OR_RETURN(t.C, from_c_tensor(args.C, "C"));
  SSMTUNE_ASSIGN_OR_RETURN(t.D, from_c_tensor(args.D, "D"));
  SSMTUNE_ASSIGN_OR_RETURN(t.z, from_c_tensor(args.z, "z"));
  SSMTUNE_ASSIGN_OR_RETURN(t.delta_bias, from_c_tensor(args.delta_bias, "delta_bias"));
  SSMTUNE_ASSIGN_OR_RETURN(t.h0, from_c_tensor(args.h0, "h0"));
  SSMTUNE_ASSIGN_OR_RETURN(t.out, from_c_tensor(args.out, "out"));
  return Status::ok();
}

template <typename Tensors, typename Args>
void write_inputs(const Tensors& t, Args& a) {
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
}

}  // namespace

Result<TensorArg> from_c_tensor(const ssmtune_tensor& t, const char* name) {
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

Result<CallProblem> read_call(const ssmtune_fwd_args& args) {
  CallProblem c;
  FwdTensors& t = c.tensors;
  SSMTUNE_RETURN_IF_ERROR(read_inputs(args, t));
  SSMTUNE_ASSIGN_OR_RETURN(t.out_z, from_c_tensor(args.out_z, "out_z"));
  SSMTUNE_ASSIGN_OR_RETURN(t.last_state, from_c_tensor(args.last_state, "last_state"));
  SSMTUNE_ASSIGN_OR_RETURN(c.problem, infer_problem(t.u, t.A, t.B, t.C, t.D, t.z, t.delta_bias,
                                                    t.h0, args.delta_softplus));
  FwdProblem& p = c.problem;
  p.return_last_state = t.last_state.present();
  SSMTUNE_RETURN_IF_ERROR(p.validate());
  SSMTUNE_RETURN_IF_ERROR(validate_fwd_tensors(p, t));
  return c;
}

Result<BwdCallProblem> read_bwd_call(const ssmtune_bwd_args& args) {
  BwdCallProblem c;
  bwd::BwdTensors& t = c.tensors;
  SSMTUNE_RETURN_IF_ERROR(read_inputs(args, t));
  SSMTUNE_ASSIGN_OR_RETURN(t.dout, from_c_tensor(args.dout, "dout"));
  SSMTUNE_ASSIGN_OR_RETURN(t.dlast, from_c_tensor(args.dlast, "dlast"));
  SSMTUNE_ASSIGN_OR_RETURN(t.du, from_c_tensor(args.du, "du"));
  SSMTUNE_ASSIGN_OR_RETURN(t.ddelta, from_c_tensor(args.ddelta, "ddelta"));
  SSMTUNE_ASSIGN_OR_RETURN(t.dA, from_c_tensor(args.dA, "dA"));
  SSMTUNE_ASSIGN_OR_RETURN(t.dB, from_c_tensor(args.dB, "dB"));
  SSMTUNE_ASSIGN_OR_RETURN(t.dC, from_c_tensor(args.dC, "dC"));
  SSMTUNE_ASSIGN_OR_RETURN(t.dD, from_c_tensor(args.dD, "dD"));
  SSMTUNE_ASSIGN_OR_RETURN(t.dz, from_c_tensor(args.dz, "dz"));
  SSMTUNE_ASSIGN_OR_RETURN(t.ddelta_bias, from_c_tensor(args.ddelta_bias, "ddelta_bias"));
  SSMTUNE_ASSIGN_OR_RETURN(t.dh0, from_c_tensor(args.dh0, "dh0"));
  bwd::BwdProblem& p = c.problem;
  SSMTUNE_ASSIGN_OR_RETURN(
      p.fwd, infer_problem(t.u, t.A, t.B, t.C, t.D, t.z, t.delta_bias, t.h0, args.delta_softplus));
  // A gradient flows in through the last state only when the forward returned it.
  p.has_dlast = p.fwd.return_last_state = t.dlast.present();
  if (!p.fwd.has_z) t.out = TensorArg{};  // y is read only to gate with z
  SSMTUNE_RETURN_IF_ERROR(bwd::validate_bwd_tensors(p, t));
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
  write_inputs(t, a);
  a.out_z = to_c_tensor(t.out_z);
  a.last_state = to_c_tensor(t.last_state);
  a.delta_softplus = delta_softplus ? 1 : 0;
  return a;
}

ssmtune_bwd_args to_c_args(const bwd::BwdTensors& t, bool delta_softplus) {
  ssmtune_bwd_args a{};
  write_inputs(t, a);
  a.dout = to_c_tensor(t.dout);
  a.dlast = to_c_tensor(t.dlast);
  a.du = to_c_tensor(t.du);
  a.ddelta = to_c_tensor(t.ddelta);
  a.dA = to_c_tensor(t.dA);
  a.dB = to_c_tensor(t.dB);
  a.dC = to_c_tensor(t.dC);
  a.dD = to_c_tensor(t.dD);
  a.dz = to_c_tensor(t.dz);
  a.ddelta_bias = to_c_tensor(t.ddelta_bias);
  a.dh0 = to_c_tensor(t.dh0);
  a.delta_softplus = delta_softplus ? 1 : 0;
  return a;
}

}  // namespace ssmtune
