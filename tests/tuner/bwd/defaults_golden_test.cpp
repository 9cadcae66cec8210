// Golden check of the backward's host decisions: for a broad set of problems
// (every dtype, dstate 1..256, seqlen 1..16384, few to many channels, groups,
// flags, constant B/C), the default config with its reason at fp32 and fp64
// sums, three SM counts and two shared-memory limits, and the search space.
// The text is hashed; set SSMTUNE_GOLDEN_DUMP=<file> to write it out (to diff
// against a dump of an older build after a deliberate change, then update
// kGolden).
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/hash.h"
#include "support/problems.h"
#include "tuner/bwd/config.h"

namespace ssmtune::bwd {
namespace {

// The hash of the dump made by the rules through the warp scan's chunk by
// waves (the dstate 17 to 31 rule's dump with (8, 256, 4096, 1) at chunks of
// 256 and (4, 768, 512, 2 and 3) at 128, every dtype), with 42 problems of
// dstate 40 and 48 appended for the 8-lane and multipass chunk rules there
// (bench/NOTES.md, version 39); multipass at dstate 17 to 31 over 4 lanes
// (bench/NOTES.md, version 40: 108 default lines at dstate 24 and 31, and the
// multipass configs of their search spaces).
constexpr const char* kGolden = "fa1f61af8aac8302308f208fc9e61bf3";

std::vector<BwdProblem> problems() {
  const DType dtypes[] = {DType::kF32, DType::kF16, DType::kBF16};
  const int64_t dstates[] = {1, 2, 3, 4, 5, 8, 12, 16, 24, 31, 32, 64, 128, 256};
  const int64_t seqlens[] = {1, 7, 64, 100, 128, 256, 300, 512, 1000, 2048, 4096, 16384};
  struct Shape {
    int64_t batch, dim, groups;
  };
  // From 4 channels to 65536, across the rules' channel thresholds.
  const Shape shapes[] = {{1, 4, 1},     {2, 64, 2},   {8, 256, 1},   {1, 2560, 1},
                          {16, 1536, 1}, {4, 5120, 4}, {32, 2048, 1}, {3, 24, 3},
                          {1, 8192, 1},  {2, 128, 1},  {8, 1024, 1},  {4, 768, 1}};
  std::vector<BwdProblem> out;
  int i = 0;
  // The i-th problem's sizes: its shape cycles through the list above.
  auto sized = [&](int64_t l, int64_t n, DType t) {
    const Shape& s = shapes[(i * 5) % std::size(shapes)];
    BwdProblem p;
    p.fwd = testing::shape(s.batch, s.dim, l, n, t, s.groups);
    return p;
  };
  for (DType t : dtypes)
    for (int64_t n : dstates)
      for (int64_t l : seqlens) {
        BwdProblem p = sized(l, n, t);
        const int f = i % 7;
        p.fwd.variable_b = f != 1 && f != 3;
        p.fwd.variable_c = f != 2 && f != 3;
        p.fwd.has_d = p.fwd.has_z = p.fwd.has_delta_bias = p.fwd.delta_softplus = f >= 4;
        p.fwd.return_last_state = p.has_dlast = f == 5;
        p.fwd.has_initial_state = f == 6;
        out.push_back(p);
        ++i;
      }
  // dstate 40 and 48 (the 8-lane and multipass chunk rules there), after the
  // grid above so that its lines keep their order.
  for (DType t : dtypes)
    for (int64_t n : {40, 48})
      for (int64_t l : {7, 256, 1000, 2048, 4096, 8192, 16384}) {
        BwdProblem p = sized(l, n, t);
        p.fwd.has_d = p.fwd.has_z = p.fwd.has_delta_bias = p.fwd.delta_softplus = i % 2 == 0;
        out.push_back(p);
        ++i;
      }
  return out;
}

std::string dump_problem(const BwdProblem& p) {
  std::ostringstream o;
  o << p.key() << "\n";
  for (BwdAcc acc : {BwdAcc::kF32, BwdAcc::kF64})
    for (int sms : {0, 78, 132})
      for (size_t smem : {size_t{227} * 1024, size_t{99} * 1024}) {
        const BwdDefault d = default_config(p, acc, smem, sms);
        o << " default " << (acc == BwdAcc::kF32 ? "f32" : "f64") << " sms " << sms << " smem "
          << smem << ": " << d.config.key() << " | " << d.reason << "\n";
      }
  o << " space:";
  for (const BwdConfig& c : search_space(p, 227 * 1024)) o << " " << c.key();
  o << "\n";
  return o.str();
}

TEST_CASE("the backward's defaults and search spaces match the golden dump", "[bwd]") {
  const char* path = std::getenv("SSMTUNE_GOLDEN_DUMP");
  std::ofstream file;
  if (path != nullptr) file.open(path);
  Hasher h;
  int count = 0;
  for (const BwdProblem& p : problems()) {
    const std::string text = dump_problem(p);
    h.add(text);
    if (path != nullptr) file << text;
    ++count;
  }
  INFO(count << " problems");
  CHECK(h.hex() == kGolden);
}

}  // namespace
}  // namespace ssmtune::bwd
