// The forward's saving variant (kSavesStatesOption, tuner/fwd/runner.h):
// every algorithm that saves states compiles with it for sm_90 at the
// training shape, without spills past the sink's own (12 bytes in one
// kernel), as its own program (another cache key), and the option reaches
// the templates (some kernel's registers differ from the plain kernel's).
// Without a GPU: NVRTC and ptxas only.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "jit/compiler.h"
#include "jit/program_builder.h"
#include "support/problems.h"
#include "tuner/fwd/algorithms.h"
#include "tuner/fwd/heuristics.h"
#include "tuner/fwd/plan.h"
#include "tuner/fwd/runner.h"

namespace ssmtune {
namespace {

TEST_CASE("the forward's saving variant compiles without spills for every saving algorithm",
          "[fwd][compile]") {
  jit::Compiler compiler(jit::TemplateSources::embedded(), nullptr);
  FwdProblem p = testing::shape(8, 1536, 2048, 16, DType::kBF16, 1);
  p.has_d = p.has_z = p.has_delta_bias = p.delta_softplus = true;
  std::vector<jit::Instantiation> inst;
  int algorithms = 0;
  for (const FwdAlgorithm* a : fwd_algorithms()) {
    if (!a->saves_states()) continue;
    const FwdConfig c = default_config(p, a->id(), AccType::kF32, 227 * 1024);
    auto plan = plan_fwd(p, c, 227 * 1024);
    INFO(c.key() << ": " << plan.status().to_string());
    REQUIRE(plan.is_ok());
    inst.insert(inst.end(), plan->kernels.begin(), plan->kernels.end());
    ++algorithms;
  }
  // sequential, pipelined, split, multipass, look-back, warp scan, block scan
  CHECK(algorithms == 7);
  auto plain_specs = jit::make_programs(inst, 0, "sm_90", "ssm_fwd");
  auto saving_specs = jit::make_programs(inst, 0, "sm_90", "ssm_fwd_states");
  REQUIRE(plain_specs.size() == 1);
  REQUIRE(saving_specs.size() == 1);
  saving_specs[0].extra_options.push_back(kSavesStatesOption);
  CHECK(compiler.cache_key(plain_specs[0]) != compiler.cache_key(saving_specs[0]));
  auto plain = compiler.compile(plain_specs[0]);
  auto saving = compiler.compile(saving_specs[0]);
  INFO(plain.status().to_string() << " / " << saving.status().to_string());
  REQUIRE(plain.is_ok());
  REQUIRE(saving.is_ok());
  REQUIRE(plain->kernels.size() == saving->kernels.size());
  bool any_differs = false;
  for (size_t i = 0; i < saving->kernels.size(); ++i) {
    const auto& k = saving->kernels[i];
    const auto& base = plain->kernels[i];
    REQUIRE(k.name_expression == base.name_expression);
    std::printf("%s\n  plain  %s\n  saving %s\n", k.name_expression.c_str(),
                base.resources.to_string().c_str(), k.resources.to_string().c_str());
    INFO(k.name_expression << "\n" << saving->log);
    CHECK(k.resources.found);
    CHECK(!base.resources.spills());
    CHECK(base.resources.stack_frame_bytes == 0);
    // The sequential kernel at 256 threads keeps 64 registers and parks the
    // sink's lane coordinates (read at a checkpoint only) on the stack: 12
    // bytes in ptxas 13.0. More would be the loop's own values.
    CHECK(k.resources.spill_store_bytes <= 16);
    CHECK(k.resources.stack_frame_bytes <= 16);
    any_differs = any_differs || k.resources.registers != base.resources.registers;
  }
  // The pipelined kernel needs registers for its spans and the sink: had
  // the option not reached the templates, no kernel would differ.
  CHECK(any_differs);
}

}  // namespace
}  // namespace ssmtune
