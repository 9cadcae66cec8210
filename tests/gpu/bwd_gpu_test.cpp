// Every backward algorithm (sequential, multipass, warp scan, its states over
// several blocks) and accumulation dtype against the fp64 CPU backward
// reference, gradient by gradient (relative L2, printed), over odd seqlens,
// dstate 1 to 256, groups, constant B/C, every flag, the three input dtypes,
// an initial state and dlast; outputs poisoned before each run; two runs
// must be bitwise equal; u with a batch stride past 2^31.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "jit/compiler.h"
#include "jit/stream.h"
#include "support/bwd_grads.h"
#include "support/gpu_helpers.h"
#include "support/problems.h"
#include "tuner/accuracy.h"
#include "tuner/bwd/accuracy.h"
#include "tuner/bwd/device_problem.h"
#include "tuner/bwd/host_grads.h"
#include "tuner/bwd/reference_cpu.h"
#include "tuner/bwd/reference_gpu.h"
#include "tuner/bwd/runner.h"
#include "tuner/fwd/reference_cpu.h"

namespace ssmtune::bwd {
namespace {

using testing::check_bwd_bitwise_equal;
using testing::check_bwd_grads;
using testing::require_ok;

struct Case {
  const char* name;
  BwdProblem p;
  int64_t u_batch_stride = 0;  // 0: contiguous
};

BwdProblem make(int64_t b, int64_t d, int64_t l, int64_t n, int64_t g, DType t) {
  BwdProblem p;
  p.fwd = testing::shape(b, d, l, n, t, g);
  return p;
}

void all_flags(BwdProblem& p) {
  p.fwd.has_d = p.fwd.has_z = p.fwd.has_delta_bias = p.fwd.delta_softplus = true;
  p.fwd.return_last_state = p.fwd.has_initial_state = p.has_dlast = true;
}

BwdProblem all_flags_copy(BwdProblem p) {
  all_flags(p);
  return p;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  {  // seqlen 1, every flag, dim not a multiple of any d_step
    BwdProblem p = make(2, 37, 1, 4, 1, DType::kF32);
    all_flags(p);
    out.push_back({"l1-allflags", p});
  }
  {  // seqlen 7 (scalar rows), dstate 1, two groups, constant B, D and z
    BwdProblem p = make(2, 40, 7, 1, 2, DType::kF32);
    p.fwd.variable_b = false;
    p.fwd.has_d = p.fwd.has_z = true;
    out.push_back({"l7-n1-constB", p});
  }
  {  // seqlen 129, bf16, two groups, bias + softplus, h0 and dlast
    BwdProblem p = make(3, 24, 129, 16, 2, DType::kBF16);
    p.fwd.has_delta_bias = p.fwd.delta_softplus = true;
    p.fwd.return_last_state = p.fwd.has_initial_state = p.has_dlast = true;
    out.push_back({"l129-bf16-g2", p});
  }
  {  // seqlen 1000, fp16, dstate 64, constant C, z and D
    BwdProblem p = make(2, 33, 1000, 64, 1, DType::kF16);
    p.fwd.variable_c = false;
    p.fwd.has_z = p.fwd.has_d = true;
    out.push_back({"l1000-fp16-n64-constC", p});
  }
  {  // seqlen 1000, fp32, every flag
    BwdProblem p = make(2, 20, 1000, 16, 1, DType::kF32);
    all_flags(p);
    out.push_back({"l1000-fp32-allflags", p});
  }
  {  // seqlen 1000, bf16, every flag, two groups
    BwdProblem p = make(2, 32, 1000, 16, 2, DType::kBF16);
    all_flags(p);
    out.push_back({"l1000-bf16-allflags-g2", p});
  }
  {  // dstate 256, seqlen 129, h0 and dlast
    BwdProblem p = make(1, 9, 129, 256, 1, DType::kF32);
    p.fwd.return_last_state = p.fwd.has_initial_state = p.has_dlast = true;
    out.push_back({"l129-n256", p});
  }
  {  // constant B and C, dstate 4, seqlen 1000
    BwdProblem p = make(3, 16, 1000, 4, 1, DType::kF32);
    p.fwd.variable_b = p.fwd.variable_c = false;
    p.fwd.has_d = true;
    out.push_back({"l1000-n4-constBC", p});
  }
  {  // dstate 5 (not a multiple of the split), fp16, seqlen 7, every flag
    BwdProblem p = make(2, 12, 7, 5, 1, DType::kF16);
    all_flags(p);
    out.push_back({"l7-n5-fp16-allflags", p});
  }
  {  // seqlen 4097 at few channels, bf16, every flag: the long warp-scan chunks (and
     // their state groups) over three chunks, the last one step long
    BwdProblem p = make(2, 3, 4097, 8, 1, DType::kBF16);
    all_flags(p);
    out.push_back({"l4097-bf16-n8-allflags", p});
  }
  {  // u's batch stride past 2^31 elements (64-bit offsets)
    BwdProblem p = make(2, 4, 64, 4, 1, DType::kBF16);
    p.fwd.has_d = true;
    out.push_back({"u-stride-2^31", p, (int64_t{1} << 31) + 256});
  }
  return out;
}

std::vector<BwdConfig> configs_for(const BwdProblem& p, size_t max_shared) {
  std::vector<BwdConfig> out;
  out.push_back(default_config(p, BwdAcc::kF32, max_shared).config);
  out.push_back(default_config(p, BwdAcc::kF64, max_shared).config);
  BwdConfig acc = out[0];
  acc.exp = BwdExp::kAccurate;
  out.push_back(acc);
  // Another chunk and a one-warp block.
  const auto space = search_space(p, max_shared);
  for (const BwdConfig& c : space)
    if (c.chunk == 32 && c.threads == 32) {
      out.push_back(c);
      break;
    }
  // Multipass over 3 segments, fp32 and fp64 (needs 2 chunks or more).
  for (BwdAcc a : {BwdAcc::kF32, BwdAcc::kF64}) {
    BwdConfig mp = default_config(p, a, max_shared).config;
    mp.algo = BwdAlgo::kMultiPass;
    mp.segments = 3;
    if (check_config(p, mp, max_shared).is_ok()) out.push_back(mp);
  }
  // The warp scan: one warp a channel, fp32 at chunk 128 and fp64 at 256;
  // several warps a channel: 2 on each of 2 channels (chunk 256), 8 on one
  // (chunk 1024), 16 on one (chunk 2048) and fp64 with 4 warps of 8 items
  // (chunk 1024), where the B/C rows fit; a channel's states over 2 to 8
  // blocks (state groups), where dstate has as many states.
  struct Ws {
    BwdAcc acc;
    int chunk, d_step, warps, groups;
  };
  for (const Ws& w : {Ws{BwdAcc::kF32, 128, 4, 1, 1}, Ws{BwdAcc::kF64, 256, 2, 1, 1},
                      Ws{BwdAcc::kF32, 256, 2, 2, 1}, Ws{BwdAcc::kF32, 1024, 1, 8, 1},
                      Ws{BwdAcc::kF32, 2048, 1, 16, 1}, Ws{BwdAcc::kF64, 1024, 1, 4, 1},
                      Ws{BwdAcc::kF32, 1024, 1, 8, 4}, Ws{BwdAcc::kF32, 2048, 1, 16, 2},
                      Ws{BwdAcc::kF32, 128, 4, 1, 8}, Ws{BwdAcc::kF64, 256, 2, 1, 2}}) {
    BwdConfig ws;
    ws.algo = BwdAlgo::kWarpScan;
    ws.chunk = w.chunk;
    ws.d_step = w.d_step;
    ws.n_split = w.groups;
    ws.threads = 32 * w.d_step * w.warps;
    ws.acc = w.acc;
    ws.exp = w.acc == BwdAcc::kF32 ? BwdExp::kFast : BwdExp::kAccurate;
    if (check_config(p, ws, max_shared).is_ok()) out.push_back(ws);
  }
  return out;
}

DeviceGradBytes run_once(const BwdKernel& k, const BwdDeviceProblem& dp, BwdScratch& scratch,
                         const jit::Stream& stream) {
  REQUIRE_STATUS_OK(dp.poison_outputs(stream.get()));
  REQUIRE_STATUS_OK(k.launch(make_params(dp.problem(), dp.tensors()), stream.get(), scratch));
  REQUIRE_STATUS_OK(stream.synchronize());
  return require_ok(dp.download());
}

TEST_CASE("the backward matches the fp64 reference and is bitwise reproducible", "[gpu][bwd]") {
  static jit::MemoryCubinCache cache;
  jit::Compiler compiler(jit::TemplateSources::embedded(), &cache);
  const auto dev = require_ok(jit::query_device(0));
  static const uint64_t kSeed = std::random_device{}();
  std::printf("bwd gpu test seed %llu\n", static_cast<unsigned long long>(kSeed));
  auto stream = require_ok(jit::Stream::create());
  BwdScratch scratch;
  int case_index = 0;
  for (const Case& cs : cases()) {
    ++case_index;
    DYNAMIC_SECTION(cs.name) {
      const BwdProblem& p = cs.p;
      const uint64_t case_seed = kSeed + case_index;
      const FwdHostInputs in = make_inputs(p.fwd, case_seed);
      const std::vector<double> dout = make_dout(p.fwd, case_seed);
      const std::vector<double> dlast =
          p.has_dlast ? make_dlast(p.fwd, case_seed) : std::vector<double>{};
      const FwdHostOutputs fwd = reference_fwd(in);
      // The kernels read y rounded to the dtype (dz's budget allows for it).
      const BwdHostGrads ref = reference_backward_cpu(in, dout, dlast);
      auto dp = require_ok(
          BwdDeviceProblem::upload(in, p.has_dlast, fwd.out, dout, dlast, cs.u_batch_stride));
      // Every config's program compiled at once (on the compiler's pool).
      const std::vector<BwdConfig> configs = configs_for(p, dev.max_shared_per_block);
      std::vector<BwdPlan> plans;
      std::vector<jit::ProgramSpec> specs;
      for (const BwdConfig& c : configs) {
        plans.push_back(require_ok(plan_bwd(p, c, dev.max_shared_per_block)));
        specs.push_back(jit::make_programs(plans.back().kernels, 0, dev.arch(), "bwd")[0]);
      }
      auto programs = compiler.compile_all(specs);
      for (size_t ci = 0; ci < configs.size(); ++ci) {
        const BwdConfig& c = configs[ci];
        INFO(cs.name << " " << p.key() << " config " << c.key() << " seed " << case_seed);
        auto program = require_ok(std::move(programs[ci]));
        auto kernel = require_ok(BwdKernel::load(plans[ci], program));
        const DeviceGradBytes first = run_once(kernel, dp, scratch, stream);
        const std::string line = check_bwd_grads(p.fwd, ref, first, c.acc == BwdAcc::kF64);
        std::printf("%-24s %-32s%s\n", cs.name, c.key().c_str(), line.c_str());
        const DeviceGradBytes second = run_once(kernel, dp, scratch, stream);
        check_bwd_bitwise_equal(first, second, "two runs");
      }
    }
  }
}

// Larger shapes (many chunks and tiles; multipass by default at the long
// one) against the fp64 GPU reference, the default config of each.
TEST_CASE("the default backward matches the fp64 GPU reference at larger shapes", "[gpu][bwd]") {
  jit::Compiler compiler(jit::TemplateSources::embedded(), nullptr);
  const auto dev = require_ok(jit::query_device(0));
  auto stream = require_ok(jit::Stream::create());
  const uint64_t seed = std::random_device{}();
  std::printf("bwd gpu test (larger shapes) seed %llu\n", static_cast<unsigned long long>(seed));
  std::vector<BwdProblem> problems;
  problems.push_back(all_flags_copy(make(2, 512, 2048, 16, 1, DType::kBF16)));
  problems.push_back(make(8, 256, 1024, 4, 1, DType::kF32));
  {
    BwdProblem p = all_flags_copy(make(1, 64, 16384, 16, 1, DType::kF32));
    problems.push_back(p);
  }
  BwdScratch scratch;
  for (const BwdProblem& p : problems) {
    const BwdConfig c = default_config(p, BwdAcc::kF32, dev.max_shared_per_block).config;
    INFO(p.key() << " " << c.key() << " seed " << seed);
    const FwdHostInputs in = make_inputs(p.fwd, seed);
    const auto dout = make_dout(p.fwd, seed);
    const auto dlast = p.has_dlast ? make_dlast(p.fwd, seed) : std::vector<double>{};
    const BwdHostGrads ref =
        require_ok(reference_backward_gpu(in, dout, dlast, dev, compiler, stream.get()));
    const FwdHostOutputs fwd = reference_fwd(in);
    auto dp = require_ok(BwdDeviceProblem::upload(in, p.has_dlast, fwd.out, dout, dlast));
    auto kernel =
        require_ok(build_bwd_kernel(compiler, p, c, dev.arch(), dev.max_shared_per_block));
    const DeviceGradBytes first = run_once(kernel, dp, scratch, stream);
    const std::string line = check_bwd_grads(p.fwd, ref, first, false);
    std::printf("%-48s %-32s%s\n", p.key().c_str(), c.key().c_str(), line.c_str());
    const DeviceGradBytes second = run_once(kernel, dp, scratch, stream);
    check_bwd_bitwise_equal(first, second, "two runs");
  }
}

}  // namespace
}  // namespace ssmtune::bwd
