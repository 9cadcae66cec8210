// Decode-step calls without a GPU: a call's tensors read as its problem
// (sizes from the shapes, flags from presence, errors naming the argument),
// layouts read with data ignored, the layout key, and bind()'s per-launch
// pointer checks and vector switches.
#include "runtime/prepared_step_call.h"

#include <catch2/catch.hpp>
#include <string>

#include "support/c_tensors.h"

namespace ssmtune {
namespace {

using testing::c_tensor;

// A Mamba-2 layout: 2 entries, 4 heads of 8 over 2 groups, dstate 16, bf16
// with an fp32 state of 5 rows picked by int32 indices; D, z, dt_bias.
ssmtune_step_args layout() {
  ssmtune_step_args a{};
  a.state = c_tensor(SSMTUNE_FP32, {5, 4, 8, 16});
  a.x = a.dt = a.z = a.out = c_tensor(SSMTUNE_BF16, {2, 4, 8});
  a.A = c_tensor(SSMTUNE_FP32, {4, 8, 16});
  a.B = a.C = c_tensor(SSMTUNE_BF16, {2, 2, 16});
  a.D = c_tensor(SSMTUNE_FP32, {4, 8});
  a.dt_bias = c_tensor(SSMTUNE_BF16, {4, 8});
  a.state_indices = c_tensor(SSMTUNE_INT32, {2});
  a.dt_softplus = 1;
  return a;
}

const void* at(int i) {
  return reinterpret_cast<const void*>((uintptr_t{1} << 40) + (uintptr_t{1} << 30) * i);
}

struct Pointers {
  const void* p[kStepTensorCount] = {};
  explicit Pointers(const ssmtune_step_args& a) {
    const ssmtune_tensor* t[kStepTensorCount] = {
        &a.state, &a.x, &a.dt, &a.A, &a.B, &a.C, &a.D, &a.z, &a.dt_bias, &a.out, &a.state_indices};
    for (int i = 0; i < kStepTensorCount; ++i)
      if (t[i]->rank > 0) p[i] = at(i);
  }
};

PreparedStepCall prepared(const ssmtune_step_args& a) {
  auto c = read_step_layout(a);
  INFO(c.status().to_string());
  REQUIRE(c.is_ok());
  StepChoice choice;
  choice.config = step::default_config(c->problem).config;
  return PreparedStepCall(nullptr, *c, choice, nullptr);
}

TEST_CASE("step calls: the problem from the tensors", "[runtime]") {
  auto c = read_step_layout(layout());
  INFO(c.status().to_string());
  REQUIRE(c.is_ok());
  CHECK(c->problem.key() == "step:b2.h4.p8.n16.g2.bf16.sfp32.D.z.bias.sp.idx");
  CHECK(c->tensors.state_indices.bytes == 4);
  ssmtune_step_args with_data = layout();
  with_data.x.data = at(0);  // the data field plays no part
  CHECK(step_layout_key(with_data) == step_layout_key(layout()));
  // Mamba-1, no options: one head, no indices (the state's rows are the batch).
  ssmtune_step_args m1{};
  m1.state = c_tensor(SSMTUNE_BF16, {3, 1, 64, 16});
  m1.x = m1.dt = m1.out = c_tensor(SSMTUNE_FP16, {3, 1, 64});
  m1.A = c_tensor(SSMTUNE_FP32, {1, 64, 16});
  m1.B = m1.C = c_tensor(SSMTUNE_FP16, {3, 1, 16});
  c = read_step_layout(m1);
  INFO(c.status().to_string());
  REQUIRE(c.is_ok());
  CHECK(c->problem.key() == "step:b3.h1.p64.n16.g1.fp16.sbf16");
}

TEST_CASE("step calls: errors name the argument", "[runtime]") {
  auto fails = [](ssmtune_step_args a, const char* text) {
    auto c = read_step_layout(a);
    INFO(c.status().to_string());
    REQUIRE_FALSE(c.is_ok());
    CHECK(c.status().message().find(text) != std::string::npos);
  };
  ssmtune_step_args a = layout();
  a.state_indices.dtype = SSMTUNE_FP32;
  fails(a, "state_indices: dtype code 0");
  a = layout();
  a.state_indices = ssmtune_tensor{};  // 5 rows for 2 entries needs the indices
  fails(a, "state: expected shape (2, 4, 8, 16)");
  a = layout();
  a.x.dtype = SSMTUNE_INT32;
  fails(a, "x: unknown dtype code 3");
  a = layout();
  a.state = c_tensor(SSMTUNE_FP32, {5, 32, 16});
  fails(a, "state: expected rank 4");
  a = layout();
  a.B.shape[1] = 3;
  fails(a, "groups");
  a = layout();
  a.A.stride[1] = a.A.stride[2] = 0;  // tied head dims: fine
  CHECK(read_step_layout(a).is_ok());
  a.out.stride[2] = 0;
  fails(a, "out: stride of dimension 2 is 0");
}

TEST_CASE("step calls: the layout key follows strides, dtypes and flags", "[runtime]") {
  const auto base = step_layout_key(layout());
  ssmtune_step_args a = layout();
  a.A.stride[1] = 0;
  CHECK(step_layout_key(a) != base);
  a = layout();
  a.dt_softplus = 0;
  CHECK(step_layout_key(a) != base);
  a = layout();
  a.state_indices.dtype = SSMTUNE_INT64;
  CHECK(step_layout_key(a) != base);
}

TEST_CASE("step calls: bind fills the params and checks the pointers", "[runtime]") {
  const ssmtune_step_args a = layout();
  const PreparedStepCall call = prepared(a);
  Pointers ptrs(a);
  auto k = call.bind(ptrs.p);
  INFO(k.status().to_string());
  REQUIRE(k.is_ok());
  CHECK(k->state == at(SSMTUNE_STEP_STATE));
  CHECK(k->out == at(SSMTUNE_STEP_OUT));
  CHECK(k->state_indices == at(SSMTUNE_STEP_STATE_INDICES));
  CHECK(k->indices_64 == 0);
  CHECK(k->dt_bias_in_dtype == 1);
  CHECK(k->D_in_dtype == 0);
  CHECK(k->heads_per_group == 2);
  CHECK(k->state_vec == 1);
  CHECK(k->a_vec == 1);
  ptrs.p[SSMTUNE_STEP_STATE] = static_cast<const char*>(at(SSMTUNE_STEP_STATE)) + 4;
  k = call.bind(ptrs.p);
  REQUIRE(k.is_ok());
  CHECK(k->state_vec == 0);  // one element off: element-wise rows
  CHECK(k->a_vec == 1);

  auto message = [&](const Pointers& p) {
    auto r = call.bind(p.p);
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().code() == Code::kInvalidArgument);
    return r.status().message();
  };
  Pointers p(a);
  p.p[SSMTUNE_STEP_STATE_INDICES] = nullptr;
  CHECK(message(p).rfind("state_indices: the plan was prepared with this tensor", 0) == 0);
  p = Pointers(a);
  p.p[SSMTUNE_STEP_OUT] = p.p[SSMTUNE_STEP_X];
  CHECK(message(p).find("overlaps") != std::string::npos);
  p = Pointers(a);
  p.p[SSMTUNE_STEP_STATE_INDICES] = static_cast<const char*>(at(10)) + 2;
  CHECK(message(p).find("state_indices") != std::string::npos);
}

}  // namespace
}  // namespace ssmtune

namespace ssmtune {
namespace {

TEST_CASE("$SSMTUNE_FORCE_CONFIG takes one step config", "[runtime]") {
  auto f = parse_forced_configs("step.D32.L4.V4.fp32");
  INFO(f.status().to_string());
  REQUIRE(f.is_ok());
  REQUIRE(f->step.has_value());
  CHECK(f->step->key() == "step.D32.L4.V4.fp32");
  CHECK_FALSE(f->fwd.has_value());
  auto twice = parse_forced_configs("step.D32.L4.V4.fp32,step.D64.L2.V8.fp32");
  REQUIRE_FALSE(twice.is_ok());
  CHECK(twice.status().message().find("a second config for the step") != std::string::npos);
}

}  // namespace
}  // namespace ssmtune
