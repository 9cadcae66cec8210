// The C ABI's argument errors and its behaviour without a GPU.
#include "ssmtune/ssmtune.h"

#include <catch2/catch.hpp>
#include <cstddef>
#include <initializer_list>
#include <string>

#include "jit/driver.h"
#include "support/c_tensors.h"

namespace {

using ssmtune::testing::c_tensor;

TEST_CASE("C ABI: null arguments are invalid, with a message", "[runtime]") {
  CHECK(ssmtune_runtime_create(nullptr, 0, nullptr) == SSMTUNE_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(ssmtune_last_error()).find("out must not be NULL") != std::string::npos);
  ssmtune_fwd_args args{};
  CHECK(ssmtune_selective_scan_fwd(nullptr, &args, nullptr) == SSMTUNE_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(ssmtune_last_error()).find("runtime") != std::string::npos);
  char buf[64];
  CHECK(ssmtune_explain(nullptr, &args, buf, sizeof buf) == SSMTUNE_ERROR_INVALID_ARGUMENT);
  ssmtune_runtime_destroy(nullptr);  // a no-op
}

TEST_CASE("C ABI: prepared calls reject null arguments", "[runtime]") {
  ssmtune_fwd_args layout{};
  ssmtune_fwd_plan* plan = reinterpret_cast<ssmtune_fwd_plan*>(0x1);
  CHECK(ssmtune_fwd_prepare(nullptr, &layout, &plan) == SSMTUNE_ERROR_INVALID_ARGUMENT);
  CHECK(plan == nullptr);
  CHECK(std::string(ssmtune_last_error()).find("runtime") != std::string::npos);
  CHECK(ssmtune_fwd_prepare(nullptr, &layout, nullptr) == SSMTUNE_ERROR_INVALID_ARGUMENT);
  const void* ptrs[SSMTUNE_FWD_NUM_TENSORS] = {};
  CHECK(ssmtune_fwd_launch(nullptr, ptrs, nullptr, nullptr) == SSMTUNE_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(ssmtune_last_error()).find("plan must not be NULL") != std::string::npos);
  CHECK(ssmtune_fwd_plan_scratch_bytes(nullptr) == 0);
  char buf[16];
  CHECK(ssmtune_fwd_plan_explain(nullptr, buf, sizeof buf) == SSMTUNE_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("C ABI: backward entry points reject null arguments", "[runtime]") {
  ssmtune_bwd_args args{};
  CHECK(ssmtune_selective_scan_bwd(nullptr, &args, nullptr) == SSMTUNE_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(ssmtune_last_error()).find("runtime must not be NULL") != std::string::npos);
  char buf[64];
  CHECK(ssmtune_explain_bwd(nullptr, &args, buf, sizeof buf) == SSMTUNE_ERROR_INVALID_ARGUMENT);
  ssmtune_bwd_plan* plan = reinterpret_cast<ssmtune_bwd_plan*>(0x1);
  CHECK(ssmtune_bwd_prepare(nullptr, &args, &plan) == SSMTUNE_ERROR_INVALID_ARGUMENT);
  CHECK(plan == nullptr);
  CHECK(ssmtune_bwd_prepare(nullptr, &args, nullptr) == SSMTUNE_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(ssmtune_last_error()).find("out must not be NULL") != std::string::npos);
  const void* ptrs[SSMTUNE_BWD_NUM_TENSORS] = {};
  CHECK(ssmtune_bwd_launch(nullptr, ptrs, nullptr, nullptr) == SSMTUNE_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(ssmtune_last_error()).find("plan must not be NULL") != std::string::npos);
  CHECK(ssmtune_bwd_plan_scratch_bytes(nullptr) == 0);
  CHECK(ssmtune_bwd_plan_explain(nullptr, buf, sizeof buf) == SSMTUNE_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("C ABI: saved-states entry points reject null arguments", "[runtime]") {
  CHECK(ssmtune_bwd_plan_states_interval(nullptr) == 0);
  CHECK(ssmtune_bwd_plan_states_scratch_bytes(nullptr) == 0);
  size_t bytes = 7;
  CHECK(ssmtune_fwd_plan_prepare_states(nullptr, 16, &bytes) == SSMTUNE_ERROR_INVALID_ARGUMENT);
  CHECK(bytes == 0);
  CHECK(std::string(ssmtune_last_error()).find("plan must not be NULL") != std::string::npos);
  CHECK(ssmtune_fwd_plan_prepare_states(nullptr, 16, nullptr) == SSMTUNE_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(ssmtune_last_error()).find("bytes must not be NULL") != std::string::npos);
  const void* ptrs[SSMTUNE_BWD_NUM_TENSORS] = {};
  float states[4];
  CHECK(ssmtune_fwd_launch_saving(nullptr, ptrs, nullptr, states, 16, nullptr) ==
        SSMTUNE_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(ssmtune_last_error()).find("plan must not be NULL") != std::string::npos);
  CHECK(ssmtune_bwd_launch_saved(nullptr, ptrs, nullptr, states, 16, nullptr) ==
        SSMTUNE_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(ssmtune_last_error()).find("plan must not be NULL") != std::string::npos);
  // A plan that is not NULL still needs its states buffer (checked before the plan is used).
  const auto* fake_fwd = reinterpret_cast<const ssmtune_fwd_plan*>(0x1);
  const auto* fake_bwd = reinterpret_cast<const ssmtune_bwd_plan*>(0x1);
  CHECK(ssmtune_fwd_launch_saving(fake_fwd, ptrs, nullptr, nullptr, 16, nullptr) ==
        SSMTUNE_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(ssmtune_last_error()).find("states must not be NULL") != std::string::npos);
  CHECK(ssmtune_bwd_launch_saved(fake_bwd, ptrs, nullptr, nullptr, 16, nullptr) ==
        SSMTUNE_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(ssmtune_last_error()).find("states must not be NULL") != std::string::npos);
}

TEST_CASE("C ABI: the backward's pointer order is its struct's field order", "[runtime]") {
  // Bindings fill ptrs from ssmtune_bwd_args' fields in order: 21 tensors.
  CHECK(SSMTUNE_BWD_NUM_TENSORS == 21);
  CHECK(offsetof(ssmtune_bwd_args, dh0) ==
        offsetof(ssmtune_bwd_args, u) + SSMTUNE_BWD_DH0 * sizeof(ssmtune_tensor));
  CHECK(offsetof(ssmtune_bwd_args, dout) ==
        offsetof(ssmtune_bwd_args, u) + SSMTUNE_BWD_DOUT * sizeof(ssmtune_tensor));
  CHECK(offsetof(ssmtune_bwd_args, delta_softplus) ==
        offsetof(ssmtune_bwd_args, u) + SSMTUNE_BWD_NUM_TENSORS * sizeof(ssmtune_tensor));
}

TEST_CASE("C ABI: version", "[runtime]") {
  CHECK(std::string(ssmtune_version()) == "0.1.0");
  CHECK(ssmtune_abi_version() == 5);
}

TEST_CASE("C ABI: without a driver, create says so", "[runtime]") {
  if (ssmtune::jit::Driver::get().is_ok()) return;  // the GPU suite covers this case
  ssmtune_runtime* rt = reinterpret_cast<ssmtune_runtime*>(0x1);
  CHECK(ssmtune_runtime_create("", 0, &rt) == SSMTUNE_ERROR_NO_DRIVER);
  CHECK(rt == nullptr);
  CHECK(std::string(ssmtune_last_error()).find("no CUDA driver found") != std::string::npos);
}

TEST_CASE("C ABI: the problem key of a forward layout, without a GPU", "[runtime]") {
  ssmtune_fwd_args a{};
  a.u = c_tensor(SSMTUNE_BF16, {2, 64, 100});
  a.delta = c_tensor(SSMTUNE_BF16, {2, 64, 100});
  a.A = c_tensor(SSMTUNE_FP32, {64, 16});
  a.B = c_tensor(SSMTUNE_BF16, {2, 1, 16, 100});
  a.C = c_tensor(SSMTUNE_FP32, {64, 16});
  a.D = c_tensor(SSMTUNE_FP32, {64});
  a.z = c_tensor(SSMTUNE_BF16, {2, 64, 100});
  a.out = c_tensor(SSMTUNE_BF16, {2, 64, 100});
  a.out_z = c_tensor(SSMTUNE_BF16, {2, 64, 100});
  a.delta_softplus = 1;
  char buf[128];
  REQUIRE(ssmtune_fwd_problem_key(&a, buf, sizeof buf) == SSMTUNE_OK);
  CHECK(std::string(buf) == "fwd:b2.d64.l100.n16.g1.bf16.vB.D.z.sp");
  CHECK(std::string(ssmtune_last_error()).empty());

  char small[8];
  CHECK(ssmtune_fwd_problem_key(&a, small, sizeof small) == SSMTUNE_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(ssmtune_last_error()).find("cannot hold the key") != std::string::npos);
  CHECK(std::string(small).empty());

  a.delta = c_tensor(SSMTUNE_BF16, {2, 64, 99});  // validated as prepare validates
  CHECK(ssmtune_fwd_problem_key(&a, buf, sizeof buf) == SSMTUNE_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(ssmtune_last_error()).find("delta") != std::string::npos);
  CHECK(ssmtune_fwd_problem_key(nullptr, buf, sizeof buf) == SSMTUNE_ERROR_INVALID_ARGUMENT);
  CHECK(ssmtune_fwd_problem_key(&a, nullptr, 4) == SSMTUNE_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("C ABI: ssmtune_tune rejects null arguments and clears its result", "[runtime]") {
  ssmtune_tune_result r{};
  r.found = 7;
  r.config[0] = 'x';
  CHECK(ssmtune_tune(nullptr, "fwd:b1.d4.l8.n2.g1.fp32.vB.vC", nullptr, nullptr, nullptr, &r) ==
        SSMTUNE_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(ssmtune_last_error()).find("runtime must not be NULL") != std::string::npos);
  CHECK(r.found == 0);
  CHECK(r.config[0] == '\0');
  CHECK(ssmtune_tune(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr) ==
        SSMTUNE_ERROR_INVALID_ARGUMENT);
}

}  // namespace
