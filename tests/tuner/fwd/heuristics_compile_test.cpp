// The forward's defaults where the block scan and the short-sequence rules
// take them (tuner/fwd/heuristics.cpp): each default's kernels compile for
// sm_90, plain and as the saving variant, within the spills each kernel is
// known to take. The block scan's B/C rows a chunk ahead
// (templates/ssm/fwd_blockscan.cuh) hold up to 32 more registers a thread
// at dstate <= 4; this is where a layout that spilled would show. Without a
// GPU: NVRTC and ptxas only.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "jit/compiler.h"
#include "jit/program_builder.h"
#include "support/problems.h"
#include "tuner/fwd/heuristics.h"
#include "tuner/fwd/plan.h"
#include "tuner/fwd/runner.h"

namespace ssmtune {
namespace {

constexpr int kSms = 132;
constexpr size_t kShared = 227 * 1024;

// Spill stores (bytes) a kernel of these defaults may take.
// - The block scan and the warp scan: none, except the block scan's saving
//   variant at 16 half-precision steps a lane (128 registers for 16 warps an
//   SM), which parks 4 bytes.
// - The pipelined kernel asks ptxas for as many blocks as shared memory and
//   barriers allow (PipeMinBlocks): its ring of 2 chunks of 32 gets 40 to 56
//   registers and stores up to 12 bytes at dstate 8 to 16 with the flags,
//   which its timings at short sequences include (bench/NOTES.md, version
//   29). Its saving variant stores 40 at dstate 16 in fp32 (not timed).
// - The split scan's fp32 layout (few channels, long sequences) stores up to
//   64: not a layout these rules choose, not checked here.
int allowed_spill_bytes(const std::string& kernel, bool saving) {
  if (kernel.find("ssm_fwd_blockscan<") != std::string::npos) return saving ? 8 : 0;
  if (kernel.find("ssm_fwd_warpscan<") != std::string::npos) return 0;
  if (kernel.find("ssm_fwd_pipelined<") != std::string::npos) return saving ? 48 : 16;
  return -1;
}

// The problem with the block's flags on or off (variable B and C).
FwdProblem flagged(int64_t b, int64_t d, int64_t l, int64_t n, DType t, bool flags) {
  FwdProblem p = testing::shape(b, d, l, n, t, 1);
  p.has_d = p.has_z = p.has_delta_bias = p.delta_softplus = flags;
  p.variable_b = p.variable_c = true;
  return p;
}

// Compiles the defaults of `problems` (each distinct kernel once, plain and
// as the saving variant) and checks each kernel's spills; returns the
// algorithms the defaults took.
std::set<std::string> check_defaults_compile(const std::vector<FwdProblem>& problems) {
  std::vector<jit::Instantiation> inst;
  std::set<std::string> seen, algos;
  for (const FwdProblem& p : problems) {
    const FwdDefaultChoice c = heuristic_default(p, kSms, kShared);
    auto plan = plan_fwd(p, c.config, kShared);
    INFO(p.key() << " " << c.config.key() << ": " << plan.status().to_string());
    REQUIRE(plan.is_ok());
    algos.insert(to_string(c.config.algo));
    for (const jit::Instantiation& k : plan->kernels)
      if (seen.insert(k.name_expression).second) inst.push_back(k);
  }
  jit::Compiler compiler(jit::TemplateSources::embedded(), nullptr);
  auto plain = jit::make_programs(inst, 8, "sm_90", "ssm_fwd");
  auto saving = jit::make_programs(inst, 8, "sm_90", "ssm_fwd_states");
  for (jit::ProgramSpec& spec : saving) spec.extra_options.push_back(kSavesStatesOption);
  std::vector<jit::ProgramSpec> specs = plain;
  specs.insert(specs.end(), saving.begin(), saving.end());
  size_t kernels = 0;
  auto programs = compiler.compile_all(specs);
  for (size_t i = 0; i < programs.size(); ++i) {
    auto& program = programs[i];
    INFO(program.status().to_string());
    REQUIRE(program.is_ok());
    const bool is_saving = i >= plain.size();
    for (const auto& k : program->kernels) {
      INFO((is_saving ? "saving " : "plain ")
           << k.name_expression << ": " << k.resources.to_string());
      CHECK(k.resources.found);
      const int allowed = allowed_spill_bytes(k.name_expression, is_saving);
      // The block scan's layouts are built for 16 warps an SM: at most 128
      // registers a thread (rows ahead add up to 32 at dstate <= 4).
      if (k.name_expression.find("ssm_fwd_blockscan<") != std::string::npos)
        CHECK(k.resources.registers <= 128);
      if (allowed == 0) {
        CHECK(!k.resources.spills());
        CHECK(k.resources.stack_frame_bytes == 0);
      } else if (allowed > 0) {
        CHECK(k.resources.spill_store_bytes <= allowed);
        CHECK(k.resources.stack_frame_bytes <= allowed);
      }
      ++kernels;
    }
  }
  CHECK(kernels == 2 * inst.size());
  return algos;
}

TEST_CASE("the block scan's and short sequences' defaults compile within their spills",
          "[fwd][compile]") {
  struct Shape {
    int64_t b, d, l;
  };
  // Block scan (65 channels to 8 an SM; one or two warps a channel at dstate
  // 1 to 3 from 8 to 64 channels an SM), the pipelined kernel at short
  // sequences (4 threads a channel; 2 where the sequential scan would fill
  // the GPU), the warp scan's short lanes (2 and 4 steps).
  const Shape shapes[] = {{4, 128, 2048},  {1, 512, 4096}, {4, 256, 512},
                          {2, 256, 1024},  {16, 384, 128}, {8, 512, 64},
                          {32, 1536, 256}, {3, 768, 2048}, {4, 1024, 1024}};
  std::vector<FwdProblem> problems;
  for (const Shape& s : shapes)
    for (int64_t n : {1, 2, 3, 4, 8, 16})
      for (DType t : {DType::kF32, DType::kF16, DType::kBF16})
        for (bool flags : {false, true}) problems.push_back(flagged(s.b, s.d, s.l, n, t, flags));
  const std::set<std::string> algos = check_defaults_compile(problems);
  CHECK(algos.count("blockscan") == 1);
  CHECK(algos.count("pipelined") == 1);
  CHECK(algos.count("warpscan") == 1);
}

TEST_CASE("the pipelined defaults of few channels of 17 to 64 states compile within their spills",
          "[fwd][compile]") {
  // 8 lanes (up to 16 channels an SM), 8 or 4 lanes in wider blocks (up to
  // 24), the kernel's own default (past 24).
  struct Shape {
    int64_t b, d, l;
  };
  const Shape shapes[] = {{2, 768, 1024}, {3, 768, 1024}, {4, 1024, 512}};
  std::vector<FwdProblem> problems;
  for (const Shape& s : shapes)
    for (int64_t n : {17, 32, 64})
      for (DType t : {DType::kF32, DType::kF16, DType::kBF16})
        problems.push_back(flagged(s.b, s.d, s.l, n, t, true));
  const std::set<std::string> algos = check_defaults_compile(problems);
  CHECK(algos == std::set<std::string>{"pipelined"});
}

}  // namespace
}  // namespace ssmtune
