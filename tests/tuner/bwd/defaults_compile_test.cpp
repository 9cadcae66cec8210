// The backward's built-in defaults (tuner/bwd/defaults.cpp) compile for sm_90
// without spills, as the tuner's space is pruned (a spilling config is never
// timed there, but a default runs untimed): every rule's layout, dstate 1 to
// 256, over many channels, a few hundred, and few blocks, bf16 with every
// flag (the most registers) and fp32 plain. Known exceptions are listed
// with their spills; a new one fails here. Without a GPU: NVRTC and ptxas.
#include <catch2/catch.hpp>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "jit/compiler.h"
#include "support/problems.h"
#include "tuner/bwd/config.h"
#include "tuner/bwd/plan.h"

namespace ssmtune::bwd {
namespace {

constexpr int kSms = 132;
constexpr size_t kShared = 227 * 1024;

// The problem with the block's flags and the last state in and out, or none.
BwdProblem flagged(int64_t b, int64_t d, int64_t l, int64_t n, DType t, bool flags) {
  BwdProblem p;
  p.fwd = testing::shape(b, d, l, n, t, 1);
  p.fwd.has_d = p.fwd.has_z = p.fwd.has_delta_bias = p.fwd.delta_softplus = flags;
  p.fwd.return_last_state = p.has_dlast = flags;
  return p;
}

// Defaults known to spill (bytes of spill stores and loads at most), by
// config key and dstate: 3 blocks an SM at dstate 8 with the last state
// (168 registers).
int allowed_spill_bytes(const std::string& key, int64_t dstate) {
  if (key == "seq.K16.D64.fp32.t128.s2.fast.b3" && dstate == 8) return 64;
  return 0;
}

TEST_CASE("the backward's defaults compile for sm_90 without spills, but the known ones",
          "[bwd][compile]") {
  struct Shape {
    int64_t b, d, l;
  };
  // Many channels (the sequential kernel, the warp scans), a few hundred
  // (multipass or the warp scan), few blocks of a long sequence (multipass).
  const Shape shapes[] = {{16, 1536, 2048}, {4, 768, 1024}, {2, 128, 4096}};
  std::vector<jit::Instantiation> inst;
  std::map<std::string, std::pair<std::string, int64_t>> owner;  // kernel -> (key, dstate)
  for (const Shape& s : shapes)
    for (int64_t n : {1, 2, 3, 4, 8, 12, 16, 17, 24, 25, 31, 32, 36, 40, 48, 64, 128, 256})
      for (bool flags : {true, false}) {
        const BwdProblem p = flagged(s.b, s.d, s.l, n, flags ? DType::kBF16 : DType::kF32, flags);
        const BwdDefault d = default_config(p, BwdAcc::kF32, kShared, kSms);
        auto plan = plan_bwd(p, d.config, kShared);
        INFO(p.key() << " " << d.config.key() << ": " << plan.status().to_string());
        REQUIRE(plan.is_ok());
        for (const jit::Instantiation& k : plan->kernels)
          if (owner.emplace(k.name_expression, std::make_pair(d.config.key(), n)).second)
            inst.push_back(k);
      }
  jit::Compiler compiler(jit::TemplateSources::embedded(), nullptr);
  auto programs = compiler.compile_all(jit::make_programs(inst, 8, "sm_90", "bwd"));
  size_t kernels = 0, known = 0;
  for (auto& program : programs) {
    INFO(program.status().to_string());
    REQUIRE(program.is_ok());
    for (const auto& k : program->kernels) {
      const auto& [key, dstate] = owner.at(k.name_expression);
      const int allowed = allowed_spill_bytes(key, dstate);
      const int64_t spilled = k.resources.spill_store_bytes + k.resources.spill_load_bytes;
      INFO(key << " at dstate " << dstate << ": " << k.name_expression << "\n  "
               << k.resources.to_string());
      CHECK(k.resources.found);
      CHECK(spilled <= allowed);
      if (spilled > 0) {
        std::printf("spills: %s at dstate %lld: %s (allowed: %d B)\n", key.c_str(),
                    static_cast<long long>(dstate), k.resources.to_string().c_str(), allowed);
        if (spilled <= allowed) ++known;
      }
      ++kernels;
    }
  }
  CHECK(kernels == inst.size());
  // The known exceptions are still there (remove them from the list when fixed).
  CHECK(known > 0);
}

}  // namespace
}  // namespace ssmtune::bwd
