// The fp64 reference against hand-computed values and against an
// independent closed-form evaluation on tiny shapes, over every flag
// combination.
#include "tuner/fwd/reference_cpu.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "support/problems.h"

namespace ssmtune {
namespace {

// h[t] = sum_{s<=t} exp(A * sum_{r=s+1..t} delta_r) * delta_s B_s u_s
//        + exp(A * sum_{r=0..t} delta_r) * h0,
// y[t] = sum_n C_n[t] h_n[t] + D u[t]; out_z = y * z * sigmoid(z) with the
// sigmoid through tanh. Written from the formulas, sharing no code with
// reference_fwd.
FwdHostOutputs closed_form(const FwdHostInputs& in) {
  const FwdProblem& p = in.problem;
  const int64_t Bt = p.batch, Dm = p.dim, L = p.seqlen, N = p.dstate, G = p.groups;
  FwdHostOutputs o;
  o.out.assign(Bt * Dm * L, 0.0);
  if (p.has_z) o.out_z.assign(Bt * Dm * L, 0.0);
  if (p.return_last_state) o.last_state.assign(Bt * Dm * N, 0.0);
  for (int64_t b = 0; b < Bt; ++b) {
    for (int64_t d = 0; d < Dm; ++d) {
      const int64_t g = d / (Dm / G);
      auto at = [&](const std::vector<double>& v, int64_t t) { return v[(b * Dm + d) * L + t]; };
      std::vector<double> dt(L);
      for (int64_t t = 0; t < L; ++t) {
        double x = at(in.delta, t) + (p.has_delta_bias ? in.delta_bias[d] : 0.0);
        dt[t] = p.delta_softplus ? std::log(1.0 + std::exp(x)) : x;
      }
      auto bmat = [&](const std::vector<double>& m, bool variable, int64_t n, int64_t t) {
        return variable ? m[((b * G + g) * N + n) * L + t] : m[d * N + n];
      };
      for (int64_t t = 0; t < L; ++t) {
        double y = p.has_d ? in.D[d] * at(in.u, t) : 0.0;
        for (int64_t n = 0; n < N; ++n) {
          const double A = in.A[d * N + n];
          double h = 0, tail = 0;  // tail = sum_{r=s+1..t} delta_r
          for (int64_t s = t; s >= 0; --s) {
            h += std::exp(A * tail) * dt[s] * bmat(in.B, p.variable_b, n, s) * at(in.u, s);
            tail += dt[s];
          }
          if (p.has_initial_state) h += std::exp(A * tail) * in.h0[(b * Dm + d) * N + n];
          y += bmat(in.C, p.variable_c, n, t) * h;
          if (p.return_last_state && t == L - 1) o.last_state[(b * Dm + d) * N + n] = h;
        }
        o.out[(b * Dm + d) * L + t] = y;
        if (p.has_z) {
          const double z = at(in.z, t);
          o.out_z[(b * Dm + d) * L + t] = y * z * 0.5 * (1.0 + std::tanh(z / 2));
        }
      }
    }
  }
  return o;
}

// Largest |a - b| / max(1, |b|).
double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return INFINITY;
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i)
    m = std::max(m, std::fabs(a[i] - b[i]) / std::max(1.0, std::fabs(b[i])));
  return m;
}

