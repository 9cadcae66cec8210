// Random inputs: shapes per flag, ranges per distribution, determinism by
// seed and thread count, and values exactly representable in their dtype.
#include "tuner/fwd/host_inputs.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

namespace ssmtune {
namespace {

FwdProblem small_problem(DType dtype) {
  FwdProblem p;
  p.batch = 3;
  p.dim = 15;
  p.seqlen = 101;
  p.dstate = 7;
  p.groups = 5;
  p.dtype = dtype;
  return p;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / v.size();
}

double stddev(const std::vector<double>& v) {
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / v.size());
}

bool within(const std::vector<double>& v, double lo, double hi) {
  return std::all_of(v.begin(), v.end(), [&](double x) { return x >= lo && x <= hi; });
}

TEST_CASE("inputs have the shapes of the problem's flags", "[tuner]") {
  FwdProblem p = small_problem(DType::kF32);
  FwdHostInputs in = make_inputs(p, 1);
  const size_t bdl = 3 * 15 * 101, var = 3 * 5 * 7 * 101;
  CHECK(in.problem == p);
  CHECK(in.u.size() == bdl);
  CHECK(in.delta.size() == bdl);
  CHECK(in.A.size() == 15 * 7);
  CHECK(in.B.size() == var);
  CHECK(in.C.size() == var);
  CHECK(in.D.empty());
  CHECK(in.z.empty());
  CHECK(in.delta_bias.empty());
  CHECK(in.h0.empty());
  p.variable_b = false;
  p.has_d = p.has_z = p.has_delta_bias = p.has_initial_state = true;
  in = make_inputs(p, 1);
  CHECK(in.B.size() == 15 * 7);
  CHECK(in.C.size() == var);
  CHECK(in.D.size() == 15);
  CHECK(in.z.size() == bdl);
  CHECK(in.delta_bias.size() == 15);
  CHECK(in.h0.size() == 3 * 15 * 7);
  p.seqlen = -5;
  in = make_inputs(p, 1);
  CHECK(in.u.empty());
  CHECK(in.A.empty());
}

TEST_CASE("each distribution has its ranges", "[tuner]") {
  FwdProblem p = small_problem(DType::kF32);
  p.has_d = p.has_z = p.has_delta_bias = p.has_initial_state = true;
  const FwdHostInputs m = make_inputs(p, 11, InputDistribution::kMamba);
  CHECK(within(m.delta, 0, 0.5));
  CHECK(within(m.A, -0.5, 0));
  CHECK(within(m.delta_bias, 0, 0.5));
  CHECK(mean(m.delta) == Approx(0.25).margin(0.01));
  CHECK(mean(m.A) == Approx(-0.25).margin(0.05));
  for (const auto* v : {&m.u, &m.B, &m.C, &m.z}) {
    CHECK(mean(*v) == Approx(0).margin(0.05));
    CHECK(stddev(*v) == Approx(1).margin(0.05));
  }
  CHECK(stddev(m.h0) == Approx(1).margin(0.1));
  CHECK(within(m.u, -7, 7));  // 7 sigma: never in 100k draws

  const FwdHostInputs s = make_inputs(p, 11, InputDistribution::kSlowDecay);
  CHECK(within(s.A, -1e-3, 0));
  CHECK(mean(s.A) == Approx(-5e-4).margin(1e-4));
  CHECK(s.u == m.u);  // only A differs
  CHECK(s.delta == m.delta);

  const FwdHostInputs l = make_inputs(p, 11, InputDistribution::kLarge);
  CHECK(within(l.delta, 0, 2));
  CHECK(mean(l.delta) == Approx(1).margin(0.03));
  for (const auto* v : {&l.u, &l.B, &l.C}) CHECK(stddev(*v) == Approx(4).margin(0.2));
  CHECK(stddev(l.z) == Approx(1).margin(0.05));
  CHECK(std::string(to_string(InputDistribution::kSlowDecay)) == "slow-decay");
}

TEST_CASE("inputs are deterministic by seed, whatever the thread count", "[tuner]") {
  FwdProblem p = small_problem(DType::kBF16);
  p.seqlen = 1777;  // more than one chunk per tensor, and enough to use the pool
  p.has_z = true;
  const FwdHostInputs a = make_inputs(p, 42, InputDistribution::kMamba, 1);
  const FwdHostInputs b = make_inputs(p, 42, InputDistribution::kMamba, 2);
  const FwdHostInputs c = make_inputs(p, 43, InputDistribution::kMamba, 2);
  CHECK(a.u == b.u);
  CHECK(a.delta == b.delta);
  CHECK(a.B == b.B);
  CHECK(a.C == b.C);
  CHECK(a.z == b.z);
  CHECK(a.A == b.A);
  CHECK(a.u != c.u);
  CHECK(a.B != c.B);
  CHECK(a.A != c.A);
  // Tensors are independent streams: u is not z, B is not C.
  CHECK(a.u != a.z);
  CHECK(a.B != a.C);
  // Turning on a flag leaves the other tensors as they were.
  FwdProblem q = p;
  q.has_d = true;
  CHECK(make_inputs(q, 42).u == a.u);
}

TEST_CASE("values are exactly representable and encode bit-exactly", "[tuner]") {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
    INFO(to_string(t));
    FwdProblem p = small_problem(t);
    p.variable_c = false;
    p.has_d = p.has_z = p.has_delta_bias = p.has_initial_state = true;
    const FwdHostInputs in = make_inputs(p, 5, InputDistribution::kLarge);
    auto exact = [](const std::vector<double>& v, DType dt) {
      const std::vector<unsigned char> bytes = encode(v, dt);
      if (bytes.size() != v.size() * dtype_bytes(dt)) return false;
      return decode(bytes.data(), v.size(), dt) == v;
    };
    for (const auto* v : {&in.u, &in.delta, &in.B, &in.z}) CHECK(exact(*v, t));
    for (const auto* v : {&in.A, &in.C, &in.D, &in.delta_bias, &in.h0})
      CHECK(exact(*v, DType::kF32));
    if (t != DType::kF32) {
      // A half value is not an arbitrary float: these are genuinely rounded.
      CHECK(std::all_of(in.u.begin(), in.u.end(), [t](double x) { return round_to(x, t) == x; }));
      CHECK_FALSE(exact(in.A, t));
    }
  }
}

TEST_CASE("encode writes little-endian bits and rounds to nearest even", "[tuner]") {
  const std::vector<double> v = {1.0, -2.0, 1.0 + std::ldexp(1.0, -8), 65520.0};
  CHECK(encode(v, DType::kF16) ==
        std::vector<unsigned char>{0x00, 0x3C, 0x00, 0xC0, 0x04, 0x3C, 0x00, 0x7C});
  CHECK(encode(v, DType::kBF16) ==
        std::vector<unsigned char>{0x80, 0x3F, 0x00, 0xC0, 0x80, 0x3F, 0x80, 0x47});
  const std::vector<unsigned char> f = encode({1.0}, DType::kF32);
  CHECK(f == std::vector<unsigned char>{0x00, 0x00, 0x80, 0x3F});
  const unsigned char half_bytes[] = {0x01, 0x00, 0xFF, 0x7B};
  const std::vector<double> d = decode(half_bytes, 2, DType::kF16);
  CHECK(d[0] == std::ldexp(1.0, -24));
  CHECK(d[1] == 65504.0);
  CHECK(round_to(1.0 + std::ldexp(1.0, -30), DType::kF32) == 1.0);
}

}  // namespace
}  // namespace ssmtune
