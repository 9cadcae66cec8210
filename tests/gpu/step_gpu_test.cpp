// The decode step on the GPU: every config of the step's space, through
// the family's bench (fresh random inputs, the state restored and out
// poisoned before each run, out and the updated state scored against the
// fp64 step), over Mamba-1 and Mamba-2 shapes, odd dstate and headdim, the
// three dtypes for inputs and state, every flag and state indices with
// padding.
#include <catch2/catch.hpp>

#include <cstdio>

#include "jit/compiler.h"
#include "support/gpu_helpers.h"
#include "support/problems.h"
#include "tuner/evaluator.h"
#include "tuner/step/family.h"

namespace ssmtune {
namespace {

using testing::require_ok;

TEST_CASE("every step config matches the fp64 step on the GPU", "[gpu][step]") {
  static jit::MemoryCubinCache cache;
  jit::Compiler compiler(jit::TemplateSources::embedded(), &cache);
  const auto dev = require_ok(jit::query_device(0));
  const uint64_t seed = testing::test_seed("step gpu test");
  const KernelFamily& family = step_family();
  const std::vector<step::StepProblem> problems = {
      // Mamba-1 decode (d_inner 1536 and 5120), bf16 with an fp32 state.
      testing::step_problem(4, 1, 1536, 16, 1, DType::kBF16, DType::kF32, true, false),
      testing::step_problem(64, 1, 5120, 16, 1, DType::kBF16, DType::kF32, true, false),
      // mamba_ssm's test grid's sizes: dim 2064 (not a multiple of a tile), dstate 32, 64.
      testing::step_problem(2, 1, 2064, 32, 1, DType::kF32, DType::kF32, true, false),
      testing::step_problem(2, 1, 2048, 64, 1, DType::kF16, DType::kF16, false, false),
      // Mamba-2: 24 heads of 64 over 2 groups, dstate 128; continuous batching.
      testing::step_problem(8, 24, 64, 128, 2, DType::kBF16, DType::kBF16, true, true),
      // Odd sizes, dstate 1 and 256, indices.
      testing::step_problem(3, 2, 37, 7, 1, DType::kF32, DType::kBF16, true, true),
      testing::step_problem(1, 1, 33, 1, 1, DType::kF16, DType::kF32, true, false),
      testing::step_problem(2, 4, 16, 256, 4, DType::kF32, DType::kF32, false, false),
  };
  int index = 0;
  for (const step::StepProblem& p : problems) {
    StepFamilyProblem fp(p);
    EvalOptions o;
    o.seed = seed + static_cast<uint64_t>(index++);
    o.time = false;
    auto eval = require_ok(Evaluator::create(dev, compiler, family, fp, o));
    std::vector<std::string> configs;
    for (const SpaceEntry& e : family.search_space(fp, dev, SpaceOptions{}))
      if (!e.pruned) configs.push_back(e.config);
    eval.precompile(configs);
    for (const std::string& c : configs) {
      const EvalResult r = eval.evaluate(c);
      INFO(p.key() << " " << c << " seed " << o.seed << ": " << r.detail);
      REQUIRE(r.status == MeasureStatus::kOk);
      const OutputScore* out = r.output("out");
      const OutputScore* state = r.output("state");
      REQUIRE(out != nullptr);
      REQUIRE(state != nullptr);
      std::printf("%-52s %-22s out %.1e (floor %.1e) state %.1e (floor %.1e) %s\n", p.key().c_str(),
                  c.c_str(), out->stats.rel_l2, out->floor, state->stats.rel_l2, state->floor,
                  to_string(r.verdict));
      CHECK(out->stats.unwritten == 0);
      CHECK(out->stats.nan_inf == 0);
      CHECK(state->stats.nan_inf == 0);
      CHECK((r.verdict == Verdict::kInside || r.verdict == Verdict::kAtLimit));
    }
  }
}

}  // namespace
}  // namespace ssmtune
