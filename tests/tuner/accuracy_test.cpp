// Error statistics on synthetic data (poison, NaN, exact perturbations,
// allclose), floors, budgets, verdicts, and whole-run scoring.
#include "tuner/accuracy.h"
#include "tuner/fwd/scoring.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>

#include "tuner/fwd/host_inputs.h"

namespace ssmtune {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// `values` encoded in `dtype`, with elements `poisoned` overwritten by the
// poison pattern.
std::vector<unsigned char> raw(const std::vector<double>& values, DType dtype,
                               const std::vector<size_t>& poisoned = {}) {
  std::vector<unsigned char> bytes = encode(values, dtype);
  const std::vector<unsigned char> poison = poison_pattern(dtype);
  for (size_t i : poisoned) std::memcpy(&bytes[i * poison.size()], poison.data(), poison.size());
  return bytes;
}

TEST_CASE("poison patterns are quiet NaNs in little-endian bytes", "[tuner]") {
  CHECK(poison_pattern(DType::kF32) == std::vector<unsigned char>{0xDE, 0xAD, 0xC0, 0x7F});
  CHECK(poison_pattern(DType::kF16) == std::vector<unsigned char>{0x5A, 0x7E});
  CHECK(poison_pattern(DType::kBF16) == std::vector<unsigned char>{0xDA, 0x7F});
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
    INFO(to_string(t));
    const auto p = poison_pattern(t);
    CHECK(std::isnan(decode(p.data(), 1, t)[0]));
    // A NaN the hardware computes is canonical, so it is not the poison.
    CHECK(encode({std::numeric_limits<double>::quiet_NaN()}, t) != p);
  }
}

TEST_CASE("score tells unwritten elements from computed NaN and Inf", "[tuner]") {
  const std::vector<double> ref = {1, 2, 3, 4, 5, 6, 7};
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
    INFO(to_string(t));
    std::vector<double> got = ref;
    got[4] = std::numeric_limits<double>::quiet_NaN();
    got[5] = -kInf;
    const auto bytes = raw(got, t, {1, 6});
    const ErrorStats s = score(ref, bytes.data(), t, 1e-3, 1e-3);
    CHECK(s.count == 7);
    CHECK(s.unwritten == 2);
    CHECK(s.nan_inf == 2);
    CHECK(s.rel_l2 == kInf);
    CHECK(s.allclose_failures == 4);
    CHECK(s.max_abs == 0);  // the finite elements are exact
  }
  // The decoded overload cannot see poison: it is a NaN like any other.
  std::vector<double> got = ref;
  got[2] = std::numeric_limits<double>::quiet_NaN();
  const ErrorStats s = score(ref, got, 0, 0);
  CHECK(s.unwritten == 0);
  CHECK(s.nan_inf == 1);
  CHECK(s.rel_l2 == kInf);
}

TEST_CASE("score computes each statistic exactly on a constructed error", "[tuner]") {
  // ref (4, 3, 0, 1e-4, 0): |ref| = 5; error (0.75, -1, 0, 1e-4, 0): |err|^2 = 1.5625 + 1e-8.
  // max_rel skips the 1e-4 element (not above 1e-3 * max |ref| = 4e-3).
  const std::vector<double> ref = {4, 3, 0, 1e-4, 0};
  const std::vector<double> got = {4.75, 2, 0, 2e-4, 0};
  const ErrorStats s = score(ref, got, 0, 0);
  CHECK(s.count == 5);
  CHECK(s.unwritten == 0);
  CHECK(s.nan_inf == 0);
  CHECK(s.rel_l2 == Approx(std::sqrt((1.5625 + 1e-8) / (25 + 1e-8))).epsilon(1e-15));
  CHECK(s.max_abs == 1);
  CHECK(s.max_abs_over_max_ref == 0.25);
  CHECK(s.max_rel == Approx(1.0 / 3).epsilon(1e-15));
  // Dyadic values survive every dtype, so the raw path gives the same.
  const std::vector<double> ref2 = {4, 3, 0};
  const std::vector<double> got2 = {4.75, 2, 0};
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
    INFO(to_string(t));
    const auto bytes = raw(got2, t);
    const ErrorStats r = score(ref2, bytes.data(), t, 0, 0);
    CHECK(r.rel_l2 == 0.25);
    CHECK(r.max_rel == Approx(1.0 / 3).epsilon(1e-15));
  }
  // Zero against zero is no error; anything against zero is infinite.
  CHECK(score({0, 0, 0}, {0, 0, 0}, 0, 0).rel_l2 == 0);
  CHECK(score({0, 0, 0}, {0, 1, 0}, 0, 0).rel_l2 == kInf);
}

