// FwdProblem validation (one check per message), keys, traffic, and the
// validation of a call's tensors against its problem.
#include "tuner/fwd/problem.h"

#include <catch2/catch.hpp>
#include <vector>

namespace ssmtune {
namespace {

std::string error_of(const Status& s) { return s.is_ok() ? "ok" : s.message(); }

FwdProblem mamba_problem() {
  FwdProblem p;
  p.batch = 8;
  p.dim = 1536;
  p.seqlen = 2048;
  p.dstate = 16;
  return p;
}

TEST_CASE("dtype names parse and print", "[tuner]") {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
    auto r = parse_dtype(to_string(t));
    REQUIRE(r.is_ok());
    CHECK(*r == t);
  }
  CHECK(std::string(to_string(DType::kBF16)) == "bf16");
  CHECK(dtype_bytes(DType::kF32) == 4);
  CHECK(dtype_bytes(DType::kF16) == 2);
  CHECK(dtype_bytes(DType::kBF16) == 2);
  auto bad = parse_dtype("float16");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message() == "unknown dtype 'float16' (expected fp32, fp16 or bf16)");
}

TEST_CASE("problem validation names the field", "[tuner]") {
  CHECK(mamba_problem().validate().is_ok());
  auto with = [](auto change) {
    FwdProblem p = mamba_problem();
    change(p);
    return error_of(p.validate());
  };
  CHECK(with([](FwdProblem& p) { p.batch = 0; }) == "batch must be >= 1 (got 0)");
  CHECK(with([](FwdProblem& p) { p.dim = -3; }) == "dim must be >= 1 (got -3)");
  CHECK(with([](FwdProblem& p) { p.seqlen = 0; }) == "seqlen must be >= 1 (got 0)");
  CHECK(with([](FwdProblem& p) { p.dstate = 0; }) == "dstate must be in [1, 256] (got 0)");
  CHECK(with([](FwdProblem& p) { p.dstate = 257; }) == "dstate must be in [1, 256] (got 257)");
  CHECK(with([](FwdProblem& p) { p.groups = 0; }) == "groups must be >= 1 (got 0)");
  CHECK(with([](FwdProblem& p) { p.groups = 5; }) == "dim (1536) is not divisible by groups (5)");
  CHECK(with([](FwdProblem& p) {
          p.groups = 2;
          p.variable_b = p.variable_c = false;
        }) == "groups must be 1 when B and C are both constant (got 2)");
  CHECK(with([](FwdProblem& p) {
          p.batch = int64_t{1} << 30;
          p.dim = int64_t{1} << 30;
          p.seqlen = int64_t{1} << 30;
        }).find("batch * dim * seqlen") == 0);
  // The kernels take 32-bit sizes.
  CHECK(with([](FwdProblem& p) { p.dim = int64_t{1} << 32; }) ==
        "dim must be <= 2147483647 (the kernels take 32-bit sizes; got 4294967296)");
  CHECK(with([](FwdProblem& p) { p.seqlen = kMaxSize + 1; }).find("seqlen must be <=") == 0);
  CHECK(with([](FwdProblem& p) { p.batch = kMaxSize + 1; }).find("batch must be <=") == 0);
  CHECK(with([](FwdProblem& p) {
          p.dim = p.groups = p.batch = int64_t{1} << 20;
          p.dstate = 256;
          p.seqlen = int64_t{1} << 14;
        }).find("batch * groups * dstate * seqlen") == 0);
  // Large single sizes are fine: seqlen and dim up to 2^31 - 1.
  CHECK(with([](FwdProblem& p) {
          p.batch = 1;
          p.dim = 1;
          p.seqlen = (int64_t{1} << 31) - 1;
        }) == "ok");
  CHECK(with([](FwdProblem& p) {
          p.groups = 3;
          p.variable_c = false;
        }) == "ok");
}

