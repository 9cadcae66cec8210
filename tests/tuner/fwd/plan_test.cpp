#include "tuner/fwd/plan.h"

#include <catch2/catch.hpp>
#include <cstdlib>

#include "jit/compiler.h"
#include "ssm/fwd_params.cuh"
#include "tuner/fwd/heuristics.h"

namespace ssmtune {
namespace {

FwdProblem sized(int64_t batch, int64_t dim, int64_t seqlen, int64_t dstate,
                 DType t = DType::kF32) {
  FwdProblem p;
  p.batch = batch;
  p.dim = dim;
  p.seqlen = seqlen;
  p.dstate = dstate;
  p.dtype = t;
  return p;
}

FwdProblem mid_problem(DType t = DType::kF32) { return sized(8, 1536, 2048, 16, t); }

TEST_CASE("default configs are legal for every algorithm", "[tuner]") {
  for (int64_t dstate : {1, 4, 16, 64, 256}) {
    FwdProblem p = mid_problem();
    p.dstate = dstate;
    for (ScanAlgo a : kAllScanAlgos)
      for (AccType acc : {AccType::kF32, AccType::kF64}) {
        const FwdConfig c = default_config(p, a, acc, 227 * 1024);
        INFO(p.key() << " " << c.key());
        CHECK(check_config(p, c, 227 * 1024).is_ok());
      }
  }
}

TEST_CASE("illegal configs are rejected before compiling, naming the rule", "[tuner]") {
  const FwdProblem p = mid_problem();
  struct Bad {
    FwdConfig c;
    const char* why;
  };
  std::vector<Bad> bad;
  auto base = [&](ScanAlgo a) { return default_config(p, a); };
  {
    auto c = base(ScanAlgo::kSequential);
    c.threads = 96;  // != d_step * n_split
    bad.push_back({c, "threads must equal d_step * n_split"});
  }
  {
    auto c = base(ScanAlgo::kSequential);
    c.n_split = 3;
    bad.push_back({c, "power of 2"});
  }
  {
    auto c = base(ScanAlgo::kWarpScan);
    c.chunk = 100;
    bad.push_back({c, "chunk must be 32 * warps per channel * items"});
  }
  {
    auto c = base(ScanAlgo::kWarpScan);
    c.d_step = 1;
    c.threads = 96;  // 3 warps a channel
    bad.push_back({c, "warps per channel must be a power of 2"});
  }
  {
    auto c = base(ScanAlgo::kWarpScan);
    c.threads = 320;  // 1.25 warps a channel
    bad.push_back({c, "threads must be 32 * d_step * warps per channel"});
  }
  {
    auto c = base(ScanAlgo::kBlelloch);
    c.threads = 96;
    c.chunk = 96 * c.items;
    bad.push_back({c, "power of 2"});
  }
  {
    auto c = base(ScanAlgo::kWarpScan);
    c.acc = AccType::kF64;  // with the fast exp
    bad.push_back({c, "fp64 accumulation needs the accurate exp"});
  }
  {
    auto c = base(ScanAlgo::kWarpScan);
    c.exp_mode = ExpMode::kPoly;  // share 0
    bad.push_back({c, "share in [1, 7]"});
  }
  {
    auto c = base(ScanAlgo::kSequential);
    c.chunk = 4096;
    bad.push_back({c, "shared memory"});
  }
  for (const auto& b : bad) {
    INFO(b.c.key());
    auto s = check_config(p, b.c, 227 * 1024);
    REQUIRE_FALSE(s.is_ok());
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(s.message().find(b.why) != std::string::npos);
    CHECK_FALSE(plan_fwd(p, b.c, 227 * 1024).is_ok());
  }
}

TEST_CASE("plans size scratch for the chunk length actually launched", "[tuner]") {
  const FwdProblem p = sized(8, 256, 1024, 4);
  for (int chunk : {32, 128}) {
    FwdConfig c = default_config(p, ScanAlgo::kMultiPass);
    c.chunk = chunk;
    auto plan = plan_fwd(p, c);
    REQUIRE(plan.is_ok());
    CHECK(plan->n_chunks == 1024 / chunk);
    CHECK(plan->launches.size() == 3);
    CHECK(plan->carries_bytes == 2u * 8 * 256 * 4 * (1024 / chunk) * 4);
    c.algo = ScanAlgo::kLookback;
    auto lb = plan_fwd(p, c);
    REQUIRE(lb.is_ok());
    CHECK(lb->launches.size() == 1);
    CHECK(lb->flags_bytes > 0);
  }
}

TEST_CASE("warpscan plans over state groups: the scan, the state sum, y per group", "[tuner]") {
  const FwdProblem p = sized(2, 4, 3000, 8);
  FwdConfig c = default_config(p, ScanAlgo::kWarpScan);
  c.d_step = 1;
  c.items = 4;
  c.threads = 512;
  c.chunk = 2048;
  auto one = plan_fwd(p, c, 227 * 1024);
  REQUIRE(one.is_ok());
  CHECK(one->launches.size() == 1);
  CHECK(one->carries_bytes == 0);
  c.n_split = 4;
  CHECK(c.key() == "warpscan.K2048.D1.fp32.t512.i4.s4.fast");
  auto plan = plan_fwd(p, c, 227 * 1024);
  REQUIRE(plan.is_ok());
  REQUIRE(plan->launches.size() == 2);
  const FwdLaunch& scan = plan->launches[0];
  CHECK(plan->kernels[scan.kernel].name_expression.find("ssm_fwd_warpscan<") != std::string::npos);
  CHECK(scan.grid.x == 4);
  CHECK(scan.grid.y == 2);
  CHECK(scan.grid.z == 4);  // the state groups
  // Each block stages the B/C rows of its 2 states: a quarter of them.
  CHECK(scan.shared_bytes < one->launches[0].shared_bytes / 3);
  const FwdLaunch& sum = plan->launches[1];
  CHECK(plan->kernels[sum.kernel].name_expression.find("ssm_fwd_state_sum<") != std::string::npos);
  CHECK(sum.grid.x == 4);  // dim
  CHECK(sum.grid.y == 2);  // batch
  CHECK(sum.grid.z == 3);  // time slices of 1024 steps
  CHECK(sum.block.x == static_cast<unsigned>(ssmtune_kernels::kFwdStateSumThreads));
  // Each group's y per (b, d, t), fp32.
  CHECK(plan->carries_bytes == size_t{4} * 2 * 4 * 3000 * 4);
  // The state sum's time slices (grid z) stop at 65535.
  CHECK(
      check_config(sized(1, 4, int64_t{1} << 27, 8), c, 227 * 1024).message().find("time slices") !=
      std::string::npos);
  // States over more blocks than dstate has: illegal.
  c.n_split = 16;
  CHECK(check_config(p, c, 227 * 1024).message().find("n_split exceeds dstate") !=
        std::string::npos);
}

TEST_CASE("traits expressions carry every flag", "[tuner]") {
  FwdProblem p = mid_problem(DType::kBF16);
  p.has_z = true;
  p.variable_c = false;
  const auto e = traits_expression(p, default_config(p, ScanAlgo::kWarpScan));
  CHECK(e ==
        "ssmtune_kernels::FwdTraits<__nv_bfloat16, float, 16, 256, 8, 256, 8, 1, "
        "ssmtune_kernels::ExpKind::kFast, 0, true, false, false, true, false, false, false, "
        "false>");
}

// Every algorithm x accumulation dtype x input dtype compiles under NVRTC.
// CI compiles a representative sample (flags on, sm_90 and sm_80);
// SSMTUNE_FULL_COMPILE_TESTS=1 adds every flag combination.
TEST_CASE("every algorithm, accumulation and input dtype compiles for sm_90 and sm_80",
          "[tuner][compile]") {
  jit::Compiler compiler(jit::TemplateSources::embedded(), nullptr);
  const bool full = std::getenv("SSMTUNE_FULL_COMPILE_TESTS") != nullptr;
  std::vector<FwdProblem> problems;
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
    FwdProblem p = mid_problem(t);
    p.groups = 2;
    p.has_d = p.has_z = p.has_delta_bias = p.delta_softplus = true;
    p.return_last_state = p.has_initial_state = true;
    problems.push_back(p);
    if (full) {
      for (int mask = 0; mask < 256; ++mask) {
        FwdProblem q = mid_problem(t);
        q.variable_b = mask & 1;
        q.variable_c = mask & 2;
        q.has_d = mask & 4;
        q.has_z = mask & 8;
        q.has_delta_bias = mask & 16;
        q.delta_softplus = mask & 32;
        q.return_last_state = mask & 64;
        q.has_initial_state = mask & 128;
        problems.push_back(q);
      }
    }
  }
  for (const char* arch : {"sm_90", "sm_80"}) {
    std::vector<jit::Instantiation> inst;
    for (const FwdProblem& p : problems) {
      if (std::string(arch) == "sm_80" && p.dtype != DType::kBF16 && !full) continue;
      for (ScanAlgo a : kAllScanAlgos)
        for (AccType acc : {AccType::kF32, AccType::kF64}) {
          auto plan = plan_fwd(p, default_config(p, a, acc, 227 * 1024));
          REQUIRE(plan.is_ok());
          inst.insert(inst.end(), plan->kernels.begin(), plan->kernels.end());
        }
      inst.push_back(reference_instantiation(p.dtype));
    }
    auto results = compiler.compile_all(jit::make_programs(inst, 16, arch));
    size_t kernels = 0;
    for (auto& r : results) {
      INFO(r.status().to_string());
      REQUIRE(r.is_ok());
      for (const auto& k : r->kernels) {
        INFO(arch << " " << k.name_expression << "\n" << r->log);
        CHECK(k.resources.found);
        CHECK(k.resources.registers > 0);
        ++kernels;
      }
    }
    CHECK(kernels == inst.size());
  }
}

}  // namespace
}  // namespace ssmtune