TEST_CASE("allclose failures count as torch.allclose does", "[tuner]") {
  // |err| <= atol + rtol * |ref| = 0.125 + 0.25 * 1 = 0.375 (exact in binary).
  const std::vector<double> ref = {1, 1, 1, 1, 1, -2, 1};
  const std::vector<double> got = {1.375, 1.5, 0.75, 0.5, 1, -2.625, 1};
  const ErrorStats s = score(ref, got, 0.25, 0.125);
  // Passing: 0.375 (at the limit), 0.25, 0, 0.625 (<= 0.125 + 0.5), 0. Failing: 0.5, 0.5.
  CHECK(s.allclose_failures == 2);
  CHECK(score(ref, got, 0, 0).allclose_failures == 5);
  CHECK(score(ref, got, 1, 1).allclose_failures == 0);
}

TEST_CASE("rounding floors", "[tuner]") {
  FwdProblem p;
  p.batch = 1;
  p.dim = 31;
  p.seqlen = 1001;
  const FwdHostInputs in = make_inputs(p, 3);
  const std::vector<double> ref = in.u;
  // u is fp32: make it not representable first.
  std::vector<double> fine = ref;
  for (double& x : fine) x *= 1.0001234567;
  CHECK(rounding_floor(fine, DType::kBF16) == Approx(1.66e-3).epsilon(0.1));
  CHECK(rounding_floor(fine, DType::kF16) == Approx(2.08e-4).epsilon(0.1));
  CHECK(rounding_floor(fine, DType::kF32) == Approx(2.5e-8).epsilon(0.1));
  CHECK(rounding_floor(ref, DType::kF32) == 0);  // already fp32 values
  CHECK(rounding_floor({0, 0}, DType::kBF16) == 0);
}

TEST_CASE("tolerances and budgets", "[tuner]") {
  CHECK(mamba_tolerance(DType::kF32).rtol == 6e-4);
  CHECK(mamba_tolerance(DType::kF32).atol == 2e-3);
  CHECK(mamba_tolerance(DType::kF16).rtol == 3e-3);
  CHECK(mamba_tolerance(DType::kF16).atol == 5e-3);
  CHECK(mamba_tolerance(DType::kBF16).rtol == 3e-2);
  CHECK(mamba_tolerance(DType::kBF16).atol == 5e-2);

  const ErrorBudget f32 = budget_for(DType::kF32, false, 3e-8);
  CHECK(f32.rel_l2 == Approx(kAccBudgetF32 + 4.5e-8));
  CHECK(f32.defect_factor == kDefectFactor);
  const ErrorBudget bf16 = budget_for(DType::kBF16, false, 2e-3);
  CHECK(bf16.rel_l2 == Approx(3e-3 + kAccBudgetF32));
  const ErrorBudget f64 = budget_for(DType::kF32, true, 3e-8);
  CHECK(f64.rel_l2 == Approx(kAccBudgetF64 + 4.5e-8));
  CHECK(f64.rel_l2 < f32.rel_l2);
  // The defect line is the fp32 one for both accumulation dtypes.
  CHECK(f64.rel_l2 * f64.defect_factor == Approx(f32.rel_l2 * f32.defect_factor));
  const ErrorBudget h64 = budget_for(DType::kF16, true, 3e-4);
  CHECK(h64.rel_l2 * h64.defect_factor ==
        Approx(budget_for(DType::kF16, false, 3e-4).rel_l2 * kDefectFactor));
}

