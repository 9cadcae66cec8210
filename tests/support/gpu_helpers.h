// Helpers for the GPU suites: unwrap Results inside Catch2 assertions, name
// the device's own arch, draw a printed (replayable) seed.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "jit/device.h"
#include "ssmtune/status.h"

namespace ssmtune::testing {

// A fresh seed, printed with `what`; SSMTUNE_TEST_SEED replays a failing draw.
inline uint64_t test_seed(const char* what) {
  const char* fixed = std::getenv("SSMTUNE_TEST_SEED");
  const uint64_t seed = fixed ? std::strtoull(fixed, nullptr, 10) : std::random_device{}();
  std::printf("%s seed %llu\n", what, static_cast<unsigned long long>(seed));
  return seed;
}

template <typename T>
T require_ok(Result<T> r) {
  INFO(r.status().to_string());
  REQUIRE(r.is_ok());
  return std::move(r).value();
}

inline std::string device_arch() { return require_ok(jit::query_device(0)).arch(); }

}  // namespace ssmtune::testing

#define REQUIRE_STATUS_OK(expr)    \
  do {                             \
    ::ssmtune::Status s_ = (expr); \
    INFO(s_.to_string());          \
    REQUIRE(s_.is_ok());           \
  } while (0)
