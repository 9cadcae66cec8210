// Problem inference and validation of a decode-step call.
#include "runtime/step_call_args.h"

#include "runtime/call_args.h"

namespace ssmtune {

Result<StepCallProblem> read_step_call(const ssmtune_step_args& a) {
  StepCallProblem c;
  step::StepTensors& t = c.tensors;
  SSMTUNE_ASSIGN_OR_RETURN(t.state, from_c_tensor(a.state, "state"));
  SSMTUNE_ASSIGN_OR_RETURN(t.x, from_c_tensor(a.x, "x"));
  SSMTUNE_ASSIGN_OR_RETURN(t.dt, from_c_tensor(a.dt, "dt"));
  SSMTUNE_ASSIGN_OR_RETURN(t.A, from_c_tensor(a.A, "A"));
  SSMTUNE_ASSIGN_OR_RETURN(t.B, from_c_tensor(a.B, "B"));
  SSMTUNE_ASSIGN_OR_RETURN(t.C, from_c_tensor(a.C, "C"));
  SSMTUNE_ASSIGN_OR_RETURN(t.D, from_c_tensor(a.D, "D"));
  SSMTUNE_ASSIGN_OR_RETURN(t.z, from_c_tensor(a.z, "z"));
  SSMTUNE_ASSIGN_OR_RETURN(t.dt_bias, from_c_tensor(a.dt_bias, "dt_bias"));
  SSMTUNE_ASSIGN_OR_RETURN(t.out, from_c_tensor(a.out, "out"));
  const ssmtune_tensor& ix = a.state_indices;
  if (ix.data != nullptr) {
    if (ix.dtype != SSMTUNE_INT32 && ix.dtype != SSMTUNE_INT64)
      return Status::invalid_argument("state_indices: dtype code " + std::to_string(ix.dtype) +
                                      " is not SSMTUNE_INT32 or SSMTUNE_INT64");
    if (ix.rank != 1)
      return Status::invalid_argument("state_indices: expected rank 1 (batch,), got rank " +
                                      std::to_string(ix.rank));
    t.state_indices.data = ix.data;
    t.state_indices.bytes = ix.dtype == SSMTUNE_INT64 ? 8 : 4;
    t.state_indices.size = ix.shape[0];
    t.state_indices.stride = ix.stride[0];
  }
  if (!t.state.present()) return Status::invalid_argument("state: required, got a null pointer");
  if (t.state.rank != 4)
    return Status::invalid_argument("state: expected rank 4 (rows, heads, headdim, dstate)");
  if (!t.x.present()) return Status::invalid_argument("x: required, got a null pointer");
  if (t.x.rank != 3) return Status::invalid_argument("x: expected rank 3 (batch, heads, headdim)");
  if (!t.B.present()) return Status::invalid_argument("B: required, got a null pointer");
  if (t.B.rank != 3) return Status::invalid_argument("B: expected rank 3 (batch, groups, dstate)");
  step::StepProblem& p = c.problem;
  p.batch = t.x.shape[0];
  p.heads = t.x.shape[1];
  p.headdim = t.x.shape[2];
  p.dstate = t.state.shape[3];
  p.groups = t.B.shape[1];
  p.dtype = t.x.dtype;
  p.state_dtype = t.state.dtype;
  p.has_d = t.D.present();
  p.has_z = t.z.present();
  p.has_dt_bias = t.dt_bias.present();
  p.softplus = a.dt_softplus != 0;
  p.has_indices = t.state_indices.present();
  SSMTUNE_RETURN_IF_ERROR(step::validate_step_tensors(p, t));
  return c;
}

ssmtune_step_args to_c_args(const step::StepTensors& t, bool dt_softplus) {
  ssmtune_step_args a{};
  a.state = to_c_tensor(t.state);
  a.x = to_c_tensor(t.x);
  a.dt = to_c_tensor(t.dt);
  a.A = to_c_tensor(t.A);
  a.B = to_c_tensor(t.B);
  a.C = to_c_tensor(t.C);
  a.D = to_c_tensor(t.D);
  a.z = to_c_tensor(t.z);
  a.dt_bias = to_c_tensor(t.dt_bias);
  a.out = to_c_tensor(t.out);
  if (t.state_indices.present()) {
    a.state_indices.data = t.state_indices.data;
    a.state_indices.dtype = t.state_indices.bytes == 8 ? SSMTUNE_INT64 : SSMTUNE_INT32;
    a.state_indices.rank = 1;
    a.state_indices.shape[0] = t.state_indices.size;
    a.state_indices.stride[0] = t.state_indices.stride;
  }
  a.dt_softplus = dt_softplus ? 1 : 0;
  return a;
}

}  // namespace ssmtune