TEST_CASE("classify gives each verdict", "[tuner]") {
  const ErrorBudget budget{1e-3, 10};
  ErrorStats s;
  s.count = 101;
  s.rel_l2 = 9e-4;
  CHECK(classify(s, budget, 5e-4) == Verdict::kInside);
  CHECK(classify(s, budget, 0) == Verdict::kInside);
  s.rel_l2 = 6e-4;  // <= 1.25 * 5e-4
  CHECK(classify(s, budget, 5e-4) == Verdict::kAtLimit);
  CHECK(classify(s, budget, 0) == Verdict::kInside);
  s.rel_l2 = 1.1e-3;
  CHECK(classify(s, budget, 5e-4) == Verdict::kOutside);
  s.rel_l2 = 1e-2;  // exactly 10x: still precision
  CHECK(classify(s, budget, 5e-4) == Verdict::kOutside);
  s.rel_l2 = 1.01e-2;
  CHECK(classify(s, budget, 5e-4) == Verdict::kDefect);
  s.rel_l2 = 1e-5;
  s.unwritten = 1;
  CHECK(classify(s, budget, 5e-4) == Verdict::kDefect);
  s.unwritten = 0;
  s.nan_inf = 1;
  CHECK(classify(s, budget, 5e-4) == Verdict::kDefect);
  s.nan_inf = 0;
  s.rel_l2 = std::numeric_limits<double>::quiet_NaN();
  CHECK(classify(s, budget, 5e-4) == Verdict::kDefect);

  CHECK(std::string(to_string(Verdict::kInside)) == "inside");
  CHECK(std::string(to_string(Verdict::kAtLimit)) == "at-limit");
  CHECK(std::string(to_string(Verdict::kOutside)) == "outside");
  CHECK(std::string(to_string(Verdict::kDefect)) == "defect");
  CHECK(worst(Verdict::kAtLimit, Verdict::kInside) == Verdict::kInside);
  CHECK(worst(Verdict::kOutside, Verdict::kInside) == Verdict::kOutside);
  CHECK(worst(Verdict::kOutside, Verdict::kDefect) == Verdict::kDefect);
  CHECK(worst(Verdict::kAtLimit, Verdict::kAtLimit) == Verdict::kAtLimit);
}

TEST_CASE("score_run judges every output and keeps the worst", "[tuner]") {
  FwdProblem p;
  p.batch = 2;
  p.dim = 9;
  p.seqlen = 33;
  p.dstate = 4;
  p.groups = 3;
  p.dtype = DType::kBF16;
  p.has_z = p.return_last_state = true;
  const FwdHostInputs in = make_inputs(p, 21);
  const FwdHostOutputs ref = reference_fwd(in);
  std::vector<float> last(ref.last_state.begin(), ref.last_state.end());

  // The exact result, rounded: every output sits on its floor.
  const auto out = raw(ref.out, p.dtype);
  auto out_z = raw(ref.out_z, p.dtype);
  FwdRunScore s = score_run(p, false, ref, out.data(), out_z.data(), last.data());
  CHECK(s.has_out_z);
  CHECK(s.has_last_state);
  CHECK(s.floor == Approx(1.66e-3).epsilon(0.3));
  CHECK(s.floor >= rounding_floor(ref.out, p.dtype));
  CHECK(s.budget.rel_l2 == Approx(1.5 * s.floor + kAccBudgetF32));
  CHECK(s.out.rel_l2 == rounding_floor(ref.out, p.dtype));
  CHECK(s.out.allclose_failures == 0);
  CHECK(s.out_z.count == 2 * 9 * 33);
  CHECK(s.last_state.count == 2 * 9 * 4);
  CHECK(s.verdict == Verdict::kAtLimit);

  // last_state perturbed past the fp32 budget, out still at its floor.
  std::vector<float> last_off = last;
  for (float& x : last_off) x *= 1.0f + 3e-4f;
  s = score_run(p, false, ref, out.data(), out_z.data(), last_off.data());
  CHECK(s.verdict == Verdict::kOutside);
  // One out_z element never written: a defect, whatever the rest.
  out_z = raw(ref.out_z, p.dtype, {17});
  s = score_run(p, false, ref, out.data(), out_z.data(), last.data());
  CHECK(s.out_z.unwritten == 1);
  CHECK(s.verdict == Verdict::kDefect);
  // Null pointers are not scored.
  s = score_run(p, false, ref, out.data(), nullptr, nullptr);
  CHECK_FALSE(s.has_out_z);
  CHECK_FALSE(s.has_last_state);
  CHECK(s.verdict == Verdict::kAtLimit);

  // fp32: a 2e-6 relative perturbation is inside the fp32 budget, outside the fp64 one.
  FwdProblem q = p;
  q.dtype = DType::kF32;
  q.has_z = q.return_last_state = false;
  const FwdHostOutputs ref32 = reference_fwd(make_inputs(q, 22));
  std::vector<double> off = ref32.out;
  for (size_t i = 0; i < off.size(); ++i) off[i] *= 1.0 + (i % 2 ? 2e-6 : -2e-6);
  const auto off_raw = raw(off, DType::kF32);
  CHECK(score_run(q, false, ref32, off_raw.data(), nullptr, nullptr).verdict == Verdict::kInside);
  CHECK(score_run(q, true, ref32, off_raw.data(), nullptr, nullptr).verdict == Verdict::kOutside);
  const auto exact = raw(ref32.out, DType::kF32);
  CHECK(score_run(q, true, ref32, exact.data(), nullptr, nullptr).verdict == Verdict::kAtLimit);
}

}  // namespace
}  // namespace ssmtune
