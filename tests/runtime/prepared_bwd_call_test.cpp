// Prepared backward calls without a GPU: layouts read with data ignored, the
// layout key, and the per-launch pointer checks of bind().
#include "runtime/prepared_bwd_call.h"

#include <catch2/catch.hpp>
#include <string>

#include "support/c_tensors.h"

namespace ssmtune {
namespace {

using testing::c_tensor;

// A layout (no data pointers; present = rank > 0): fp32, variable B and C,
// z with the saved out, h0, delta_bias with softplus.
ssmtune_bwd_args layout() {
  const auto bdl = [] { return c_tensor(SSMTUNE_FP32, {2, 64, 100}); };
  ssmtune_bwd_args a{};
  a.u = a.delta = a.z = a.out = a.dout = bdl();
  a.du = a.ddelta = a.dz = bdl();
  a.A = a.dA = c_tensor(SSMTUNE_FP32, {64, 16});
  a.B = a.C = a.dB = a.dC = c_tensor(SSMTUNE_FP32, {2, 1, 16, 100});
  a.delta_bias = a.ddelta_bias = c_tensor(SSMTUNE_FP32, {64});
  a.h0 = a.dh0 = c_tensor(SSMTUNE_FP32, {2, 64, 16});
  a.delta_softplus = 1;
  return a;
}

// Disjoint fake device ranges, 1 GiB apart (never dereferenced), 256-aligned.
const void* at(int i) {
  return reinterpret_cast<const void*>((uintptr_t{1} << 40) + (uintptr_t{1} << 30) * i);
}

struct Pointers {
  const void* p[kBwdTensorCount] = {};
  explicit Pointers(const ssmtune_bwd_args& a) {
    const ssmtune_tensor* t[kBwdTensorCount] = {
        &a.u,          &a.delta, &a.A,   &a.B,    &a.C,     &a.D,           &a.z,
        &a.delta_bias, &a.h0,    &a.out, &a.dout, &a.dlast, &a.du,          &a.ddelta,
        &a.dA,         &a.dB,    &a.dC,  &a.dD,   &a.dz,    &a.ddelta_bias, &a.dh0};
    for (int i = 0; i < kBwdTensorCount; ++i)
      if (t[i]->rank > 0) p[i] = at(i);
  }
};

PreparedBwdCall prepared(const ssmtune_bwd_args& a) {
  auto c = read_bwd_layout(a);
  INFO(c.status().to_string());
  REQUIRE(c.is_ok());
  return PreparedBwdCall(nullptr, a, *c, BwdChoice{}, nullptr);
}

TEST_CASE("prepared bwd: a layout is read with its pointers ignored", "[runtime]") {
  auto c = read_bwd_layout(layout());
  INFO(c.status().to_string());
  REQUIRE(c.is_ok());
  CHECK(c->problem.key() == "bwd:b2.d64.l100.n16.g1.fp32.vB.vC.z.bias.sp.h0");
  ssmtune_bwd_args with_data = layout();
  with_data.du.data = at(0);  // the data field plays no part
  CHECK(bwd_layout_key(with_data) == bwd_layout_key(layout()));
}

TEST_CASE("prepared bwd: layout errors name the argument", "[runtime]") {
  ssmtune_bwd_args a = layout();
  a.dB.shape[3] = 99;
  auto c = read_bwd_layout(a);
  REQUIRE_FALSE(c.is_ok());
  CHECK(c.status().message().find("dB: expected shape (2, 1, 16, 100)") != std::string::npos);
  a = layout();
  a.dh0 = ssmtune_tensor{};  // h0 without dh0
  c = read_bwd_layout(a);
  REQUIRE_FALSE(c.is_ok());
  CHECK(c.status().message().rfind("dh0: required", 0) == 0);
}

TEST_CASE("prepared bwd: the layout key follows strides, dtypes and flags", "[runtime]") {
  const auto base = bwd_layout_key(layout());
  ssmtune_bwd_args a = layout();
  a.du.stride[0] = 64 * 128;
  CHECK(bwd_layout_key(a) != base);
  a = layout();
  a.delta_softplus = 0;
  CHECK(bwd_layout_key(a) != base);
  a = layout();
  a.dlast = c_tensor(SSMTUNE_FP32, {2, 64, 16});
  CHECK(bwd_layout_key(a) != base);
  a = layout();
  a.D.shape[0] = 5;  // an absent tensor's fields do not count
  CHECK(bwd_layout_key(a) == base);
}

TEST_CASE("prepared bwd: bind fills the params from the pointers", "[runtime]") {
  const ssmtune_bwd_args a = layout();
  const PreparedBwdCall call = prepared(a);
  Pointers ptrs(a);
  auto k = call.bind(ptrs.p);
  INFO(k.status().to_string());
  REQUIRE(k.is_ok());
  CHECK(k->f.u == at(SSMTUNE_BWD_U));
  CHECK(k->f.out == at(SSMTUNE_BWD_OUT));
  CHECK(k->dout == at(SSMTUNE_BWD_DOUT));
  CHECK(k->du == at(SSMTUNE_BWD_DU));
  CHECK(k->dh0 == at(SSMTUNE_BWD_DH0));
  CHECK(k->ddelta_bias == at(SSMTUNE_BWD_DDELTA_BIAS));
  CHECK(k->dD == nullptr);
  CHECK(k->dlast == nullptr);
  CHECK(k->f.vec4 == 1);  // 100-element rows start on multiples of 4 elements
  ptrs.p[SSMTUNE_BWD_DOUT] = static_cast<const char*>(at(SSMTUNE_BWD_DOUT)) + 4;
  k = call.bind(ptrs.p);
  REQUIRE(k.is_ok());
  CHECK(k->f.vec4 == 0);  // one element off: scalar rows
}

TEST_CASE("prepared bwd: out without z is expected but unused", "[runtime]") {
  ssmtune_bwd_args a = layout();
  a.z = a.dz = ssmtune_tensor{};
  const PreparedBwdCall call = prepared(a);
  Pointers ptrs(a);
  auto k = call.bind(ptrs.p);
  INFO(k.status().to_string());
  REQUIRE(k.is_ok());
  CHECK(k->f.out == nullptr);
  ptrs.p[SSMTUNE_BWD_OUT] = nullptr;
  k = call.bind(ptrs.p);
  REQUIRE_FALSE(k.is_ok());
  CHECK(k.status().message().rfind("out: the plan was prepared with this tensor", 0) == 0);
}

TEST_CASE("prepared bwd: bind checks presence, alignment and overlap", "[runtime]") {
  const ssmtune_bwd_args a = layout();
  const PreparedBwdCall call = prepared(a);
  auto message = [&](const Pointers& p) {
    auto k = call.bind(p.p);
    REQUIRE_FALSE(k.is_ok());
    CHECK(k.status().code() == Code::kInvalidArgument);
    return k.status().message();
  };
  Pointers p(a);
  p.p[SSMTUNE_BWD_DZ] = nullptr;
  CHECK(message(p).find("dz: the plan was prepared with this tensor") != std::string::npos);
  p = Pointers(a);
  p.p[SSMTUNE_BWD_DLAST] = at(SSMTUNE_BWD_DLAST);
  CHECK(message(p).find("dlast: given, but the plan was prepared without it") != std::string::npos);
  p = Pointers(a);
  p.p[SSMTUNE_BWD_DA] = static_cast<const char*>(at(SSMTUNE_BWD_DA)) + 2;
  CHECK(message(p).find("dA: pointer") != std::string::npos);
  const size_t bdl_bytes = 4 * 2 * 64 * 100;
  p = Pointers(a);
  p.p[SSMTUNE_BWD_DU] = static_cast<const char*>(at(SSMTUNE_BWD_DOUT)) + bdl_bytes - 4;
  CHECK(message(p).find("du: overlaps input dout") != std::string::npos);
  p = Pointers(a);
  p.p[SSMTUNE_BWD_DU] = static_cast<const char*>(at(SSMTUNE_BWD_DOUT)) + bdl_bytes;
  CHECK(call.bind(p.p).is_ok());  // just past dout's last element
  p = Pointers(a);
  p.p[SSMTUNE_BWD_DH0] = at(SSMTUNE_BWD_DDELTA);
  CHECK(message(p).find("dh0: overlaps output ddelta") != std::string::npos);
}

}  // namespace
}  // namespace ssmtune