TEST_CASE("problem keys round-trip and reject non-canonical text", "[tuner]") {
  FwdProblem p = mamba_problem();
  CHECK(p.key() == "fwd:b8.d1536.l2048.n16.g1.fp32.vB.vC");
  // Keys from before kernel families (no prefix) still parse.
  auto legacy = FwdProblem::from_key("b8.d1536.l2048.n16.g1.fp32.vB.vC");
  REQUIRE(legacy.is_ok());
  CHECK(*legacy == p);
  p.dtype = DType::kBF16;
  p.groups = 4;
  p.has_d = p.has_z = p.has_delta_bias = p.delta_softplus = true;
  p.return_last_state = p.has_initial_state = true;
  CHECK(p.key() == "fwd:b8.d1536.l2048.n16.g4.bf16.vB.vC.D.z.bias.sp.last.h0");
  CHECK(p.family_key() == "bf16.vB.vC.D.z.bias.sp.last.h0");
  // Every one of the 256 flag combinations.
  for (int m = 0; m < 256; ++m) {
    FwdProblem q;
    q.batch = 3;
    q.dim = 15;
    q.seqlen = 1001;
    q.dstate = 7;
    q.dtype = m % 3 == 0 ? DType::kF16 : DType::kF32;
    bool* flags[] = {&q.variable_b,
                     &q.variable_c,
                     &q.has_d,
                     &q.has_z,
                     &q.has_delta_bias,
                     &q.delta_softplus,
                     &q.return_last_state,
                     &q.has_initial_state};
    for (int i = 0; i < 8; ++i) *flags[i] = (m >> i) & 1;
    q.groups = q.variable_b || q.variable_c ? 5 : 1;
    INFO(q.key());
    auto back = FwdProblem::from_key(q.key());
    REQUIRE(back.is_ok());
    CHECK(*back == q);
    CHECK(back->family_key() == q.family_key());
  }
  FwdProblem other = p;
  other.seqlen = 4096;
  other.groups = 1;
  CHECK(other.family_key() == p.family_key());
  CHECK_FALSE(other == p);
  other.has_z = false;
  CHECK(other.family_key() != p.family_key());

  for (const char* bad :
       {"", "b8", "b8.d1536.l2048.n16.g1", "b8.d1536.l2048.n16.g1.fp64",
        "b08.d1536.l2048.n16.g1.fp32", "b8.d1536.l2048.n16.g1.fp32.vC.vB",
        "b8.d1536.l2048.n16.g1.fp32.vB.vB", "b8.d1536.l2048.n16.g1.fp32.w",
        "b8.d1536.l2048.n16.g1.fp32.", "d1536.b8.l2048.n16.g1.fp32", "b8.d1536.l0.n16.g1.fp32",
        "b8.d1536.l2048.n16.g5.fp32.vB", "b8.d1536.l2048.n16.g1.fp32.vB.vC ",
        "b-8.d1536.l2048.n16.g1.fp32", "b99999999999999999999.d1.l1.n1.g1.fp32",
        "fwd:", "bwd:b8.d1536.l2048.n16.g1.fp32", "fwd:fwd:b8.d1536.l2048.n16.g1.fp32"}) {
    INFO(bad);
    auto r = FwdProblem::from_key(bad);
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().code() == Code::kInvalidArgument);
    CHECK(r.status().message().find("bad problem key") == 0);
  }
  CHECK(FwdProblem::from_key("b8.d1536.l2048.n16.g1.fp32.vC.vB").status().message() ==
        "bad problem key 'b8.d1536.l2048.n16.g1.fp32.vC.vB': not in canonical form (expected "
        "'fwd:b8.d1536.l2048.n16.g1.fp32.vB.vC')");
  CHECK(FwdProblem::from_key("b8.d1536.l0.n16.g1.fp32").status().message() ==
        "bad problem key 'b8.d1536.l0.n16.g1.fp32': seqlen must be >= 1 (got 0)");
}

