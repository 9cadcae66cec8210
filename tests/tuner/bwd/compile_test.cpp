// Every backward algorithm (sequential, multipass) x accumulation x input
// dtype x {no flags, every flag, constant B/C} compiles under NVRTC for
// sm_90 without spills (the ptxas report of each kernel is printed).
#include <catch2/catch.hpp>

#include <cstdio>

#include "jit/compiler.h"
#include "support/problems.h"
#include "tuner/bwd/plan.h"

namespace ssmtune::bwd {
namespace {

std::vector<BwdProblem> compile_problems() {
  std::vector<BwdProblem> out;
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
    BwdProblem none;
    none.fwd = testing::shape(2, 64, 2048, 16, t, 2);
    out.push_back(none);
    BwdProblem all = none;
    all.fwd.has_d = all.fwd.has_z = all.fwd.has_delta_bias = all.fwd.delta_softplus = true;
    all.fwd.return_last_state = all.fwd.has_initial_state = all.has_dlast = true;
    out.push_back(all);
    BwdProblem cst = all;
    cst.fwd.groups = 1;
    cst.fwd.variable_b = cst.fwd.variable_c = false;
    out.push_back(cst);
  }
  return out;
}

TEST_CASE("every backward algorithm and dtype compiles for sm_90 without spills",
          "[bwd][compile]") {
  jit::Compiler compiler(jit::TemplateSources::embedded(), nullptr);
  std::vector<jit::Instantiation> inst;
  for (const BwdProblem& p : compile_problems())
    for (BwdAcc acc : {BwdAcc::kF32, BwdAcc::kF64})
      for (BwdAlgo algo : {BwdAlgo::kSequential, BwdAlgo::kMultiPass}) {
        BwdConfig c = default_config(p, acc, 227 * 1024).config;
        c.algo = algo;
        c.segments = algo == BwdAlgo::kMultiPass ? 8 : 1;
        auto plan = plan_bwd(p, c);
        INFO(p.key() << " " << c.key() << ": " << plan.status().to_string());
        REQUIRE(plan.is_ok());
        inst.insert(inst.end(), plan->kernels.begin(), plan->kernels.end());
      }
  // Large and small dstate, every dtype, every flag.
  for (int64_t n : {1, 2, 3, 4, 64, 256})
    for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
      BwdProblem p;
      p.fwd = testing::shape(2, 64, 1000, n, t, 2);
      p.fwd.has_d = p.fwd.has_z = p.fwd.has_delta_bias = p.fwd.delta_softplus = true;
      p.fwd.return_last_state = p.fwd.has_initial_state = p.has_dlast = true;
      auto plan = plan_bwd(p, default_config(p, BwdAcc::kF32, 227 * 1024).config);
      REQUIRE(plan.is_ok());
      inst.insert(inst.end(), plan->kernels.begin(), plan->kernels.end());
    }
  {  // 3 blocks per SM (.b3): more registers, still no spills
    BwdProblem p;
    p.fwd = testing::shape(8, 1536, 2048, 16, DType::kBF16);
    p.fwd.has_d = p.fwd.has_z = p.fwd.has_delta_bias = p.fwd.delta_softplus = true;
    BwdConfig c = default_config(p, BwdAcc::kF32, 227 * 1024, 132).config;
    REQUIRE(c.blocks == 3);
    auto plan = plan_bwd(p, c);
    REQUIRE(plan.is_ok());
    REQUIRE(plan->kernels.front().name_expression.find(", 3>") != std::string::npos);
    inst.insert(inst.end(), plan->kernels.begin(), plan->kernels.end());
  }
  {  // 2 channels a thread (the space's .c2 configs), the training shape with the flags
    BwdProblem p;
    p.fwd = testing::shape(8, 1536, 2048, 16, DType::kBF16);
    p.fwd.has_d = p.fwd.has_z = p.fwd.has_delta_bias = p.fwd.delta_softplus = true;
    for (const char* key :
         {"seq.K16.D32.fp32.t64.s4.fast.c2", "seq.K16.D64.fp32.t128.s4.fast.c2"}) {
      auto plan = plan_bwd(p, *BwdConfig::from_key(key));
      REQUIRE(plan.is_ok());
      REQUIRE(plan->kernels.front().name_expression.find(", 0, 2>") != std::string::npos);
      inst.insert(inst.end(), plan->kernels.begin(), plan->kernels.end());
    }
  }
  auto results = compiler.compile_all(jit::make_programs(inst, 8, "sm_90", "bwd"));
  size_t kernels = 0;
  for (auto& r : results) {
    INFO(r.status().to_string());
    REQUIRE(r.is_ok());
    for (const auto& k : r->kernels) {
      std::printf("%s\n  %s\n", k.name_expression.c_str(), k.resources.to_string().c_str());
      INFO(k.name_expression << "\n" << r->log);
      CHECK(k.resources.found);
      CHECK(!k.resources.spills());
      CHECK(k.resources.stack_frame_bytes == 0);
      ++kernels;
    }
  }
  CHECK(kernels == inst.size());
}

}  // namespace
}  // namespace ssmtune::bwd
