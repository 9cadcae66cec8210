// Prepared calls without a GPU: layouts read with data ignored, the layout
// key, and the per-launch pointer checks of bind().
#include "runtime/prepared_call.h"

#include <catch2/catch.hpp>
#include <string>

#include "support/c_tensors.h"

namespace ssmtune {
namespace {

using testing::c_tensor;

// A layout: no data pointers at all (present = rank > 0).
ssmtune_fwd_args layout() {
  ssmtune_fwd_args a{};
  a.u = c_tensor(0, SSMTUNE_BF16, {2, 64, 100});
  a.delta = c_tensor(0, SSMTUNE_BF16, {2, 64, 100});
  a.A = c_tensor(0, SSMTUNE_FP32, {64, 16});
  a.B = c_tensor(0, SSMTUNE_BF16, {2, 1, 16, 100});
  a.C = c_tensor(0, SSMTUNE_BF16, {2, 1, 16, 100});
  a.z = c_tensor(0, SSMTUNE_BF16, {2, 64, 100});
  a.out = c_tensor(0, SSMTUNE_BF16, {2, 64, 100});
  a.out_z = c_tensor(0, SSMTUNE_BF16, {2, 64, 100});
  a.delta_softplus = 1;
  return a;
}

// Disjoint fake device ranges, 1 GiB apart (never dereferenced), 256-aligned.
const void* at(int i) {
  return reinterpret_cast<const void*>((uintptr_t{1} << 40) + (uintptr_t{1} << 30) * i);
}

struct Pointers {
  const void* p[kFwdTensorCount] = {};
  Pointers() {
    for (int i : {SSMTUNE_FWD_U, SSMTUNE_FWD_DELTA, SSMTUNE_FWD_A, SSMTUNE_FWD_B, SSMTUNE_FWD_C,
                  SSMTUNE_FWD_Z, SSMTUNE_FWD_OUT, SSMTUNE_FWD_OUT_Z})
      p[i] = at(i);
  }
};

PreparedCall prepared() {
  auto c = read_layout(layout());
  INFO(c.status().to_string());
  REQUIRE(c.is_ok());
  return PreparedCall(nullptr, *c, ConfigChoice{}, nullptr);
}

TEST_CASE("prepared: a layout is read with its pointers ignored", "[runtime]") {
  auto c = read_layout(layout());
  INFO(c.status().to_string());
  REQUIRE(c.is_ok());
  CHECK(c->problem.key() == "fwd:b2.d64.l100.n16.g1.bf16.vB.vC.z.sp");
  ssmtune_fwd_args with_data = layout();
  with_data.u.data = at(0);  // the data field plays no part
  CHECK(layout_key(with_data) == layout_key(layout()));
}

TEST_CASE("prepared: layout errors name the argument", "[runtime]") {
  ssmtune_fwd_args a = layout();
  a.delta.shape[2] = 99;
  auto c = read_layout(a);
  REQUIRE_FALSE(c.is_ok());
  CHECK(c.status().message().find("delta: expected shape (2, 64, 100)") != std::string::npos);
  a = layout();
  a.out_z = ssmtune_tensor{};  // z without out_z
  c = read_layout(a);
  REQUIRE_FALSE(c.is_ok());
  CHECK(c.status().message().find("out_z") != std::string::npos);
}

TEST_CASE("prepared: the layout key follows strides, dtypes and flags", "[runtime]") {
  const auto base = layout_key(layout());
  ssmtune_fwd_args a = layout();
  a.u.stride[0] = 64 * 128;
  CHECK(layout_key(a) != base);
  a = layout();
  a.delta_softplus = 0;
  CHECK(layout_key(a) != base);
  a = layout();
  a.D = c_tensor(0, SSMTUNE_FP32, {64});
  CHECK(layout_key(a) != base);
  a = layout();
  a.D.shape[0] = 5;  // an absent tensor's fields do not count
  CHECK(layout_key(a) == base);
}

TEST_CASE("prepared: bind fills the params from the pointers", "[runtime]") {
  const PreparedCall call = prepared();
  Pointers ptrs;
  auto k = call.bind(ptrs.p);
  INFO(k.status().to_string());
  REQUIRE(k.is_ok());
  CHECK(k->u == at(SSMTUNE_FWD_U));
  CHECK(k->out_z == at(SSMTUNE_FWD_OUT_Z));
  CHECK(k->D == nullptr);
  CHECK(k->vec4 == 1);     // 100-element rows start on multiples of 4 elements
  CHECK(k->align16 == 0);  // 200-byte rows are not 16-byte multiples
  // Shifted by one element: still element-aligned, no longer vector-aligned.
  ptrs.p[SSMTUNE_FWD_U] = static_cast<const char*>(at(SSMTUNE_FWD_U)) + 2;
  k = call.bind(ptrs.p);
  REQUIRE(k.is_ok());
  CHECK(k->vec4 == 0);
}

TEST_CASE("prepared: bind checks presence, alignment and overlap", "[runtime]") {
  const PreparedCall call = prepared();
  auto message = [&](const Pointers& p) {
    auto k = call.bind(p.p);
    REQUIRE_FALSE(k.is_ok());
    CHECK(k.status().code() == Code::kInvalidArgument);
    return k.status().message();
  };
  Pointers p;
  p.p[SSMTUNE_FWD_Z] = nullptr;
  CHECK(message(p).find("z: the plan was prepared with this tensor") != std::string::npos);
  p = Pointers();
  p.p[SSMTUNE_FWD_D] = at(SSMTUNE_FWD_D);
  CHECK(message(p).find("D: given, but the plan was prepared without it") != std::string::npos);
  p = Pointers();
  p.p[SSMTUNE_FWD_A] = static_cast<const char*>(at(SSMTUNE_FWD_A)) + 2;
  CHECK(message(p).find("A: pointer") != std::string::npos);
  p = Pointers();
  p.p[SSMTUNE_FWD_OUT] = static_cast<const char*>(at(SSMTUNE_FWD_U)) + 2 * 2 * 64 * 100 - 2;
  CHECK(message(p).find("out: overlaps input u") != std::string::npos);
  p = Pointers();
  p.p[SSMTUNE_FWD_OUT] = static_cast<const char*>(at(SSMTUNE_FWD_U)) + 2 * 2 * 64 * 100;
  CHECK(call.bind(p.p).is_ok());  // just past u's last element
  p = Pointers();
  p.p[SSMTUNE_FWD_OUT_Z] = at(SSMTUNE_FWD_OUT);
  CHECK(message(p).find("out_z: overlaps output out") != std::string::npos);
}

}  // namespace
}  // namespace ssmtune
