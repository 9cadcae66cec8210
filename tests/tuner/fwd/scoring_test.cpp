// Forward scoring with the reference's summary computed once (as the bench
// does for every config it scores) gives the same scores as computing it per
// run, poisoned (unwritten) elements included.
#include "tuner/fwd/scoring.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <random>

#include "tuner/dtype.h"

namespace ssmtune {
namespace {

std::vector<double> randn(size_t n, std::mt19937_64& rng) {
  std::normal_distribution<double> d;
  std::vector<double> v(n);
  for (double& x : v) x = d(rng);
  return v;
}

void check_same(const std::vector<OutputScore>& a, const std::vector<OutputScore>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO(a[i].name);
    CHECK(a[i].name == b[i].name);
    CHECK(a[i].stats.rel_l2 == b[i].stats.rel_l2);
    CHECK(a[i].stats.max_rel == b[i].stats.max_rel);
    CHECK(a[i].stats.max_abs_over_max_ref == b[i].stats.max_abs_over_max_ref);
    CHECK(a[i].stats.unwritten == b[i].stats.unwritten);
    CHECK(a[i].stats.allclose_failures == b[i].stats.allclose_failures);
    CHECK(a[i].budget.rel_l2 == b[i].budget.rel_l2);
    CHECK(a[i].floor == b[i].floor);
    CHECK(a[i].verdict == b[i].verdict);
  }
}

TEST_CASE("fwd scoring: a summary computed once scores as one computed per run",
          "[tuner][fwd][scoring]") {
  const uint64_t seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  FwdProblem p;
  p.batch = 2;
  p.dim = 16;
  p.seqlen = 300;
  p.dstate = 4;
  p.dtype = DType::kBF16;
  p.has_z = true;
  p.return_last_state = true;
  const size_t n = static_cast<size_t>(p.batch * p.dim * p.seqlen);
  const size_t nl = static_cast<size_t>(p.batch * p.dim * p.dstate);
  FwdHostOutputs ref;
  ref.out = randn(n, rng);
  ref.out_z = randn(n, rng);
  ref.last_state = randn(nl, rng);
  // A run: the reference with small errors, rounded to the dtype.
  auto noisy = [&rng](const std::vector<double>& v, double eps) {
    std::normal_distribution<double> d(0, eps);
    std::vector<double> out = v;
    for (double& x : out) x += d(rng);
    return out;
  };
  std::vector<unsigned char> out = encode(noisy(ref.out, 1e-3), DType::kBF16);
  std::vector<unsigned char> out_z = encode(noisy(ref.out_z, 1e-3), DType::kBF16);
  std::vector<float> last(nl);
  const auto last_d = noisy(ref.last_state, 1e-6);
  for (size_t i = 0; i < nl; ++i) last[i] = static_cast<float>(last_d[i]);

  const FwdRefSummary s = summarize_reference(p, ref);
  CHECK(s.floor > 0);
  CHECK(s.max_out > 0);
  for (bool fp64 : {false, true}) {
    check_same(score_fwd_run(p, fp64, ref, out.data(), out_z.data(), last.data()),
               score_fwd_run(p, fp64, ref, s, out.data(), out_z.data(), last.data()));
  }
  // Unwritten elements are found the same way.
  const auto poison = poison_pattern(DType::kBF16);
  std::memcpy(out_z.data() + 2 * 7, poison.data(), poison.size());
  const auto with = score_fwd_run(p, false, ref, s, out.data(), out_z.data(), last.data());
  check_same(score_fwd_run(p, false, ref, out.data(), out_z.data(), last.data()), with);
  REQUIRE(with.size() == 3);
  CHECK(with[1].stats.unwritten == 1);
  CHECK(with[1].verdict == Verdict::kDefect);
  // Without out_z given, the floor is out's alone (as before the summary).
  const auto no_z = score_fwd_run(p, false, ref, out.data(), nullptr, nullptr);
  CHECK(no_z.size() == 1);
  CHECK(no_z[0].floor == rounding_floor(ref.out, DType::kBF16));
}

}  // namespace
}  // namespace ssmtune
