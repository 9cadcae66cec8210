#include "tuner/heuristics.h"

#include <catch2/catch.hpp>

#include "support/problems.h"
#include "tuner/fwd_plan.h"

namespace ssmtune {
namespace {

// bf16 unless said otherwise: the dtype of the large benchmark shapes.
Problem shape(int64_t b, int64_t d, int64_t l, int64_t n, DType dt = DType::kBF16) {
  return testing::shape(b, d, l, n, dt);
}

constexpr int kSms = 132;
constexpr size_t kShared = 227 * 1024;

TEST_CASE("the default keeps reads in flight only while the grid leaves room", "[tuner]") {
  // (8, 1536): 384 blocks of 32 channels, 2.9 per SM.
  const DefaultChoice mid = heuristic_default(shape(8, 1536, 2048, 16), kSms, kShared);
  CHECK(mid.config.algo == ScanAlgo::kSequential);
  CHECK(mid.config.items == 2);
  CHECK(mid.reason.find("384 blocks") != std::string::npos);
  // (4, 5120): 640 blocks, 4.8 per SM.
  const DefaultChoice big = heuristic_default(shape(4, 5120, 8192, 16), kSms, kShared);
  CHECK(big.config.algo == ScanAlgo::kSequential);
  CHECK(big.config.items == 1);
  CHECK(big.reason.find("no reads in flight") != std::string::npos);
  for (const Problem& p : {shape(8, 1536, 2048, 16), shape(4, 5120, 8192, 16)}) {
    const KernelConfig c = heuristic_default(p, kSms, kShared).config;
    INFO(p.key() << " " << c.key());
    CHECK(check_config(p, c, kShared).is_ok());
    CHECK(c.n_split == 8);  // two states per thread at dstate 16
  }
}

TEST_CASE("few channels go to the warp scan, whatever the sequence length", "[tuner]") {
  for (const Problem& p : {shape(1, 2048, 65536, 16), shape(8, 256, 1024, 4, DType::kF32)}) {
    const DefaultChoice d = heuristic_default(p, kSms, kShared);
    INFO(p.key() << " " << d.config.key() << ": " << d.reason);
    CHECK(d.config.algo == ScanAlgo::kWarpScan);
    CHECK(d.config.d_step == 8);
    CHECK(check_config(p, d.config, kShared).is_ok());
  }
}

TEST_CASE("sequential defaults stay legal from dstate 1 to 256", "[tuner]") {
  for (int64_t n : {1, 2, 4, 16, 64, 256}) {
    const Problem p = shape(8, 1536, 2048, n);
    const KernelConfig c = default_config(p, ScanAlgo::kSequential, AccType::kF32, kShared);
    INFO(c.key());
    CHECK(check_config(p, c, kShared).is_ok());
    CHECK(c.d_step <= 64);
    CHECK(c.threads == c.d_step * c.n_split);
  }
}

}  // namespace
}  // namespace ssmtune
