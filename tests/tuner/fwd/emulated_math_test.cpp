// The kernels' scalar math (ssm/fwd_math.cuh) on the host through
// tests/support/cuda_emulation.h, against double precision: softplus,
// sigmoid and softplus's gradient from softplus's value, each over its
// branches. The shim's __expf and __logf are the exact ones, so this checks
// the formulas (series, cut-offs); the hardware's few-ulp error on top is
// what the GPU suites' budgets see.
#include "support/cuda_emulation.h"
// clang-format off: the shim must come first
SSMTUNE_EMULATED_KERNELS_BEGIN
#include "ssm/fwd_math.cuh"
SSMTUNE_EMULATED_KERNELS_END
// clang-format on

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>

namespace ssmtune {
namespace {

double softplus_ref(double x) { return x <= 20.0 ? std::log1p(std::exp(x)) : x; }
double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Largest relative error of f against ref at x = lo, lo + step, ... < hi.
template <typename F, typename R>
double worst_rel(F f, R ref, double lo, double hi, double step) {
  double worst = 0;
  for (double x = lo; x < hi; x += step) {
    const double want = ref(x);
    const double got = f(static_cast<float>(x));
    const double rel = std::abs(got - want) / std::abs(want);
    if (rel > worst) worst = rel;
  }
  return worst;
}

TEST_CASE(
    "the kernels' softplus and sigmoid and softplus's gradient match double precision (emulated)",
    "[fwd][emulated]") {
  using ssmtune_kernels::sigmoid_fast;
  using ssmtune_kernels::softplus_fast;
  using ssmtune_kernels::softplus_grad;
  // softplus: the atanh series below -2, the log above, x itself past 20.
  const double sp =
      worst_rel([](float x) { return softplus_fast(x); }, softplus_ref, -40.0, 40.0, 1.0 / 64);
  // sigmoid over both tails.
  const double sg =
      worst_rel([](float x) { return sigmoid_fast(x); }, sigmoid_ref, -80.0, 80.0, 1.0 / 64);
  // softplus's gradient from dt = softplus(x) (float, as the kernels hold it), against
  // sigmoid(x): the series below dt = 1/8 (x below about -2), the exp above.
  const double gr = worst_rel([](float x) { return softplus_grad(softplus_fast(x)); }, sigmoid_ref,
                              -30.0, 30.0, 1.0 / 64);
  // Right at the series' cut-off, from both sides.
  const double cut = worst_rel([](float d) { return softplus_grad(d); },
                               [](double d) { return -std::expm1(-d); }, 0.0625, 0.25, 1.0 / 4096);
  std::printf("softplus %.1e, sigmoid %.1e, softplus grad %.1e (at the cut-off %.1e)\n", sp, sg, gr,
              cut);
  CHECK(sp < 2e-6);
  CHECK(sg < 1e-6);
  CHECK(gr < 3e-6);
  CHECK(cut < 1e-6);
  // Exactly 0 at dt = 0 (x far below 0: no gradient) and 1 far above.
  CHECK(softplus_grad(0.0f) == 0.0f);
  CHECK(softplus_grad(30.0f) == 1.0f);
  CHECK(sigmoid_fast(-200.0f) == 0.0f);
  CHECK(sigmoid_fast(200.0f) == 1.0f);
}

}  // namespace
}  // namespace ssmtune
