#include "core/thread_pool.h"

#include <atomic>
#include <catch2/catch.hpp>

namespace ssmtune {
namespace {

TEST_CASE("thread pool runs every task and returns results in order", "[core]") {
  std::atomic<int> ran{0};
  std::vector<std::future<int>> futures;
  {
    ThreadPool pool(3);
    for (int i = 0; i < 100; ++i)
      futures.push_back(pool.submit([i, &ran] {
        ++ran;
        return i * i;
      }));
    for (int i = 0; i < 100; ++i) CHECK(futures[i].get() == i * i);
  }
  CHECK(ran == 100);
}

}  // namespace
}  // namespace ssmtune
