// Decode-step problem keys, validation, traffic, and the check of one
// call's tensors (shapes, dtypes, broadcast strides, indices, overlap).
#include "tuner/step/problem.h"

#include <catch2/catch.hpp>

#include <vector>

namespace ssmtune::step {
namespace {

StepProblem mamba1(int64_t batch, int64_t dim, int64_t dstate, DType dt) {
  StepProblem p;
  p.batch = batch;
  p.headdim = dim;
  p.dstate = dstate;
  p.dtype = dt;
  p.has_d = p.has_z = p.has_dt_bias = p.softplus = true;
  return p;
}

TEST_CASE("step problem keys round-trip and reject what is not canonical", "[step]") {
  StepProblem p = mamba1(64, 5120, 16, DType::kBF16);
  CHECK(p.key() == "step:b64.h1.p5120.n16.g1.bf16.sfp32.D.z.bias.sp");
  auto back = StepProblem::from_key(p.key());
  REQUIRE(back.is_ok());
  CHECK(*back == p);
  p.heads = 80;
  p.headdim = 64;
  p.groups = 8;
  p.dstate = 128;
  p.state_dtype = DType::kBF16;
  p.has_indices = true;
  CHECK(p.key() == "step:b64.h80.p64.n128.g8.bf16.sbf16.D.z.bias.sp.idx");
  REQUIRE(StepProblem::from_key(p.key()).is_ok());
  for (const char* bad :
       {"step:b64.h1.p5120.n16.g1.bf16",  // no state dtype
        "fwd:b64.h1.p5120.n16.g1.bf16.sfp32",
        "step:b64.h1.p5120.n16.g1.bf16.sfp32.z.D",  // flag order
        "step:b064.h1.p5120.n16.g1.bf16.sfp32",
        "step:b64.h1.p5120.n300.g1.bf16.sfp32",  // dstate > 256
        "step:b64.h3.p64.n16.g2.bf16.sfp32",     // groups do not divide heads
        "step:b70000.h1.p64.n16.g1.bf16.sfp32",  // batch over grid y
        "step:b64.h1.p64.n16.g1.bf16.sfp32.idx.idx", "step:b64.h1.p64.n16.g1.bf16.sint8"}) {
    INFO(bad);
    CHECK_FALSE(StepProblem::from_key(bad).is_ok());
  }
}

TEST_CASE("step problems validate sizes with the argument named", "[step]") {
  StepProblem p = mamba1(1, 64, 16, DType::kF32);
  CHECK(p.validate().is_ok());
  p.batch = 0;
  CHECK(p.validate().message().find("batch") != std::string::npos);
  p.batch = 1;
  p.heads = 6;
  p.groups = 4;
  CHECK(p.validate().message().find("groups") != std::string::npos);
}

TEST_CASE("step traffic counts the state twice and A once", "[step]") {
  StepProblem p = mamba1(2, 8, 4, DType::kF16);
  p.has_d = p.has_z = p.has_dt_bias = false;
  // state 2 x 2*8*4*4, A 8*4*4, x dt out 3*2*8*2, B C 2*2*1*4*2.
  CHECK(p.min_bytes() == 2.0 * 2 * 8 * 4 * 4 + 8 * 4 * 4 + 3.0 * 2 * 8 * 2 + 2.0 * 2 * 4 * 2);
  CHECK(p.exp_count() == 2.0 * 8 * 4);
}

// Fake device tensors over host addresses (validation never dereferences).
struct Fake {
  std::vector<double> mem = std::vector<double>(1 << 16);
  size_t next = 0;
  TensorArg make(DType dt, std::vector<int64_t> shape) {
    TensorArg t;
    t.data = reinterpret_cast<const char*>(mem.data()) + next;
    t.dtype = dt;
    t.rank = static_cast<int>(shape.size());
    int64_t s = 1;
    for (int i = t.rank - 1; i >= 0; --i) {
      t.shape[i] = shape[static_cast<size_t>(i)];
      t.stride[i] = s;
      s *= shape[static_cast<size_t>(i)];
    }
    next += static_cast<size_t>(s * dtype_bytes(dt) + 64) / 64 * 64;
    return t;
  }
};

StepTensors tensors_for(Fake& f, const StepProblem& p) {
  StepTensors t;
  t.state = f.make(p.state_dtype, {p.batch, p.heads, p.headdim, p.dstate});
  t.x = f.make(p.dtype, {p.batch, p.heads, p.headdim});
  t.dt = f.make(p.dtype, {p.batch, p.heads, p.headdim});
  t.A = f.make(DType::kF32, {p.heads, p.headdim, p.dstate});
  t.B = f.make(p.dtype, {p.batch, p.groups, p.dstate});
  t.C = f.make(p.dtype, {p.batch, p.groups, p.dstate});
  if (p.has_d) t.D = f.make(DType::kF32, {p.heads, p.headdim});
  if (p.has_z) t.z = f.make(p.dtype, {p.batch, p.heads, p.headdim});
  if (p.has_dt_bias) t.dt_bias = f.make(p.dtype, {p.heads, p.headdim});
  t.out = f.make(p.dtype, {p.batch, p.heads, p.headdim});
  return t;
}

TEST_CASE("step tensors: shapes, dtypes, broadcasts, indices and overlap", "[step]") {
  StepProblem p = mamba1(4, 32, 16, DType::kBF16);
  p.heads = 2;
  p.headdim = 16;
  Fake f;
  StepTensors t = tensors_for(f, p);
  REQUIRE(validate_step_tensors(p, t).is_ok());  // dt_bias in the input dtype is accepted

  auto fails_with = [&](StepTensors bad, const char* text) {
    const Status s = validate_step_tensors(p, bad);
    INFO(s.to_string());
    CHECK_FALSE(s.is_ok());
    CHECK(s.message().find(text) != std::string::npos);
  };
  StepTensors bad = t;
  bad.x.dtype = DType::kF32;
  fails_with(bad, "x: dtype fp32");
  bad = t;
  bad.A.dtype = DType::kBF16;
  fails_with(bad, "A: dtype bf16, expected fp32");
  bad = t;
  bad.D = TensorArg{};
  fails_with(bad, "D: required when has_d");
  bad = t;
  bad.B.shape[1] = 2;
  fails_with(bad, "B: expected shape (4, 1, 16)");
  // Mamba-2's tied head dims: A and dt broadcast with stride 0.
  StepTensors tied = t;
  tied.A.stride[1] = tied.A.stride[2] = 0;
  tied.dt.stride[2] = 0;
  CHECK(validate_step_tensors(p, tied).is_ok());
  // ... but an output must not: two channels would write one element.
  bad = t;
  bad.out.stride[2] = 0;
  fails_with(bad, "out: stride of dimension 2 is 0");
  bad = t;
  bad.state.stride[0] = -1;
  fails_with(bad, "state: stride of dimension 0 must be >= 0");
  bad = t;
  bad.out.data = bad.x.data;
  fails_with(bad, "out: overlaps input x");
  bad = t;
  bad.state.data = bad.out.data;
  fails_with(bad, "overlaps");

  // Indices: required with the flag, int32 or int64 of shape (batch,);
  // the state may then have other rows than the batch.
  std::vector<int64_t> idx(4);
  StepTensors with = t;
  with.state_indices.data = idx.data();
  with.state_indices.bytes = 8;
  with.state_indices.size = 4;
  fails_with(with, "state_indices: given, but has_indices");
  p.has_indices = true;
  fails_with(t, "state_indices: required");
  CHECK(validate_step_tensors(p, with).is_ok());
  with.state = f.make(p.state_dtype, {9, p.heads, p.headdim, p.dstate});
  CHECK(validate_step_tensors(p, with).is_ok());
  bad = with;
  bad.state_indices.bytes = 2;
  fails_with(bad, "int32 or int64");
  bad = with;
  bad.state_indices.size = 3;
  fails_with(bad, "state_indices: expected shape (4)");
  bad = with;
  bad.state_indices.data = bad.out.data;
  fails_with(bad, "out: overlaps input state_indices");
}

}  // namespace
}  // namespace ssmtune::step
