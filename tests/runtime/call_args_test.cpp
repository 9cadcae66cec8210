// Reading a call's C arguments as the problem they pose and its tensors, forward
// and backward: inference, the round trip, errors naming the argument.
#include "runtime/call_args.h"

#include <catch2/catch.hpp>

#include "support/c_tensors.h"

namespace ssmtune {
namespace {

using testing::c_tensor;

// Disjoint fake device ranges, 1 GiB apart (never dereferenced).
uintptr_t at(int i) { return (uintptr_t{1} << 40) + (uintptr_t{1} << 30) * i; }

ssmtune_fwd_args valid_args() {
  ssmtune_fwd_args a{};
  a.u = c_tensor(at(0), SSMTUNE_BF16, {2, 64, 100});
  a.delta = c_tensor(at(1), SSMTUNE_BF16, {2, 64, 100});
  a.A = c_tensor(at(2), SSMTUNE_FP32, {64, 16});
  a.B = c_tensor(at(3), SSMTUNE_BF16, {2, 2, 16, 100});
  a.C = c_tensor(at(4), SSMTUNE_FP32, {64, 16});
  a.z = c_tensor(at(5), SSMTUNE_BF16, {2, 64, 100});
  a.out = c_tensor(at(6), SSMTUNE_BF16, {2, 64, 100});
  a.out_z = c_tensor(at(7), SSMTUNE_BF16, {2, 64, 100});
  a.last_state = c_tensor(at(8), SSMTUNE_FP32, {2, 64, 16});
  a.delta_softplus = 1;
  return a;
}

TEST_CASE("a call's problem comes from its tensors", "[runtime]") {
  auto c = read_call(valid_args());
  INFO(c.status().to_string());
  REQUIRE(c.is_ok());
  const FwdProblem& p = c->problem;
  CHECK(p.batch == 2);
  CHECK(p.dim == 64);
  CHECK(p.seqlen == 100);
  CHECK(p.dstate == 16);
  CHECK(p.groups == 2);
  CHECK(p.dtype == DType::kBF16);
  CHECK(p.variable_b);
  CHECK_FALSE(p.variable_c);
  CHECK(p.has_z);
  CHECK(p.delta_softplus);
  CHECK(p.return_last_state);
  CHECK_FALSE(p.has_d);
  CHECK_FALSE(p.has_initial_state);
}

TEST_CASE("C arguments round-trip through FwdTensors", "[runtime]") {
  auto c = read_call(valid_args());
  REQUIRE(c.is_ok());
  auto back = read_call(to_c_args(c->tensors, c->problem.delta_softplus));
  REQUIRE(back.is_ok());
  CHECK(back->problem == c->problem);
  CHECK(back->tensors.B.stride[2] == c->tensors.B.stride[2]);
}

TEST_CASE("a bad call is an error naming the argument", "[runtime]") {
  struct Bad {
    std::function<void(ssmtune_fwd_args&)> edit;
    const char* starts;
  };
  const std::vector<Bad> cases = {
      {[](ssmtune_fwd_args& a) { a.u.data = nullptr; }, "u:"},
      {[](ssmtune_fwd_args& a) { a.A.rank = 3; }, "A:"},
      {[](ssmtune_fwd_args& a) { a.delta.dtype = SSMTUNE_FP32; }, "delta:"},
      {[](ssmtune_fwd_args& a) { a.B.shape[3] = 99; }, "B:"},
      {[](ssmtune_fwd_args& a) { a.out.data = nullptr; }, "out:"},
      {[](ssmtune_fwd_args& a) { a.out_z.data = nullptr; }, "out_z:"},
      {[](ssmtune_fwd_args& a) { a.u.dtype = 7; }, "u:"},
      {[](ssmtune_fwd_args& a) { a.out.stride[2] = 2; }, "out:"},
      {[](ssmtune_fwd_args& a) { a.out = a.u; }, "out"},
  };
  for (const auto& b : cases) {
    ssmtune_fwd_args a = valid_args();
    b.edit(a);
    auto c = read_call(a);
    INFO(b.starts << " -> " << c.status().to_string());
    REQUIRE_FALSE(c.is_ok());
    CHECK(c.status().code() == Code::kInvalidArgument);
    CHECK(c.status().message().rfind(b.starts, 0) == 0);
  }
}

// A backward call: variable B in two groups, constant C, D, z (with the
// saved out), softplus, dlast; every gradient it needs.
ssmtune_bwd_args valid_bwd_args() {
  ssmtune_bwd_args a{};
  a.u = c_tensor(at(0), SSMTUNE_BF16, {2, 64, 100});
  a.delta = c_tensor(at(1), SSMTUNE_BF16, {2, 64, 100});
  a.A = c_tensor(at(2), SSMTUNE_FP32, {64, 16});
  a.B = c_tensor(at(3), SSMTUNE_BF16, {2, 2, 16, 100});
  a.C = c_tensor(at(4), SSMTUNE_FP32, {64, 16});
  a.D = c_tensor(at(5), SSMTUNE_FP32, {64});
  a.z = c_tensor(at(6), SSMTUNE_BF16, {2, 64, 100});
  a.out = c_tensor(at(7), SSMTUNE_BF16, {2, 64, 100});
  a.dout = c_tensor(at(8), SSMTUNE_BF16, {2, 64, 100});
  a.dlast = c_tensor(at(9), SSMTUNE_FP32, {2, 64, 16});
  a.du = c_tensor(at(10), SSMTUNE_BF16, {2, 64, 100});
  a.ddelta = c_tensor(at(11), SSMTUNE_BF16, {2, 64, 100});
  a.dA = c_tensor(at(12), SSMTUNE_FP32, {64, 16});
  a.dB = c_tensor(at(13), SSMTUNE_BF16, {2, 2, 16, 100});
  a.dC = c_tensor(at(14), SSMTUNE_FP32, {64, 16});
  a.dD = c_tensor(at(15), SSMTUNE_FP32, {64});
  a.dz = c_tensor(at(16), SSMTUNE_BF16, {2, 64, 100});
  a.delta_softplus = 1;
  return a;
}

TEST_CASE("a backward call's problem comes from its tensors", "[runtime]") {
  auto c = read_bwd_call(valid_bwd_args());
  INFO(c.status().to_string());
  REQUIRE(c.is_ok());
  const bwd::BwdProblem& p = c->problem;
  CHECK(p.key() == "bwd:b2.d64.l100.n16.g2.bf16.vB.D.z.sp.last.dlast");
  CHECK(p.has_dlast);
  CHECK(p.fwd.return_last_state);  // dlast implies the forward returned the last state
  CHECK(p.fwd.groups == 2);
  CHECK(p.fwd.variable_b);
  CHECK_FALSE(p.fwd.variable_c);
  CHECK(p.fwd.has_d);
  CHECK(p.fwd.has_z);
  CHECK_FALSE(p.fwd.has_delta_bias);
  CHECK_FALSE(p.fwd.has_initial_state);
  CHECK(c->tensors.out.present());
  CHECK(c->tensors.dB.shape[1] == 2);

  ssmtune_bwd_args a = valid_bwd_args();
  a.dlast = ssmtune_tensor{};
  auto no_dlast = read_bwd_call(a);
  REQUIRE(no_dlast.is_ok());
  CHECK_FALSE(no_dlast->problem.has_dlast);
  CHECK_FALSE(no_dlast->problem.fwd.return_last_state);
  CHECK(no_dlast->problem.key() == "bwd:b2.d64.l100.n16.g2.bf16.vB.D.z.sp");
}

TEST_CASE("a backward call without z ignores a given out", "[runtime]") {
  ssmtune_bwd_args a = valid_bwd_args();
  a.z = a.dz = ssmtune_tensor{};
  a.out.shape[2] = 5;  // not even checked: the kernels never read it
  auto c = read_bwd_call(a);
  INFO(c.status().to_string());
  REQUIRE(c.is_ok());
  CHECK_FALSE(c->problem.fwd.has_z);
  CHECK_FALSE(c->tensors.out.present());
}

TEST_CASE("backward C arguments round-trip through BwdTensors", "[runtime]") {
  auto c = read_bwd_call(valid_bwd_args());
  REQUIRE(c.is_ok());
  auto back = read_bwd_call(to_c_args(c->tensors, c->problem.fwd.delta_softplus));
  INFO(back.status().to_string());
  REQUIRE(back.is_ok());
  CHECK(back->problem == c->problem);
  CHECK(back->tensors.dB.stride[2] == c->tensors.dB.stride[2]);
  CHECK(back->tensors.dz.data == c->tensors.dz.data);
}

TEST_CASE("a bad backward call is an error naming the argument", "[runtime]") {
  struct Bad {
    std::function<void(ssmtune_bwd_args&)> edit;
    const char* starts;
  };
  const std::vector<Bad> cases = {
      {[](ssmtune_bwd_args& a) { a.u.data = nullptr; }, "u:"},
      {[](ssmtune_bwd_args& a) { a.A.rank = 3; }, "A:"},
      {[](ssmtune_bwd_args& a) { a.dout.data = nullptr; }, "dout:"},
      {[](ssmtune_bwd_args& a) { a.dout.dtype = SSMTUNE_FP32; }, "dout:"},
      {[](ssmtune_bwd_args& a) { a.out.data = nullptr; }, "out:"},
      {[](ssmtune_bwd_args& a) { a.du.data = nullptr; }, "du:"},
      {[](ssmtune_bwd_args& a) { a.ddelta.shape[2] = 99; }, "ddelta:"},
      {[](ssmtune_bwd_args& a) { a.dA.dtype = SSMTUNE_BF16; }, "dA:"},
      {[](ssmtune_bwd_args& a) { a.dB.shape[1] = 1; }, "dB:"},
      {[](ssmtune_bwd_args& a) { a.dC.rank = 4; }, "dC:"},
      {[](ssmtune_bwd_args& a) { a.dD.data = nullptr; }, "dD:"},
      {[](ssmtune_bwd_args& a) { a.dz.data = nullptr; }, "dz:"},
      {[](ssmtune_bwd_args& a) { a.dlast.shape[2] = 4; }, "dlast:"},
      {[](ssmtune_bwd_args& a) {
         a.dh0 = c_tensor(at(20), SSMTUNE_FP32, {2, 64, 16});
       },
       "dh0:"},
      {[](ssmtune_bwd_args& a) { a.ddelta_bias = c_tensor(at(20), SSMTUNE_FP32, {64}); },
       "ddelta_bias:"},
      {[](ssmtune_bwd_args& a) { a.du.stride[2] = 2; }, "du:"},
      {[](ssmtune_bwd_args& a) { a.dz.dtype = 9; }, "dz:"},
      {[](ssmtune_bwd_args& a) { a.du.data = a.u.data; }, "du: overlaps input u"},
      {[](ssmtune_bwd_args& a) { a.dz.data = a.du.data; }, "dz: overlaps output du"},
  };
  for (const auto& b : cases) {
    ssmtune_bwd_args a = valid_bwd_args();
    b.edit(a);
    auto c = read_bwd_call(a);
    INFO(b.starts << " -> " << c.status().to_string());
    REQUIRE_FALSE(c.is_ok());
    CHECK(c.status().code() == Code::kInvalidArgument);
    CHECK(c.status().message().rfind(b.starts, 0) == 0);
  }
}

}  // namespace
}  // namespace ssmtune
