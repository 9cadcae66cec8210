// Backward problem keys and the validation of backward tensors.
#include <catch2/catch.hpp>

#include <vector>

#include "support/problems.h"
#include "tuner/bwd/problem.h"

namespace ssmtune::bwd {
namespace {

BwdProblem all_flags() {
  BwdProblem p;
  p.fwd = testing::shape(2, 8, 16, 4, DType::kBF16, 2);
  p.fwd.has_d = p.fwd.has_z = p.fwd.has_delta_bias = p.fwd.delta_softplus = true;
  p.fwd.return_last_state = p.fwd.has_initial_state = p.has_dlast = true;
  return p;
}

TEST_CASE("backward keys round-trip and carry dlast", "[bwd]") {
  BwdProblem p = all_flags();
  CHECK(p.key() == "bwd:b2.d8.l16.n4.g2.bf16.vB.vC.D.z.bias.sp.last.h0.dlast");
  auto back = BwdProblem::from_key(p.key());
  REQUIRE(back.is_ok());
  CHECK(*back == p);
  p.has_dlast = false;
  CHECK(p.key() == "bwd:b2.d8.l16.n4.g2.bf16.vB.vC.D.z.bias.sp.last.h0");
  CHECK(*BwdProblem::from_key(p.key()) == p);
  CHECK(!BwdProblem::from_key("b2.d8.l16.n4.g2.bf16.vB.vC").is_ok());            // no prefix
  CHECK(!BwdProblem::from_key("bwd:b2.d8.l16.n4.g2.bf16.vB.vC.dlast").is_ok());  // no last
  CHECK(!BwdProblem::from_key("bwd:b2.d8.l16.n4.g2.bf16.vB.vC.dlast.last").is_ok());
}

TEST_CASE("backward validation follows the forward and needs last_state for dlast", "[bwd]") {
  BwdProblem p = all_flags();
  CHECK(p.validate().is_ok());
  p.fwd.return_last_state = false;
  CHECK(p.validate().message().find("has_dlast") != std::string::npos);
  p = all_flags();
  p.fwd.dstate = 257;
  CHECK(!p.validate().is_ok());
}

TEST_CASE("the backward floor counts each input and gradient once", "[bwd]") {
  BwdProblem p;
  p.fwd = testing::shape(8, 1536, 2048, 16, DType::kBF16);
  // u, delta, dout, du, ddelta: 5 * 8*1536*2048*2; B, C, dB, dC: 4 * 8*16*2048*2; A, dA.
  const double expect = 5.0 * 8 * 1536 * 2048 * 2 + 4.0 * 8 * 16 * 2048 * 2 + 2.0 * 1536 * 16 * 4;
  CHECK(p.min_bytes() == expect);
  p.fwd.has_z = true;
  CHECK(p.min_bytes() == expect + 3.0 * 8 * 1536 * 2048 * 2);
  CHECK(p.exp_count() == 8.0 * 1536 * 2048 * 16);
}

// Contiguous tensor descriptions over fake, disjoint addresses.
struct Fake {
  uintptr_t next = 0x100000;
  TensorArg make(DType dt, std::vector<int64_t> shape) {
    TensorArg t;
    t.data = reinterpret_cast<const void*>(next);
    t.dtype = dt;
    t.rank = static_cast<int>(shape.size());
    int64_t stride = 1;
    for (int i = t.rank - 1; i >= 0; --i) {
      t.shape[i] = shape[i];
      t.stride[i] = stride;
      stride *= shape[i];
    }
    next += static_cast<uintptr_t>(stride) * 4 + 4096;
    return t;
  }
};

BwdTensors tensors_for(const BwdProblem& bp) {
  const FwdProblem& p = bp.fwd;
  Fake f;
  const DType io = p.dtype, f32 = DType::kF32;
  const std::vector<int64_t> bdl = {p.batch, p.dim, p.seqlen}, st = {p.batch, p.dim, p.dstate};
  const std::vector<int64_t> var = {p.batch, p.groups, p.dstate, p.seqlen}, con = {p.dim, p.dstate};
  BwdTensors t;
  t.u = f.make(io, bdl);
  t.delta = f.make(io, bdl);
  t.A = f.make(f32, con);
  t.B = p.variable_b ? f.make(io, var) : f.make(f32, con);
  t.C = p.variable_c ? f.make(io, var) : f.make(f32, con);
  t.dout = f.make(io, bdl);
  t.du = f.make(io, bdl);
  t.ddelta = f.make(io, bdl);
  t.dA = f.make(f32, con);
  t.dB = p.variable_b ? f.make(io, var) : f.make(f32, con);
  t.dC = p.variable_c ? f.make(io, var) : f.make(f32, con);
  if (p.has_d) t.D = f.make(f32, {p.dim}), t.dD = f.make(f32, {p.dim});
  if (p.has_delta_bias) t.delta_bias = f.make(f32, {p.dim}), t.ddelta_bias = f.make(f32, {p.dim});
  if (p.has_z) t.z = f.make(io, bdl), t.out = f.make(io, bdl), t.dz = f.make(io, bdl);
  if (p.has_initial_state) t.h0 = f.make(f32, st), t.dh0 = f.make(f32, st);
  if (bp.has_dlast) t.dlast = f.make(f32, st);
  return t;
}

TEST_CASE("backward tensors: each error names its argument", "[bwd]") {
  const BwdProblem p = all_flags();
  CHECK(validate_bwd_tensors(p, tensors_for(p)).is_ok());
  BwdProblem none = p;
  none.fwd.has_d = none.fwd.has_z = none.fwd.has_delta_bias = false;
  none.fwd.has_initial_state = none.has_dlast = false;
  CHECK(validate_bwd_tensors(none, tensors_for(none)).is_ok());
  BwdProblem cst = p;
  cst.fwd.groups = 1;
  cst.fwd.variable_b = cst.fwd.variable_c = false;
  CHECK(validate_bwd_tensors(cst, tensors_for(cst)).is_ok());

  auto message = [&](auto edit) {
    BwdTensors t = tensors_for(p);
    edit(t);
    return validate_bwd_tensors(p, t).message();
  };
  CHECK(message([](BwdTensors& t) { t.dB.shape[3] = 15; }).rfind("dB: expected shape", 0) == 0);
  CHECK(message([](BwdTensors& t) { t.dlast = TensorArg{}; }).rfind("dlast: required", 0) == 0);
  CHECK(message([](BwdTensors& t) { t.dz.dtype = DType::kF32; }).rfind("dz: dtype", 0) == 0);
  CHECK(message([](BwdTensors& t) { t.out = TensorArg{}; }).rfind("out: required", 0) == 0);
  CHECK(message([](BwdTensors& t) { t.du.stride[2] = 2; }).rfind("du: last dimension", 0) == 0);
  CHECK(message([](BwdTensors& t) { t.ddelta.data = t.u.data; }).rfind("ddelta: overlaps", 0) == 0);
  BwdTensors t = tensors_for(none);
  t.dh0 = tensors_for(p).dh0;
  CHECK(validate_bwd_tensors(none, t).message().rfind("dh0: given", 0) == 0);
}

}  // namespace
}  // namespace ssmtune::bwd