TEST_CASE("min_bytes counts each tensor once", "[tuner]") {
  FwdProblem p;
  p.batch = 3;
  p.dim = 10;
  p.seqlen = 7;
  p.dstate = 5;
  p.groups = 2;
  p.dtype = DType::kF16;
  // u, delta, out: 3 * 210 * 2; B, C variable: 2 * (3*2*5*7 = 210) * 2; A: 50 * 4.
  CHECK(p.min_bytes() == 1260 + 840 + 200);
  p.has_z = true;              // z, out_z: 2 * 210 * 2 = 840
  p.has_d = true;              // 40
  p.has_delta_bias = true;     // 40
  p.variable_c = false;        // C constant (10, 5) fp32: 200 instead of 420
  p.has_initial_state = true;  // h0 (3, 10, 5) fp32: 600
  p.return_last_state = true;  // 600
  CHECK(p.min_bytes() == 1260 + 840 + 40 + 40 + 420 + 200 + 200 + 600 + 600);
  CHECK(p.exp_count() == 3.0 * 10 * 5 * 7);
}

// Fake device addresses, never dereferenced: each tensor in its own 1 GiB
// slot, contiguous.
TensorArg arg(int slot, DType dtype, std::vector<int64_t> shape) {
  TensorArg t;
  t.data = reinterpret_cast<const void*>(static_cast<uintptr_t>(slot + 1) << 30);
  t.dtype = dtype;
  t.rank = static_cast<int>(shape.size());
  int64_t stride = 1;
  for (int i = t.rank - 1; i >= 0; --i) {
    t.shape[i] = shape[i];
    t.stride[i] = stride;
    stride *= shape[i];
  }
  return t;
}

FwdTensors tensors_for(const FwdProblem& p) {
  const DType dt = p.dtype, f32 = DType::kF32;
  const std::vector<int64_t> bdl = {p.batch, p.dim, p.seqlen};
  const std::vector<int64_t> var = {p.batch, p.groups, p.dstate, p.seqlen};
  const std::vector<int64_t> cst = {p.dim, p.dstate};
  const std::vector<int64_t> state = {p.batch, p.dim, p.dstate};
  FwdTensors t;
  t.u = arg(0, dt, bdl);
  t.delta = arg(1, dt, bdl);
  t.A = arg(2, f32, cst);
  t.B = p.variable_b ? arg(3, dt, var) : arg(3, f32, cst);
  t.C = p.variable_c ? arg(4, dt, var) : arg(4, f32, cst);
  if (p.has_d) t.D = arg(5, f32, {p.dim});
  if (p.has_z) t.z = arg(6, dt, bdl);
  if (p.has_delta_bias) t.delta_bias = arg(7, f32, {p.dim});
  if (p.has_initial_state) t.h0 = arg(8, f32, state);
  t.out = arg(9, dt, bdl);
  if (p.has_z) t.out_z = arg(10, dt, bdl);
  if (p.return_last_state) t.last_state = arg(11, f32, state);
  return t;
}

