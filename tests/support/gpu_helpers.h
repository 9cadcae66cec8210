// Helpers for the GPU suites: unwrap Results inside Catch2 assertions and
// name the device's own arch.
#pragma once

#include <catch2/catch.hpp>

#include "jit/device.h"
#include "ssmtune/status.h"

namespace ssmtune::testing {

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
