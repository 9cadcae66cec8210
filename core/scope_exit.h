// Runs a callable when its scope ends, on every path out of it (a worker
// thread's join, a measurer's stop, a pointer reset). Neither copied nor
// moved, so the callable runs exactly once.
#pragma once

#include <utility>

namespace ssmtune {

template <typename F>
class ScopeExit {
 public:
  explicit ScopeExit(F f) : f_(std::move(f)) {}
  ~ScopeExit() { f_(); }
  ScopeExit(const ScopeExit&) = delete;
  ScopeExit& operator=(const ScopeExit&) = delete;

 private:
  F f_;
};

}  // namespace ssmtune