TEST_CASE("a call's tensors are checked against the problem", "[tuner]") {
  FwdProblem p = mamba_problem();
  CHECK(error_of(validate_fwd_tensors(p, tensors_for(p))) == "ok");
  FwdProblem full = p;
  full.dtype = DType::kBF16;
  full.groups = 3;
  full.variable_c = false;
  full.has_d = full.has_z = full.has_delta_bias = full.delta_softplus = true;
  full.return_last_state = full.has_initial_state = true;
  CHECK(error_of(validate_fwd_tensors(full, tensors_for(full))) == "ok");

  auto with = [](const FwdProblem& q, auto change) {
    FwdTensors t = tensors_for(q);
    change(t);
    return error_of(validate_fwd_tensors(q, t));
  };
  // The problem itself first.
  FwdProblem bad = p;
  bad.seqlen = 0;
  CHECK(with(bad, [](FwdTensors&) {}) == "seqlen must be >= 1 (got 0)");

  // Presence.
  CHECK(with(p, [](FwdTensors& t) { t.u.data = nullptr; }) == "u: required, got a null pointer");
  CHECK(with(p, [](FwdTensors& t) { t.delta.data = nullptr; }) ==
        "delta: required, got a null pointer");
  CHECK(with(p, [](FwdTensors& t) { t.A.data = nullptr; }) == "A: required, got a null pointer");
  CHECK(with(p, [](FwdTensors& t) { t.B.data = nullptr; }) == "B: required, got a null pointer");
  CHECK(with(p, [](FwdTensors& t) { t.C.data = nullptr; }) == "C: required, got a null pointer");
  CHECK(with(p, [](FwdTensors& t) { t.out.data = nullptr; }) ==
        "out: required, got a null pointer");
  CHECK(with(full, [](FwdTensors& t) { t.D.data = nullptr; }) == "D: required when has_d is set");
  CHECK(with(full, [](FwdTensors& t) { t.z.data = nullptr; }) == "z: required when has_z is set");
  CHECK(with(full, [](FwdTensors& t) { t.out_z.data = nullptr; }) ==
        "out_z: required when has_z is set");
  CHECK(with(full, [](FwdTensors& t) { t.delta_bias.data = nullptr; }) ==
        "delta_bias: required when has_delta_bias is set");
  CHECK(with(full, [](FwdTensors& t) { t.h0.data = nullptr; }) ==
        "h0: required when has_initial_state is set");
  CHECK(with(full, [](FwdTensors& t) { t.last_state.data = nullptr; }) ==
        "last_state: required when return_last_state is set");
  const FwdTensors extra = tensors_for(full);
  CHECK(with(p, [&](FwdTensors& t) { t.D = extra.D; }) == "D: given, but has_d is not set");
  CHECK(with(p, [&](FwdTensors& t) { t.z = extra.z; }) == "z: given, but has_z is not set");
  CHECK(with(p, [&](FwdTensors& t) { t.out_z = extra.out_z; }) ==
        "out_z: given, but has_z is not set");
  CHECK(with(p, [&](FwdTensors& t) { t.delta_bias = extra.delta_bias; }) ==
        "delta_bias: given, but has_delta_bias is not set");
  CHECK(with(p, [&](FwdTensors& t) { t.h0 = extra.h0; }) ==
        "h0: given, but has_initial_state is not set");
  CHECK(with(p, [&](FwdTensors& t) { t.last_state = extra.last_state; }) ==
        "last_state: given, but return_last_state is not set");

  // Shapes.
  CHECK(with(p, [](FwdTensors& t) {
          t.B = arg(3, DType::kF32, {8, 16, 2048});
        }) == "B: expected shape (8, 1, 16, 2048), got (8, 16, 2048)");
  CHECK(with(p, [](FwdTensors& t) {
          t.u = arg(0, DType::kF32, {8, 1536, 2047});
        }) == "u: expected shape (8, 1536, 2048), got (8, 1536, 2047)");
  CHECK(with(p, [](FwdTensors& t) { t.A.rank = 7; }) == "A: expected shape (1536, 16), got rank 7");
  CHECK(with(full, [](FwdTensors& t) {
          t.C = arg(4, DType::kF32, {8, 3, 16, 2048});
        }) == "C: expected shape (1536, 16), got (8, 3, 16, 2048)");
  CHECK(with(full, [](FwdTensors& t) { t.D = arg(5, DType::kF32, {1535}); }) ==
        "D: expected shape (1536), got (1535)");
  CHECK(with(full, [](FwdTensors& t) {
          t.h0 = arg(8, DType::kF32, {8, 1536});
        }) == "h0: expected shape (8, 1536, 16), got (8, 1536)");
  CHECK(with(full, [](FwdTensors& t) {
          t.last_state = arg(11, DType::kF32, {1, 1536, 16});
        }) == "last_state: expected shape (8, 1536, 16), got (1, 1536, 16)");
  CHECK(with(full, [](FwdTensors& t) {
          t.out_z = arg(10, DType::kBF16, {8, 2048, 1536});
        }) == "out_z: expected shape (8, 1536, 2048), got (8, 2048, 1536)");

  // Dtypes.
  CHECK(with(p, [](FwdTensors& t) { t.u.dtype = DType::kBF16; }) ==
        "u: dtype bf16 does not match the problem's fp32");
  CHECK(with(full, [](FwdTensors& t) { t.B.dtype = DType::kF32; }) ==
        "B: dtype fp32 does not match the problem's bf16");
  CHECK(with(full, [](FwdTensors& t) { t.C.dtype = DType::kBF16; }) ==
        "C: dtype bf16, expected fp32 (always fp32)");
  CHECK(with(p, [](FwdTensors& t) { t.A.dtype = DType::kF16; }) ==
        "A: dtype fp16, expected fp32 (always fp32)");
  CHECK(with(full, [](FwdTensors& t) { t.last_state.dtype = DType::kBF16; }) ==
        "last_state: dtype bf16, expected fp32 (always fp32)");
  CHECK(with(full, [](FwdTensors& t) { t.z.dtype = DType::kF16; }) ==
        "z: dtype fp16 does not match the problem's bf16");

  // Strides and alignment.
  CHECK(with(p, [](FwdTensors& t) { t.out.stride[2] = 2048; }) ==
        "out: last dimension must be contiguous (stride 1), got 2048");
  CHECK(with(p, [](FwdTensors& t) { t.delta.stride[0] = 0; }) ==
        "delta: stride of dimension 0 must be >= 1, got 0");
  CHECK(with(p, [](FwdTensors& t) { t.u.stride[1] = -2048; }) ==
        "u: stride of dimension 1 must be >= 1, got -2048");
  CHECK(with(p, [](FwdTensors& t) {
          t.u.data = static_cast<const char*>(t.u.data) + 2;
        }).find("u: pointer 0x") == 0);
  CHECK(with(full, [](FwdTensors& t) { t.z.data = static_cast<const char*>(t.z.data) + 2; }) ==
        "ok");  // bf16: 2-byte alignment suffices
  CHECK(with(full, [](FwdTensors& t) {
          t.z.data = static_cast<const char*>(t.z.data) + 1;
        }).find("not aligned to 2 bytes (the element size)") != std::string::npos);
  // Padded rows (outer strides larger than contiguous) are fine.
  CHECK(with(p, [](FwdTensors& t) {
          t.u.stride[1] = 4096;
          t.u.stride[0] = 1536 * 4096;
        }) == "ok");

  // Overlap: outputs against inputs and each other, by byte extent.
  CHECK(with(p, [](FwdTensors& t) { t.out.data = t.u.data; }) == "out: overlaps input u");
  CHECK(with(p, [](FwdTensors& t) {
          // Ends one byte before C starts: no overlap.
          t.out.data = static_cast<const char*>(t.C.data) - 8 * 1536 * 2048 * 4;
        }) == "ok");
  CHECK(with(p, [](FwdTensors& t) {
          t.out.data = static_cast<const char*>(t.C.data) - 8 * 1536 * 2048 * 4 + 4;
        }) == "out: overlaps input C");
  CHECK(with(full, [](FwdTensors& t) { t.out_z.data = t.out.data; }) ==
        "out_z: overlaps output out");
  CHECK(with(full, [](FwdTensors& t) {
          t.last_state.data = static_cast<const char*>(t.h0.data) + 4 * 100;
        }) == "last_state: overlaps input h0");
  CHECK(with(full, [](FwdTensors& t) {
          t.out.data = static_cast<const char*>(t.delta_bias.data) - 64;
        }) == "out: overlaps input delta_bias");
}

}  // namespace
}  // namespace ssmtune
