// The fp64 backward reference against finite differences of the fp64
// forward reference and against a closed form (the explicit-sum solution of
// the recurrence, differentiated by hand), over every flag combination; its
// independence of the thread count; the incoming-gradient generators.
#include "tuner/bwd/reference_cpu.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <string>

#include "support/problems.h"
#include "tuner/bwd/host_grads.h"
#include "tuner/fwd/reference_cpu.h"

namespace ssmtune::bwd {
namespace {

// ||got - want|| / ||want|| (0 when both are zero; +inf on a size mismatch).
double rel_l2(const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return INFINITY;
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  if (num == 0) return 0;
  return den == 0 ? INFINITY : std::sqrt(num / den);
}

// L = sum(dout * (out_z or out)) + sum(dlast * last_state), through the
// forward reference, summed in long double.
double loss(const FwdHostInputs& in, const std::vector<double>& dout,
            const std::vector<double>& dlast) {
  FwdHostInputs copy = in;
  copy.problem.return_last_state = !dlast.empty();
  const FwdHostOutputs o = reference_fwd(copy, 1);
  const std::vector<double>& y = copy.problem.has_z ? o.out_z : o.out;
  long double s = 0;
  for (size_t i = 0; i < y.size(); ++i) s += static_cast<long double>(dout[i]) * y[i];
  for (size_t i = 0; i < dlast.size(); ++i)
    s += static_cast<long double>(dlast[i]) * o.last_state[i];
  return static_cast<double>(s);
}

// The five-point central difference (f(-2h) - 8 f(-h) + 8 f(h) - f(2h)) / 12h
// of the loss in every element of one input. Its truncation error is
// h^4 f^(5) / 30 and its rounding error about 1.5 eps |L| / h, so a larger
// step than the two-point formula's (whose truncation h^2 f''' / 6 forces
// h ~ 1e-6 and leaves ~1e-8 |L| of rounding) balances both near 1e-11
// relative: h = 2^-12 (2.4e-4). A power of two keeps x +- k h exact for
// inputs rounded to fp32 or coarser (their bits end well above 2^-12 *
// 2^-30), so the step taken is exactly the step divided by. (In the text h,
// kStep in the code.)
std::vector<double> finite_difference(const FwdHostInputs& at,
                                      std::vector<double> FwdHostInputs::*tensor,
                                      const std::vector<double>& dout,
                                      const std::vector<double>& dlast) {
  constexpr double kStep = 0x1.0p-12;
  FwdHostInputs in = at;  // one tensor's elements moved in turn
  std::vector<double>& v = in.*tensor;
  std::vector<double> grad(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const double x = v[i];
    double f[4];
    const int steps[4] = {-2, -1, 1, 2};
    for (int k = 0; k < 4; ++k) {
      v[i] = x + steps[k] * kStep;
      f[k] = loss(in, dout, dlast);
    }
    v[i] = x;
    grad[i] = (f[0] - 8 * f[1] + 8 * f[2] - f[3]) / (12 * kStep);
  }
  return grad;
}

struct Named {
  const char* name;
  std::vector<double> FwdHostInputs::*input;
  std::vector<double> BwdHostGrads::*grad;
};
const Named kGrads[] = {
    {"du", &FwdHostInputs::u, &BwdHostGrads::du},
    {"ddelta", &FwdHostInputs::delta, &BwdHostGrads::ddelta},
    {"dA", &FwdHostInputs::A, &BwdHostGrads::dA},
    {"dB", &FwdHostInputs::B, &BwdHostGrads::dB},
    {"dC", &FwdHostInputs::C, &BwdHostGrads::dC},
    {"dD", &FwdHostInputs::D, &BwdHostGrads::dD},
    {"dz", &FwdHostInputs::z, &BwdHostGrads::dz},
    {"ddelta_bias", &FwdHostInputs::delta_bias, &BwdHostGrads::ddelta_bias},
    {"dh0", &FwdHostInputs::h0, &BwdHostGrads::dh0},
};

// Every combination of the eight flags (return_last_state standing for a
// gradient through the last state), groups 1 and 2 where B or C is variable.
std::vector<FwdProblem> flag_grid(int64_t seqlen, DType dtype) {
  std::vector<FwdProblem> out;
  for (int m = 0; m < 256; ++m) {
    for (int64_t groups : {1, 2}) {
      FwdProblem p = testing::shape(2, 4, seqlen, 3, dtype, groups);
      testing::set_flags(p, m);
      if (groups == 2 && !p.variable_b && !p.variable_c) continue;
      out.push_back(p);
    }
  }
  return out;
}

TEST_CASE("backward reference matches finite differences for every flag combination",
          "[bwd][reference]") {
  double worst = 0;
  std::string worst_at;
  int cases = 0;
  for (const FwdProblem& p : flag_grid(7, DType::kF32)) {
    const uint64_t seed = 7000 + cases++;
    const FwdHostInputs in = make_inputs(p, seed);
    const auto dout = make_dout(p, seed);
    const auto dlast = make_dlast(p, seed);
    const BwdHostGrads got = reference_backward_cpu(in, dout, dlast, 1);
    for (const Named& g : kGrads) {
      const std::vector<double>& input = in.*(g.input);
      const std::vector<double>& grad = got.*(g.grad);
      INFO(p.key() << " seed " << seed << " " << g.name);
      REQUIRE(grad.size() == input.size());
      if (input.empty()) continue;
      const double err = rel_l2(grad, finite_difference(in, g.input, dout, dlast));
      CHECK(err < 1e-9);
      if (err > worst) {
        worst = err;
        worst_at = p.key() + " " + g.name;
      }
    }
  }
  WARN("worst rel L2 against finite differences: " << worst << " at " << worst_at);
}

// Softplus past 20 is the identity, so its derivative there is 1.
TEST_CASE("backward reference's softplus gradient past 20", "[bwd][reference]") {
  FwdProblem p = testing::shape(1, 2, 5, 2);
  p.delta_softplus = p.has_delta_bias = true;
  FwdHostInputs in = make_inputs(p, 5);
  for (double& x : in.delta) x += 20.5;  // 20.5 .. 21: every argument above the cut
  const auto dout = make_dout(p, 5);
  in.A = {-0.01, -0.02, -0.03, -0.04};  // keep exp(dt A) away from underflow at dt ~ 21
  const BwdHostGrads got = reference_backward_cpu(in, dout, {}, 1);
  CHECK(rel_l2(got.ddelta, finite_difference(in, &FwdHostInputs::delta, dout, {})) < 1e-9);
  CHECK(rel_l2(got.ddelta_bias, finite_difference(in, &FwdHostInputs::delta_bias, dout, {})) <
        1e-9);
}

// The solution of the recurrence as explicit sums, per chain:
//   h_t = sum_{s<=t} E(s,t) dt_s B_s u_s + E(-1,t) h0,
//   E(s,t) = exp(A P(s,t)), P(s,t) = dt_{s+1} + ... + dt_t,
// and its derivatives in each input with w_t = C_t dy_t + [t = L-1] dlast
// (the direct weight of h_t in the loss). O(seqlen^3); shares no code with
// the reference (sigmoids through tanh).
BwdHostGrads closed_form(const FwdHostInputs& in, const std::vector<double>& dout,
                         const std::vector<double>& dlast) {
  const FwdProblem& p = in.problem;
  const int64_t Bt = p.batch, Dm = p.dim, L = p.seqlen, N = p.dstate, G = p.groups;
  auto sig = [](double x) { return 0.5 * (1.0 + std::tanh(0.5 * x)); };
  BwdHostGrads o;
  o.du.assign(Bt * Dm * L, 0.0);
  o.ddelta.assign(Bt * Dm * L, 0.0);
  o.dA.assign(Dm * N, 0.0);
  o.dB.assign(in.B.size(), 0.0);
  o.dC.assign(in.C.size(), 0.0);
  if (p.has_d) o.dD.assign(Dm, 0.0);
  if (p.has_z) o.dz.assign(Bt * Dm * L, 0.0);
  if (p.has_delta_bias) o.ddelta_bias.assign(Dm, 0.0);
  if (p.has_initial_state) o.dh0.assign(Bt * Dm * N, 0.0);
  for (int64_t b = 0; b < Bt; ++b) {
    for (int64_t d = 0; d < Dm; ++d) {
      const int64_t g = d / (Dm / G), row = (b * Dm + d) * L;
      auto bc = [&](bool variable, int64_t n, int64_t t) {
        return variable ? ((b * G + g) * N + n) * L + t : d * N + n;
      };
      std::vector<double> x(L), dt(L), dy(L), y(L), ddt(L, 0.0);
      for (int64_t t = 0; t < L; ++t) {
        x[t] = in.delta[row + t] + (p.has_delta_bias ? in.delta_bias[d] : 0.0);
        dt[t] = p.delta_softplus && x[t] <= 20 ? std::log(1.0 + std::exp(x[t])) : x[t];
        const double z = p.has_z ? in.z[row + t] : 0;
        dy[t] = p.has_z ? dout[row + t] * z * sig(z) : dout[row + t];
        y[t] = p.has_d ? in.D[d] * in.u[row + t] : 0.0;
      }
      for (int64_t n = 0; n < N; ++n) {
        const double A = in.A[d * N + n];
        const double h0 = p.has_initial_state ? in.h0[(b * Dm + d) * N + n] : 0.0;
        auto P = [&](int64_t s, int64_t t) {
          double acc = 0;
          for (int64_t r = s + 1; r <= t; ++r) acc += dt[r];
          return acc;
        };
        auto src = [&](int64_t s) { return dt[s] * in.B[bc(p.variable_b, n, s)] * in.u[row + s]; };
        for (int64_t t = 0; t < L; ++t) {
          double h = std::exp(A * P(-1, t)) * h0;
          for (int64_t s = 0; s <= t; ++s) h += std::exp(A * P(s, t)) * src(s);
          y[t] += in.C[bc(p.variable_c, n, t)] * h;
          o.dC[bc(p.variable_c, n, t)] += dy[t] * h;
          double w = in.C[bc(p.variable_c, n, t)] * dy[t];
          if (t == L - 1 && !dlast.empty()) w += dlast[(b * Dm + d) * N + n];
          // Through h_t: every source s <= t and the initial state.
          const double e0 = std::exp(A * P(-1, t));
          o.dA[d * N + n] += w * P(-1, t) * e0 * h0;
          if (p.has_initial_state) o.dh0[(b * Dm + d) * N + n] += w * e0;
          for (int64_t r = 0; r <= t; ++r) {
            const double e = std::exp(A * P(r, t));
            const double Bv = in.B[bc(p.variable_b, n, r)], u = in.u[row + r];
            o.du[row + r] += w * e * dt[r] * Bv;
            o.dB[bc(p.variable_b, n, r)] += w * e * dt[r] * u;
            o.dA[d * N + n] += w * P(r, t) * e * src(r);
            // dt_r enters src_r, and P(s, t) for every s < r (and the h0 term).
            double through = e * Bv * u + A * e0 * h0;
            for (int64_t s = 0; s < r; ++s) through += A * std::exp(A * P(s, t)) * src(s);
            ddt[r] += w * through;
          }
        }
      }
      for (int64_t t = 0; t < L; ++t) {
        if (p.has_d) {
          o.du[row + t] += in.D[d] * dy[t];
          o.dD[d] += dy[t] * in.u[row + t];
        }
        if (p.has_z) {
          const double z = in.z[row + t], s = sig(z);
          o.dz[row + t] = dout[row + t] * y[t] * (s + z * s * (1 - s));
        }
        const double dd = p.delta_softplus && x[t] <= 20 ? ddt[t] * sig(x[t]) : ddt[t];
        o.ddelta[row + t] = dd;
        if (p.has_delta_bias) o.ddelta_bias[d] += dd;
      }
    }
  }
  return o;
}

TEST_CASE("backward reference matches the closed form for every flag combination",
          "[bwd][reference]") {
  int cases = 0;
  for (DType t : {DType::kF32, DType::kBF16}) {
    for (int64_t seqlen : {1, 5}) {
      for (const FwdProblem& p : flag_grid(seqlen, t)) {
        const uint64_t seed = 9000 + cases++;
        const FwdHostInputs in = make_inputs(p, seed, InputDistribution::kLarge);
        const auto dout = make_dout(p, seed);
        const auto dlast = make_dlast(p, seed);
        const BwdHostGrads got = reference_backward_cpu(in, dout, dlast, 1);
        const BwdHostGrads want = closed_form(in, dout, dlast);
        for (const Named& g : kGrads) {
          INFO(p.key() << " seed " << seed << " " << g.name);
          CHECK(rel_l2(got.*(g.grad), want.*(g.grad)) < 1e-12);
        }
      }
    }
  }
}

TEST_CASE("backward reference does not depend on the thread count", "[bwd][reference]") {
  // 2 x 40 channels in 2 groups: several 16-channel units per group, the last
  // one short; work above the single-thread cut.
  FwdProblem p = testing::shape(2, 40, 301, 8, DType::kBF16, 2);
  p.variable_c = false;
  p.has_d = p.has_z = p.has_delta_bias = p.delta_softplus = true;
  p.return_last_state = p.has_initial_state = true;
  const FwdHostInputs in = make_inputs(p, 11);
  const auto dout = make_dout(p, 11), dlast = make_dlast(p, 11);
  const BwdHostGrads one = reference_backward_cpu(in, dout, dlast, 1);
  const BwdHostGrads many = reference_backward_cpu(in, dout, dlast, 3);
  for (const Named& g : kGrads) {
    INFO(g.name);
    const auto& a = one.*(g.grad);
    const auto& b = many.*(g.grad);
    REQUIRE(a.size() == b.size());
    CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
  }
  CHECK(one.dC.size() == static_cast<size_t>(p.dim * p.dstate));
  CHECK(one.dB.size() == static_cast<size_t>(p.batch * p.groups * p.dstate * p.seqlen));
}

TEST_CASE("backward reference returns nothing for mismatched sizes", "[bwd][reference]") {
  const FwdProblem p = testing::shape(1, 2, 3, 4);
  const FwdHostInputs in = make_inputs(p, 1);
  auto dout = make_dout(p, 1);
  CHECK_FALSE(reference_backward_cpu(in, dout, {}).du.empty());
  CHECK(reference_backward_cpu(in, dout, std::vector<double>(3)).du.empty());
  dout.pop_back();
  CHECK(reference_backward_cpu(in, dout, {}).du.empty());
}

TEST_CASE("incoming gradients are seeded and rounded to the dtype read", "[bwd][reference]") {
  FwdProblem p = testing::shape(2, 3, 70000, 2, DType::kBF16);  // more than one 2^16 chunk
  const auto a = make_dout(p, 3), b = make_dout(p, 3), c = make_dout(p, 4);
  REQUIRE(a.size() == static_cast<size_t>(2 * 3 * 70000));
  CHECK(a == b);
  CHECK(a != c);
  double sum2 = 0;
  for (double v : a) {
    CHECK(v == round_to(v, DType::kBF16));
    sum2 += v * v;
  }
  CHECK(sum2 / a.size() == Approx(1.0).epsilon(0.02));
  CHECK(make_dlast(p, 3).empty());
  p.return_last_state = true;
  const auto last = make_dlast(p, 3);
  REQUIRE(last.size() == static_cast<size_t>(2 * 3 * 2));
  for (double v : last) CHECK(v == round_to(v, DType::kF32));
}

}  // namespace
}  // namespace ssmtune::bwd
