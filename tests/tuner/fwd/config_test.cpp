#include "tuner/fwd/config.h"

#include <catch2/catch.hpp>

namespace ssmtune {
namespace {

TEST_CASE("kernel config keys round-trip", "[tuner]") {
  FwdConfig c;
  c.algo = ScanAlgo::kWarpScan;
  c.chunk = 256;
  c.d_step = 4;
  c.acc = AccType::kF64;
  c.threads = 64;
  c.items = 16;
  c.n_split = 2;
  c.exp_mode = ExpMode::kPoly;
  c.poly_share = 3;
  CHECK(c.key() == "warpscan.K256.D4.fp64.t64.i16.s2.poly3");
  auto back = FwdConfig::from_key(c.key());
  REQUIRE(back.is_ok());
  CHECK(*back == c);
  for (ScanAlgo a : kAllScanAlgos) {
    FwdConfig d;
    d.algo = a;
    auto r = FwdConfig::from_key(d.key());
    REQUIRE(r.is_ok());
    CHECK(r->algo == a);
  }
}

TEST_CASE("malformed config keys are rejected with the reason", "[tuner]") {
  for (const char* bad :
       {"", "seq", "nope.K64.D8.fp32.t128.i8.s1.fast", "sequential.K.D8.fp32.t128.i8.s1.fast",
        "sequential.K64.D8.fp16.t128.i8.s1.fast", "sequential.K64.D8.fp32.t128.i8.s1.poly",
        "sequential.K064.D8.fp32.t128.i8.s1.fast"}) {
    INFO(bad);
    auto r = FwdConfig::from_key(bad);
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().code() == Code::kInvalidArgument);
    CHECK(r.status().message().find("bad kernel config key") != std::string::npos);
  }
}

}  // namespace
}  // namespace ssmtune
