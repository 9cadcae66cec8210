// tuner/scan_params: the sizes and inputs both families' parameters hold,
// filled alike (the forward's block and the backward's copy of it), B/C
// strides by layout, and the vector-row test of pointers and strides.
#include <catch2/catch.hpp>

#include "support/host_tensors.h"
#include "support/problems.h"
#include "tuner/bwd/runner.h"
#include "tuner/fwd/runner.h"
#include "tuner/scan_params.h"

namespace ssmtune {
namespace {

using testing::HostTensors;

// Both families' tensors of one problem (inputs drawn with seed 29, outputs
// poisoned); the backward's inputs are the forward's, so both sets of params
// must point at the same rows.
struct Described {
  HostTensors h;
  FwdTensors fwd;
  bwd::BwdTensors bwd;
  explicit Described(const FwdProblem& p) {
    const std::vector<int64_t> bdl = {p.batch, p.dim, p.seqlen};
    fwd = testing::put_fwd_tensors(h, make_inputs(p, 29));
    bwd::BwdProblem bp;
    bp.fwd = p;
    testing::put_bwd_outputs(h, bp, bwd);
    bwd.u = fwd.u, bwd.delta = fwd.delta, bwd.A = fwd.A, bwd.B = fwd.B, bwd.C = fwd.C;
    bwd.D = fwd.D, bwd.delta_bias = fwd.delta_bias, bwd.z = fwd.z, bwd.h0 = fwd.h0;
    bwd.out = fwd.out;
    bwd.dout = h.out(p.dtype, bdl);
  }
};

FwdProblem flagged(FwdProblem p) {
  p.has_d = p.has_z = p.has_delta_bias = p.delta_softplus = p.has_initial_state = true;
  return p;
}

TEST_CASE("both families fill the scan's sizes and inputs alike", "[scan_params]") {
  for (bool flags : {false, true})
    for (bool variable : {true, false}) {
      FwdProblem p = testing::shape(3, 40, 24, 16, DType::kBF16, 2);
      if (flags) p = flagged(p);
      p.variable_b = variable;
      p.variable_c = !variable;
      Described t(p);
      bwd::BwdProblem bp;
      bp.fwd = p;
      const ssmtune_kernels::SsmFwdParams f = make_params(p, t.fwd);
      const ssmtune_kernels::SsmFwdParams b = bwd::make_params(bp, t.bwd).f;
      INFO("flags " << flags << ", variable B " << variable);
      CHECK((f.batch == 3 && f.dim == 40 && f.seqlen == 24 && f.dstate == 16));
      CHECK((f.groups == 2 && f.dim_per_group == 20));
      for (const ssmtune_kernels::SsmFwdParams* k : {&f, &b}) {
        CHECK(k->batch == f.batch);
        CHECK(k->dim_per_group == f.dim_per_group);
        CHECK(k->u == t.fwd.u.data);
        CHECK(k->u_batch_stride == 40 * 24);
        CHECK(k->u_dim_stride == 24);
        CHECK(k->delta == t.fwd.delta.data);
        CHECK(k->A == t.fwd.A.data);
        CHECK(k->A_dim_stride == 16);
        CHECK(k->B == t.fwd.B.data);
        CHECK(k->C == t.fwd.C.data);
        // Variable: (batch, group, dstate) strides; constant: the dim stride, zeros.
        const ssmtune_kernels::SsmFwdParams& v = *k;
        const long long var[3] = {2 * 16 * 24, 16 * 24, 24}, con[3] = {16, 0, 0};
        const long long* want_b = variable ? var : con;
        const long long* want_c = variable ? con : var;
        CHECK(v.B_batch_stride == want_b[0]);
        CHECK(v.B_group_stride == want_b[1]);
        CHECK(v.B_dstate_stride == want_b[2]);
        CHECK(v.C_batch_stride == want_c[0]);
        CHECK(v.C_group_stride == want_c[1]);
        CHECK(v.C_dstate_stride == want_c[2]);
        // Optional inputs only where the flags ask for them.
        CHECK(v.D == (flags ? t.fwd.D.data : nullptr));
        CHECK(v.delta_bias == (flags ? t.fwd.delta_bias.data : nullptr));
        CHECK(v.z == (flags ? t.fwd.z.data : nullptr));
        CHECK(v.h0 == (flags ? t.fwd.h0.data : nullptr));
        CHECK(v.z_dim_stride == (flags ? 24 : 0));
        CHECK(v.h0_batch_stride == (flags ? 40 * 16 : 0));
        CHECK(v.vec4 == 1);
      }
      // The forward's output always; the backward reads it only for z's gradient.
      CHECK(f.out == t.fwd.out.data);
      CHECK(b.out == (flags ? t.fwd.out.data : nullptr));
    }
}

TEST_CASE("vector rows need aligned pointers and strides of 4 elements", "[scan_params]") {
  FwdProblem p = flagged(testing::shape(2, 8, 32, 4, DType::kF16));
  Described t(p);
  CHECK(inputs_vec4(p, scan_inputs(t.fwd)));
  CHECK(rows_vec4(t.fwd.u, 2, DType::kF16));
  // A pointer 2 elements in, then a dim stride of 30: no vector rows.
  TensorArg shifted = t.fwd.u;
  shifted.data = static_cast<const char*>(shifted.data) + 2 * 2;
  CHECK_FALSE(rows_vec4(shifted, 2, DType::kF16));
  TensorArg strided = t.fwd.u;
  strided.stride[1] = 30;
  CHECK_FALSE(rows_vec4(strided, 2, DType::kF16));
  CHECK(rows_vec4(strided, 1, DType::kF16));  // only the strides asked about count
  // Any input breaks it for the problem, and for both families' params.
  FwdTensors f = t.fwd;
  f.z = strided;
  CHECK_FALSE(inputs_vec4(p, scan_inputs(f)));
  CHECK(make_params(p, f).vec4 == 0);
  bwd::BwdTensors b = t.bwd;
  b.delta = shifted;
  bwd::BwdProblem bp;
  bp.fwd = p;
  CHECK(bwd::make_params(bp, b).f.vec4 == 0);
  CHECK(bwd::make_params(bp, t.bwd).f.vec4 == 1);
  // z unread without its flag: its rows do not count then.
  p.has_z = false;
  CHECK(inputs_vec4(p, scan_inputs(f)));
}

TEST_CASE("B/C strides follow the layout", "[scan_params]") {
  TensorArg var = HostTensors::describe(nullptr, DType::kF32, {2, 3, 4, 5});
  long long s0 = -1, s1 = -1, s2 = -1;
  bc_strides(var, true, s0, s1, s2);
  CHECK((s0 == 60 && s1 == 20 && s2 == 5));
  TensorArg con = HostTensors::describe(nullptr, DType::kF32, {7, 4});
  bc_strides(con, false, s0, s1, s2);
  CHECK((s0 == 4 && s1 == 0 && s2 == 0));
}

}  // namespace
}  // namespace ssmtune
