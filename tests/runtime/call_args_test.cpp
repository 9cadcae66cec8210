#include "runtime/call_args.h"

#include <catch2/catch.hpp>

namespace ssmtune {
namespace {

ssmtune_tensor tensor(uintptr_t addr, ssmtune_dtype t, std::initializer_list<int64_t> shape) {
  ssmtune_tensor x{};
  x.data = reinterpret_cast<const void*>(addr);
  x.dtype = t;
  x.rank = static_cast<int32_t>(shape.size());
  int i = 0;
  for (int64_t s : shape) x.shape[i++] = s;
  int64_t stride = 1;
  for (int k = x.rank - 1; k >= 0; --k) {
    x.stride[k] = stride;
    stride *= x.shape[k];
  }
  return x;
}

// Disjoint fake device ranges, 1 GiB apart (never dereferenced).
uintptr_t at(int i) { return (uintptr_t{1} << 40) + (uintptr_t{1} << 30) * i; }

ssmtune_fwd_args valid_args() {
  ssmtune_fwd_args a{};
  a.u = tensor(at(0), SSMTUNE_BF16, {2, 64, 100});
  a.delta = tensor(at(1), SSMTUNE_BF16, {2, 64, 100});
  a.A = tensor(at(2), SSMTUNE_FP32, {64, 16});
  a.B = tensor(at(3), SSMTUNE_BF16, {2, 2, 16, 100});
  a.C = tensor(at(4), SSMTUNE_FP32, {64, 16});
  a.z = tensor(at(5), SSMTUNE_BF16, {2, 64, 100});
  a.out = tensor(at(6), SSMTUNE_BF16, {2, 64, 100});
  a.out_z = tensor(at(7), SSMTUNE_BF16, {2, 64, 100});
  a.last_state = tensor(at(8), SSMTUNE_FP32, {2, 64, 16});
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

}  // namespace
}  // namespace ssmtune
