// The fp64 GPU backward reference against the fp64 CPU reference, gradient
// by gradient, over every flag combination on small odd shapes and a few
// larger ones (including units of many channels, forced by a small scratch
// limit); two runs must be bitwise equal.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "jit/compiler.h"
#include "jit/stream.h"
#include "support/gpu_helpers.h"
#include "support/problems.h"
#include "tuner/bwd/host_grads.h"
#include "tuner/bwd/reference_cpu.h"
#include "tuner/bwd/reference_gpu.h"

namespace ssmtune::bwd {
namespace {

using testing::require_ok;

struct Named {
  const char* name;
  std::vector<double> BwdHostGrads::*grad;
};
const Named kGrads[] = {
    {"du", &BwdHostGrads::du},   {"ddelta", &BwdHostGrads::ddelta},
    {"dA", &BwdHostGrads::dA},   {"dB", &BwdHostGrads::dB},
    {"dC", &BwdHostGrads::dC},   {"dD", &BwdHostGrads::dD},
    {"dz", &BwdHostGrads::dz},   {"ddelta_bias", &BwdHostGrads::ddelta_bias},
    {"dh0", &BwdHostGrads::dh0},
};

// ||got - want|| / ||want||; +inf on a size mismatch or a non-finite value.
double rel_l2(const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return INFINITY;
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  if (num == 0) return 0;
  return den == 0 ? INFINITY : std::sqrt(num / den);
}

// Largest |got - want| / max |want|.
double max_err(const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return INFINITY;
  double m = 0, ref = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    m = std::max(m, std::fabs(got[i] - want[i]));
    ref = std::max(ref, std::fabs(want[i]));
  }
  if (!std::isfinite(m)) return INFINITY;
  return m == 0 ? 0 : m / ref;
}

struct Env {
  jit::MemoryCubinCache cache;
  jit::Compiler compiler{jit::TemplateSources::embedded(), &cache};
  jit::DeviceInfo device = require_ok(jit::query_device(0));
  jit::Stream stream = require_ok(jit::Stream::create());
};

// GPU against CPU on one problem; returns the worst rel L2 over the gradients.
double compare(Env& env, const FwdProblem& p, uint64_t seed, size_t scratch_limit = 0,
               bool twice = false) {
  INFO(p.key() << " seed " << seed << " scratch limit " << scratch_limit);
  const FwdHostInputs in = make_inputs(p, seed);
  const auto dout = make_dout(p, seed);
  const auto dlast = make_dlast(p, seed);
  const BwdHostGrads cpu = reference_backward_cpu(in, dout, dlast);
  const BwdHostGrads gpu = require_ok(reference_backward_gpu(
      in, dout, dlast, env.device, env.compiler, env.stream.get(), scratch_limit));
  double worst = 0;
  for (const Named& g : kGrads) {
    INFO(g.name);
    const auto& want = cpu.*(g.grad);
    const auto& got = gpu.*(g.grad);
    REQUIRE(got.size() == want.size());
    const double e = rel_l2(got, want);
    CHECK(e < 1e-10);
    CHECK(max_err(got, want) < 1e-10);
    worst = std::max(worst, e);
  }
  if (twice) {
    const BwdHostGrads again = require_ok(reference_backward_gpu(
        in, dout, dlast, env.device, env.compiler, env.stream.get(), scratch_limit));
    for (const Named& g : kGrads) {
      INFO(g.name << " second run");
      const auto& a = gpu.*(g.grad);
      const auto& b = again.*(g.grad);
      REQUIRE(a.size() == b.size());
      CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
    }
  }
  return worst;
}

TEST_CASE("GPU backward reference agrees with the CPU one for every flag combination",
          "[gpu][bwd]") {
  Env env;
  static const uint64_t kSeed = std::random_device{}();
  std::printf("bwd reference flag grid: seed %llu\n", static_cast<unsigned long long>(kSeed));
  double worst = 0;
  int cases = 0;
  for (int m = 0; m < 256; ++m) {
    for (int64_t groups : {1, 2}) {
      FwdProblem p = testing::shape(2, 6, 7, 3, m & 1 ? DType::kBF16 : DType::kF32, groups);
      testing::set_flags(p, m);
      if (groups == 2 && !p.variable_b && !p.variable_c) continue;
      worst = std::max(worst, compare(env, p, kSeed + cases++));
    }
  }
  std::printf("bwd reference flag grid: %d cases, worst rel L2 %.3g\n", cases, worst);
}

TEST_CASE("GPU backward reference agrees with the CPU one on larger odd shapes", "[gpu][bwd]") {
  Env env;
  static const uint64_t kSeed = std::random_device{}();
  std::printf("bwd reference shapes: seed %llu\n", static_cast<unsigned long long>(kSeed));
  struct Case {
    const char* name;
    FwdProblem p;
    size_t scratch_limit;  // 0: the device default (one channel per unit here)
  };
  std::vector<Case> cases;
  {
    FwdProblem p = testing::shape(2, 37, 129, 16, DType::kBF16);
    p.has_d = p.has_z = p.has_delta_bias = p.delta_softplus = true;
    p.return_last_state = p.has_initial_state = true;
    cases.push_back({"l129-bf16-allflags", p, 0});
  }
  {
    FwdProblem p = testing::shape(3, 40, 1000, 5, DType::kF16, 2);
    p.variable_c = false;
    p.has_d = p.has_z = p.return_last_state = true;
    // Room for about 3 units per (batch, group): 7 channels each, the last short.
    cases.push_back({"l1000-fp16-g2-units7", p, 3 * 3 * 2 * 8 * 1000 * (5 * 2 + 2)});
  }
  {
    FwdProblem p = testing::shape(1, 9, 1, 64, DType::kF32);
    p.variable_b = false;
    p.has_initial_state = p.has_delta_bias = true;
    cases.push_back({"l1-constB", p, 0});
  }
  {
    FwdProblem p = testing::shape(2, 24, 4097, 16, DType::kBF16, 2);
    p.has_d = p.has_z = p.has_delta_bias = p.delta_softplus = true;
    p.return_last_state = p.has_initial_state = true;
    cases.push_back({"l4097-bf16-g2-allflags-units", p, size_t{64} << 20});
  }
  int i = 0;
  for (const Case& c : cases) {
    const size_t limit = c.scratch_limit;
    const int slice = reference_gpu_slice(c.p, limit ? limit : size_t{8} << 30);
    const double worst = compare(env, c.p, kSeed + i++, limit, /*twice=*/true);
    std::printf("%-30s slice %d worst rel L2 %.3g\n", c.name, slice, worst);
  }
}

TEST_CASE("GPU backward reference runs a mid training shape", "[gpu][bwd]") {
  // (8, 1536, 2048, 16) bf16 with every flag: too large for the CPU reference
  // in a test; every gradient must be finite and two runs bitwise equal.
  Env env;
  FwdProblem p = testing::shape(8, 1536, 2048, 16, DType::kBF16);
  p.has_d = p.has_z = p.has_delta_bias = p.delta_softplus = true;
  p.return_last_state = p.has_initial_state = true;
  const uint64_t seed = std::random_device{}();
  INFO(p.key() << " seed " << seed);
  const FwdHostInputs in = make_inputs(p, seed);
  const auto dout = make_dout(p, seed);
  const auto dlast = make_dlast(p, seed);
  const auto t0 = std::chrono::steady_clock::now();
  const BwdHostGrads a = require_ok(
      reference_backward_gpu(in, dout, dlast, env.device, env.compiler, env.stream.get()));
  const auto t1 = std::chrono::steady_clock::now();
  const BwdHostGrads b = require_ok(
      reference_backward_gpu(in, dout, dlast, env.device, env.compiler, env.stream.get()));
  std::printf("bwd reference %s: %.2f s (slice %d)\n", p.key().c_str(),
              std::chrono::duration<double>(t1 - t0).count(),
              reference_gpu_slice(p, size_t{8} << 30));
  for (const Named& g : kGrads) {
    INFO(g.name);
    const auto& x = a.*(g.grad);
    const auto& y = b.*(g.grad);
    REQUIRE(x.size() == y.size());
    REQUIRE_FALSE(x.empty());
    size_t bad = 0;
    for (double v : x) bad += !std::isfinite(v);
    CHECK(bad == 0);
    CHECK(std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0);
  }
}

TEST_CASE("GPU backward reference rejects mismatched sizes", "[gpu][bwd]") {
  Env env;
  const FwdProblem p = testing::shape(1, 4, 5, 2);
  const FwdHostInputs in = make_inputs(p, 1);
  auto dout = make_dout(p, 1);
  dout.pop_back();
  auto r = reference_backward_gpu(in, dout, {}, env.device, env.compiler, env.stream.get());
  CHECK_FALSE(r.is_ok());
}

}  // namespace
}  // namespace ssmtune::bwd
