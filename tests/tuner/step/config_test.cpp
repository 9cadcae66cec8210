// Decode-step configs: keys, legality (the templates' static_asserts
// mirrored), the search space, the default and its reason; every config of
// the space compiles through NVRTC for sm_90 without spills.
#include "tuner/step/config.h"

#include <catch2/catch.hpp>

#include <set>

#include "jit/compiler.h"
#include "jit/template_sources.h"
#include "support/problems.h"
#include "tuner/step/plan.h"

namespace ssmtune::step {
namespace {

StepProblem problem(int64_t batch, int64_t heads, int64_t headdim, int64_t dstate, DType dt,
                    DType st) {
  return testing::step_problem(batch, heads, headdim, dstate, 1, dt, st, true);
}

TEST_CASE("step config keys round-trip; malformed keys are refused", "[step]") {
  StepConfig c;
  c.d_step = 16;
  c.lanes = 8;
  c.vec = 2;
  c.acc = StepAcc::kF64;
  CHECK(c.key() == "step.D16.L8.V2.fp64");
  auto back = StepConfig::from_key(c.key());
  REQUIRE(back.is_ok());
  CHECK(*back == c);
  for (const char* bad : {"step.D16.L8.V2", "seq.D16.L8.V2.fp32", "step.D016.L8.V2.fp32",
                          "step.D16.L8.V2.fp16", "step.D16.L-8.V2.fp32", "step.D16.V2.L8.fp32"}) {
    INFO(bad);
    CHECK_FALSE(StepConfig::from_key(bad).is_ok());
  }
}

TEST_CASE("step configs are checked against the problem", "[step]") {
  const StepProblem p = problem(1, 1, 64, 16, DType::kBF16, DType::kF32);
  auto rule_broken = [&](int d, int l, int v, const char* text) {
    StepConfig c;
    c.d_step = d;
    c.lanes = l;
    c.vec = v;
    const Status s = check_config(p, c);
    INFO(c.key() << ": " << s.to_string());
    CHECK_FALSE(s.is_ok());
    CHECK(s.message().find(text) != std::string::npos);
  };
  rule_broken(32, 3, 4, "lanes must be a power of two");
  rule_broken(32, 64, 1, "lanes must be a power of two");
  rule_broken(32, 4, 3, "vec must be");
  rule_broken(10, 4, 4, "multiple of 32");
  rule_broken(512, 4, 4, "at most 1024");
  StepConfig one;
  one.d_step = 32;
  one.lanes = 1;
  one.vec = 1;
  CHECK(check_config(p, one).is_ok());  // 16 passes of one state: the limit
  StepProblem wide_n = p;
  wide_n.dstate = 256;
  one.lanes = 4;
  one.d_step = 8;
  CHECK(check_config(wide_n, one).message().find("64 passes") != std::string::npos);
  StepProblem bf16_state = p;
  bf16_state.state_dtype = DType::kBF16;
  StepConfig wide;
  wide.vec = 8;
  wide.lanes = 2;
  wide.d_step = 64;
  CHECK(check_config(bf16_state, wide).is_ok());  // 8 bf16 = 16 bytes
  CHECK_FALSE(check_config(p, wide).is_ok());     // 8 fp32 = 32 bytes
}

TEST_CASE("the step's default: 16-byte state vectors, lanes covering dstate, a reason", "[step]") {
  auto d = default_config(problem(64, 1, 5120, 16, DType::kBF16, DType::kF32));
  CHECK(d.config.key() == "step.D32.L4.V4.fp32");
  CHECK(d.reason.find("16-byte state vectors, 4 lanes a channel (1 pass") != std::string::npos);
  d = default_config(problem(64, 1, 5120, 16, DType::kBF16, DType::kBF16));
  CHECK(d.config.key() == "step.D64.L2.V8.fp32");
  d = default_config(problem(8, 80, 64, 128, DType::kBF16, DType::kF32));
  CHECK(d.config.key() == "step.D4.L32.V4.fp32");
  d = default_config(problem(8, 24, 64, 256, DType::kF32, DType::kF32));
  CHECK(d.config.key() == "step.D4.L32.V4.fp32");
  CHECK(d.reason.find("2 passes") != std::string::npos);
  d = default_config(problem(2, 1, 5, 1, DType::kF32, DType::kF32));
  CHECK(d.config.key() == "step.D128.L1.V1.fp32");
  // Few blocks for the SMs: 64 threads.
  d = default_config(problem(1, 1, 1024, 16, DType::kBF16, DType::kF32), StepAcc::kF32, 132);
  CHECK(d.config.threads() == 64);
  CHECK(d.reason.find("64 threads") != std::string::npos);
  for (const StepProblem& p : {problem(1, 1, 3, 7, DType::kF16, DType::kF16),
                               problem(3, 4, 50, 256, DType::kF32, DType::kBF16)})
    CHECK(check_config(p, default_config(p).config).is_ok());
}

TEST_CASE("every config of the step's space is legal, once, and compiles without spills",
          "[step][nvrtc]") {
  jit::Compiler compiler(jit::TemplateSources::embedded(), nullptr);
  for (const StepProblem& p : {problem(64, 1, 5120, 16, DType::kBF16, DType::kF32),
                               problem(2, 4, 24, 13, DType::kF16, DType::kBF16),
                               problem(8, 80, 64, 128, DType::kF32, DType::kF32)}) {
    const std::vector<StepConfig> space = search_space(p);
    REQUIRE(space.size() >= 8);
    std::set<std::string> keys;
    int fp64 = 0;
    std::vector<jit::Instantiation> kernels;
    for (const StepConfig& c : space) {
      INFO(p.key() << " " << c.key());
      CHECK(check_config(p, c).is_ok());
      CHECK(keys.insert(c.key()).second);
      fp64 += c.acc == StepAcc::kF64;
      CHECK((c.lanes - 1) * c.vec < p.dstate);  // no lane without states
      auto plan = plan_step(p, c);
      REQUIRE(plan.is_ok());
      CHECK(plan->block.x == static_cast<unsigned>(c.threads()));
      CHECK(plan->grid.y == static_cast<unsigned>(p.batch));
      CHECK(plan->grid.x == static_cast<unsigned>((p.headdim + c.d_step - 1) / c.d_step * p.heads));
      kernels.push_back(plan->kernel);
    }
    CHECK(fp64 == 1);
    auto program = compiler.compile(jit::make_programs(kernels, 0, "sm_90", "step")[0]);
    INFO(p.key() << ": " << program.status().to_string());
    REQUIRE(program.is_ok());
    CHECK(program->kernels.size() == kernels.size());
    for (const auto& k : program->kernels) {
      INFO(k.name_expression);
      CHECK(k.resources.spill_store_bytes == 0);
      CHECK(k.resources.registers <= 128);
    }
  }
}

}  // namespace
}  // namespace ssmtune::step