TEST_CASE("reference matches hand-computed values", "[tuner]") {
  // batch 1, dim 1, dstate 1, seqlen 3; constant B = 2, C = 3; A = -ln 2 so
  // exp(delta * A) = 2^-delta; delta = delta_raw + bias = (1, 1, 2);
  // u = (1, 2, 4); D = 0.5; h0 = 4; z = (0, ln 3, -ln 3).
  //   t0: h = 0.5  * 4 + 1 * 2 * 1 = 4;     y = 3 * 4    + 0.5 * 1 = 12.5
  //   t1: h = 0.5  * 4 + 1 * 2 * 2 = 6;     y = 3 * 6    + 0.5 * 2 = 19
  //   t2: h = 0.25 * 6 + 2 * 2 * 4 = 17.5;  y = 3 * 17.5 + 0.5 * 4 = 54.5
  // silu(z) = z * sigmoid(z): 0, 0.75 ln 3, -0.25 ln 3.
  FwdHostInputs in;
  FwdProblem& p = in.problem;
  p.seqlen = 3;
  p.dstate = 1;
  p.variable_b = p.variable_c = false;
  p.has_d = p.has_z = p.has_delta_bias = p.return_last_state = p.has_initial_state = true;
  in.u = {1, 2, 4};
  in.delta = {0.75, 0.75, 1.75};
  in.delta_bias = {0.25};
  in.A = {-std::log(2.0)};
  in.B = {2};
  in.C = {3};
  in.D = {0.5};
  in.h0 = {4};
  in.z = {0, std::log(3.0), -std::log(3.0)};
  const FwdHostOutputs o = reference_fwd(in);
  REQUIRE(o.out.size() == 3);
  CHECK(o.out[0] == Approx(12.5).epsilon(1e-14));
  CHECK(o.out[1] == Approx(19).epsilon(1e-14));
  CHECK(o.out[2] == Approx(54.5).epsilon(1e-14));
  REQUIRE(o.last_state.size() == 1);
  CHECK(o.last_state[0] == Approx(17.5).epsilon(1e-14));
  REQUIRE(o.out_z.size() == 3);
  CHECK(o.out_z[0] == 0.0);
  CHECK(o.out_z[1] == Approx(19 * 0.75 * std::log(3.0)).epsilon(1e-14));
  CHECK(o.out_z[2] == Approx(-54.5 * 0.25 * std::log(3.0)).epsilon(1e-14));

  // The same with softplus: softplus(ln(e^x - 1)) = x, so raw deltas of
  // ln(e - 1) and ln(e^2 - 1) give delta = (1, 1, 2) again.
  p.has_delta_bias = false;
  p.delta_softplus = true;
  in.delta_bias.clear();
  in.delta = {std::log(std::exp(1.0) - 1), std::log(std::exp(1.0) - 1),
              std::log(std::exp(2.0) - 1)};
  const FwdHostOutputs s = reference_fwd(in);
  CHECK(s.out[0] == Approx(12.5).epsilon(1e-14));
  CHECK(s.out[1] == Approx(19).epsilon(1e-14));
  CHECK(s.out[2] == Approx(54.5).epsilon(1e-14));
  // Past 20 softplus is the identity, as in mamba_ssm.
  in.delta = {30, 30, 30};
  in.A = {-1.0 / 30};  // exp(delta * A) = 1/e
  p.has_initial_state = false;
  in.h0.clear();
  const FwdHostOutputs big = reference_fwd(in);
  CHECK(big.out[0] == 30 * 2 * 1 * 3 + 0.5);
}

TEST_CASE("reference matches the closed form for every flag combination", "[tuner]") {
  int checked = 0;
  for (DType t : {DType::kF32, DType::kBF16}) {
    for (int m = 0; m < 256; ++m) {
      FwdProblem p = testing::shape(2, 4, 5, 3, t);
      testing::set_flags(p, m);
      p.groups = p.variable_b || p.variable_c ? 2 : 1;
      INFO(p.key());
      const FwdHostInputs in = make_inputs(p, 1000 + m, InputDistribution::kLarge);
      const FwdHostOutputs got = reference_fwd(in);
      const FwdHostOutputs want = closed_form(in);
      CHECK(max_diff(got.out, want.out) < 1e-12);
      CHECK(max_diff(got.out_z, want.out_z) < 1e-12);
      CHECK(max_diff(got.last_state, want.last_state) < 1e-12);
      CHECK(got.out_z.size() == (p.has_z ? 40u : 0u));
      CHECK(got.last_state.size() == (p.return_last_state ? 24u : 0u));
      ++checked;
    }
  }
  CHECK(checked == 512);
}

TEST_CASE("reference matches the closed form on a longer odd shape", "[tuner]") {
  FwdProblem p;
  p.batch = 3;
  p.dim = 6;
  p.seqlen = 67;
  p.dstate = 5;
  p.groups = 3;
  p.has_d = p.has_z = p.has_delta_bias = p.delta_softplus = true;
  p.return_last_state = p.has_initial_state = true;
  const FwdHostInputs in = make_inputs(p, 77, InputDistribution::kSlowDecay);
  const FwdHostOutputs got = reference_fwd(in);
  const FwdHostOutputs want = closed_form(in);
  CHECK(max_diff(got.out, want.out) < 1e-11);
  CHECK(max_diff(got.out_z, want.out_z) < 1e-11);
  CHECK(max_diff(got.last_state, want.last_state) < 1e-11);
}

TEST_CASE("reference does not depend on the thread count", "[tuner]") {
  FwdProblem p;
  p.batch = 3;
  p.dim = 37;
  p.seqlen = 301;
  p.dstate = 16;
  p.has_z = p.return_last_state = true;
  const FwdHostInputs in = make_inputs(p, 9);
  const FwdHostOutputs one = reference_fwd(in, 1);
  const FwdHostOutputs two = reference_fwd(in, 2);
  const FwdHostOutputs many = reference_fwd(in, 7);
  CHECK(one.out == two.out);
  CHECK(one.out == many.out);
  CHECK(one.out_z == many.out_z);
  CHECK(one.last_state == many.last_state);
}

}  // namespace
}  // namespace ssmtune
