// Checks of backward gradients for the GPU suites: every gradient against
// the fp64 reference with the budgets of docs/accuracy.md (tuner/bwd/
// accuracy.h), and two runs' gradients bitwise equal.
#pragma once

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tuner/accuracy.h"
#include "tuner/bwd/accuracy.h"
#include "tuner/bwd/device_problem.h"
#include "tuner/bwd/reference_cpu.h"

namespace ssmtune::testing {

struct BwdGrad {
  const char* name;
  std::vector<double> bwd::BwdHostGrads::*ref;
  std::vector<unsigned char> bwd::DeviceGradBytes::*got;
};

inline constexpr BwdGrad kBwdGrads[] = {
    {"du", &bwd::BwdHostGrads::du, &bwd::DeviceGradBytes::du},
    {"ddelta", &bwd::BwdHostGrads::ddelta, &bwd::DeviceGradBytes::ddelta},
    {"dA", &bwd::BwdHostGrads::dA, &bwd::DeviceGradBytes::dA},
    {"dB", &bwd::BwdHostGrads::dB, &bwd::DeviceGradBytes::dB},
    {"dC", &bwd::BwdHostGrads::dC, &bwd::DeviceGradBytes::dC},
    {"dD", &bwd::BwdHostGrads::dD, &bwd::DeviceGradBytes::dD},
    {"dz", &bwd::BwdHostGrads::dz, &bwd::DeviceGradBytes::dz},
    {"ddelta_bias", &bwd::BwdHostGrads::ddelta_bias, &bwd::DeviceGradBytes::ddelta_bias},
    {"dh0", &bwd::BwdHostGrads::dh0, &bwd::DeviceGradBytes::dh0},
};

// Scores every gradient against fp64: no unwritten (still poisoned) or
// non-finite element, relative L2 within the gradient's budget (f64: the
// config accumulates in fp64). Returns a line of "name rel_l2/budget".
inline std::string check_bwd_grads(const FwdProblem& p, const bwd::BwdHostGrads& ref,
                                   const bwd::DeviceGradBytes& got, bool f64) {
  std::string line;
  for (const BwdGrad& g : kBwdGrads) {
    const std::vector<double>& want = ref.*g.ref;
    const std::vector<unsigned char>& raw = got.*g.got;
    const DType dt = bwd::bwd_grad_dtype(g.name, p);
    INFO(g.name);
    if (want.empty()) {
      CHECK(raw.empty());
      continue;
    }
    REQUIRE(raw.size() == want.size() * dtype_bytes(dt));
    const Tolerance tol = mamba_tolerance(p.dtype);
    const ErrorStats s = score(want, raw.data(), dt, tol.rtol, tol.atol);
    const double floor = rounding_floor(want, dt);
    const double budget = bwd::bwd_budget_for(g.name, p.dtype, f64, floor).rel_l2;
    char buf[96];
    std::snprintf(buf, sizeof buf, " %s %.2e/%.1e", g.name, s.rel_l2, budget);
    line += buf;
    INFO("rel_l2 " << s.rel_l2 << " budget " << budget << " floor " << floor << " unwritten "
                   << s.unwritten << " nan_inf " << s.nan_inf << " max_abs/max_ref "
                   << s.max_abs_over_max_ref);
    CHECK(s.unwritten == 0);
    CHECK(s.nan_inf == 0);
    CHECK(s.rel_l2 <= budget);
  }
  return line;
}

// Every gradient of two runs bitwise equal (`what` names the pair).
inline void check_bwd_bitwise_equal(const bwd::DeviceGradBytes& a, const bwd::DeviceGradBytes& b,
                                    const char* what) {
  for (const BwdGrad& g : kBwdGrads) {
    INFO(g.name << " differs: " << what);
    REQUIRE((a.*g.got).size() == (b.*g.got).size());
    CHECK(std::memcmp((a.*g.got).data(), (b.*g.got).data(), (a.*g.got).size()) == 0);
  }
}

}  // namespace ssmtune::testing
