// States saved by a training forward for its backward, on the GPU: each
// forward algorithm that can save them (sequential, pipelined, split,
// multipass, look-back) writes every checkpoint the backward's own pass
// would compute (the same values, in the same layout, nothing left
// unwritten), and the backward that reads them matches fp64 and is
// deterministic; the sequential and multipass backwards (the latter also
// checkpoints the states its segments start from, so its buffer is whole);
// odd lengths, h0, groups, constant B/C, dstate 64; what is refused (a
// forward that cannot save, a wrong interval) and what saves nothing (a
// single chunk).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "jit/device.h"
#include "jit/device_buffer.h"
#include "jit/stream.h"
#include "runtime/call_args.h"
#include "runtime/prepared_bwd_call.h"
#include "runtime/prepared_call.h"
#include "ssm/bwd/bwd_params.cuh"
#include "ssmtune/runtime.h"
#include "support/bwd_grads.h"
#include "support/gpu_helpers.h"
#include "support/launch_pointers.h"
#include "tuner/bwd/config.h"
#include "tuner/bwd/device_problem.h"
#include "tuner/bwd/host_grads.h"
#include "tuner/bwd/reference_cpu.h"
#include "tuner/fwd/algorithms.h"
#include "tuner/fwd/device_problem.h"
#include "tuner/fwd/heuristics.h"
#include "tuner/fwd/reference_cpu.h"

namespace ssmtune {
namespace {

using bwd::BwdProblem;
using bwd::DeviceGradBytes;
using testing::bwd_pointers;
using testing::check_bwd_bitwise_equal;
using testing::check_bwd_grads;
using testing::fwd_pointers;
using testing::require_ok;
using testing::test_seed;

// A runtime whose every call runs these configs ("fwd,bwd" keys).
std::unique_ptr<Runtime> forced_runtime(const std::string& keys) {
  ::setenv("SSMTUNE_FORCE_CONFIG", keys.c_str(), 1);
  RuntimeOptions o;
  o.use_db = false;
  auto created = Runtime::create(o);
  ::unsetenv("SSMTUNE_FORCE_CONFIG");
  return require_ok(std::move(created));
}

struct Grid {
  const char* key;
  bool multipass;  // also the multipass backward (3 segments)
};

const Grid kGrid[] = {
    {"bwd:b2.d64.l1000.n16.g1.fp32.vB.vC.D.z.bias.sp.last.h0.dlast", true},
    {"bwd:b2.d48.l129.n16.g2.bf16.vB.vC.D.z.bias.sp", false},
    {"bwd:b2.d16.l1000.n4.g1.fp32.D.bias.sp", false},
    {"bwd:b1.d40.l300.n64.g1.bf16.vB.vC.D.z", false},
    {"bwd:b2.d24.l2048.n16.g1.fp16.vB.vC.z", true},
    {"bwd:b2.d4.l4100.n8.g1.bf16.vB.vC.D.z.bias.sp", false},  // 16 warps, chunks of 2048
};

const ScanAlgo kSavers[] = {ScanAlgo::kSequential, ScanAlgo::kPipelined, ScanAlgo::kSplit,
                            ScanAlgo::kMultiPass,  ScanAlgo::kLookback,  ScanAlgo::kWarpScan};

// Each saving algorithm's default, and the warp scan with 4 warps a channel
// (chunks of 512).
std::vector<FwdConfig> saving_configs(const FwdProblem& p, size_t max_shared) {
  std::vector<FwdConfig> out;
  for (ScanAlgo algo : kSavers) out.push_back(default_config(p, algo, AccType::kF32, max_shared));
  FwdConfig wide = default_config(p, ScanAlgo::kWarpScan, AccType::kF32, max_shared);
  wide.d_step = 1;
  wide.items = 4;
  wide.threads = 128;
  wide.chunk = 512;
  out.push_back(wide);
  return out;
}

TEST_CASE("forwards save the backward's checkpoints; the backward reading them matches fp64",
          "[gpu][runtime][states]") {
  const auto dev = require_ok(jit::query_device(0));
  auto stream = require_ok(jit::Stream::create());
  uint64_t seed = test_seed("saved states gpu test");
  int checked = 0;
  for (const Grid& g : kGrid) {
    const BwdProblem p = require_ok(BwdProblem::from_key(g.key));
    seed += 7;
    INFO("problem " << g.key << " seed " << seed);
    const FwdHostInputs in = make_inputs(p.fwd, seed);
    const std::vector<double> dout = bwd::make_dout(p.fwd, seed + 1);
    const std::vector<double> dlast =
        p.has_dlast ? bwd::make_dlast(p.fwd, seed + 2) : std::vector<double>{};
    const FwdHostOutputs y = reference_fwd(in);
    const bwd::BwdHostGrads ref = bwd::reference_backward_cpu(in, dout, dlast);
    auto bp = require_ok(bwd::BwdDeviceProblem::upload(in, p.has_dlast, y.out, dout, dlast));
    auto fp = require_ok(FwdDeviceProblem::upload(in));
    const ssmtune_bwd_args bargs = to_c_args(bp.tensors(), p.fwd.delta_softplus);
    const ssmtune_fwd_args fargs = to_c_args(fp.tensors(), p.fwd.delta_softplus);
    const auto bptrs = bwd_pointers(bp.tensors());
    const auto fptrs = fwd_pointers(fp.tensors());

    std::vector<bwd::BwdConfig> bwds;
    bwd::BwdConfig base =
        bwd::default_config(p, bwd::BwdAcc::kF32, dev.max_shared_per_block).config;
    if (base.algo == bwd::BwdAlgo::kWarpScan)  // (a short sequence) the space's first chunked one
      for (const bwd::BwdConfig& c : bwd::search_space(p, dev.max_shared_per_block))
        if (c.algo == bwd::BwdAlgo::kSequential) {
          base = c;
          break;
        }
    base.algo = bwd::BwdAlgo::kSequential;
    base.segments = 1;
    bwds.push_back(base);
    if (g.multipass) {
      base.algo = bwd::BwdAlgo::kMultiPass;
      base.segments = 3;
      bwds.push_back(base);
    }
    bwd::BwdConfig ws;  // the warp scan, chunks of 128
    ws.algo = bwd::BwdAlgo::kWarpScan;
    ws.chunk = 128;
    ws.d_step = 4;
    ws.n_split = 1;
    ws.threads = 128;
    if (bwd::check_config(p, ws, dev.max_shared_per_block).is_ok()) bwds.push_back(ws);
    ws.chunk = 512;  // 4 warps a channel, chunks of 512 (two or more: checkpoints to read)
    ws.d_step = 1;
    if (p.fwd.seqlen > ws.chunk && bwd::check_config(p, ws, dev.max_shared_per_block).is_ok())
      bwds.push_back(ws);
    ws.chunk = 2048;  // 16 warps a channel, chunks of 2048 (the intervals past 1024)
    ws.threads = 512;
    if (p.fwd.seqlen > ws.chunk && bwd::check_config(p, ws, dev.max_shared_per_block).is_ok())
      bwds.push_back(ws);
    for (const bwd::BwdConfig& bc : bwds) {
      REQUIRE_STATUS_OK(bwd::check_config(p, bc, dev.max_shared_per_block));
      for (const FwdConfig& fc : saving_configs(p.fwd, dev.max_shared_per_block)) {
        if (!check_config(p.fwd, fc, dev.max_shared_per_block).is_ok()) {
          std::printf("%-58s %-40s (not legal here)\n", g.key, fc.key().c_str());
          continue;
        }
        INFO("forward " << fc.key() << ", backward " << bc.key());
        auto rt = forced_runtime(fc.key() + "," + bc.key());
        const PreparedCall* fcall = require_ok(rt->prepare_fwd(fargs));
        const PreparedBwdCall* bcall = require_ok(rt->prepare_bwd(bargs));
        REQUIRE(fcall->choice().config.key() == fc.key());
        REQUIRE(bcall->choice().config == bc);
        const int interval = bcall->states_interval();
        REQUIRE(interval == bc.chunk);
        if (interval % find_fwd_algorithm(fc.algo)->checkpoint_step(fc) != 0) {
          // (The warp scan saves the states entering its lanes only.)
          CHECK(fcall->states_bytes(interval) == 0);
          continue;
        }
        const long long n_chunks = (p.fwd.seqlen + interval - 1) / interval;
        const size_t bytes = require_ok(rt->prepare_states(*fcall, interval));
        CHECK(bytes == fcall->states_bytes(interval));
        REQUIRE(bytes ==
                static_cast<size_t>(p.fwd.batch * (n_chunks - 1) * p.fwd.dstate * p.fwd.dim * 4));
        const size_t count = bytes / 4;

        // The forward saving them, into a poisoned buffer.
        auto states = require_ok(jit::DeviceBuffer::allocate(bytes));
        REQUIRE_STATUS_OK(states.fill_bytes(0xFF, stream.get()));
        REQUIRE_STATUS_OK(fp.poison_outputs(stream.get()));
        REQUIRE_STATUS_OK(rt->launch_fwd(*fcall, fptrs.data(), nullptr, stream.get(),
                                         reinterpret_cast<void*>(states.get()), interval));
        REQUIRE_STATUS_OK(stream.synchronize());
        std::vector<float> saved(count);
        REQUIRE_STATUS_OK(states.download(saved));
        // The saving variant's outputs are the plain kernel's, bit for bit.
        const std::vector<unsigned char> saving_out = require_ok(fp.download_out());
        REQUIRE_STATUS_OK(fp.poison_outputs(stream.get()));
        REQUIRE_STATUS_OK(rt->launch_fwd(*fcall, fptrs.data(), nullptr, stream.get()));
        REQUIRE_STATUS_OK(stream.synchronize());
        CHECK(require_ok(fp.download_out()) == saving_out);

        // The backward computing them itself, into the caller's scratch.
        auto scratch = require_ok(jit::DeviceBuffer::allocate(bcall->scratch_bytes()));
        void* mine = reinterpret_cast<void*>(scratch.get());
        REQUIRE_STATUS_OK(bp.poison_outputs(stream.get()));
        REQUIRE_STATUS_OK(rt->launch_bwd(*bcall, bptrs.data(), mine, stream.get()));
        REQUIRE_STATUS_OK(stream.synchronize());
        const DeviceGradBytes recomputed = require_ok(bp.download());
        std::vector<float> own(count);
        REQUIRE_STATUS_OK(scratch.download(
            own.data(), bytes, static_cast<size_t>(bcall->kernel().plan().scratch.ckpt)));
        double worst = 0, scale = 0;
        size_t unwritten = 0;
        for (size_t i = 0; i < count; ++i) {
          if (!std::isfinite(saved[i])) {
            ++unwritten;
            continue;
          }
          worst = std::max(worst, std::abs(static_cast<double>(saved[i]) - own[i]));
          scale = std::max(scale, std::abs(static_cast<double>(own[i])));
        }
        CHECK(unwritten == 0);
        CHECK(scale > 0);
        CHECK(worst <= 2e-5 * scale);

        // The backward reading them, on a scratch without the checkpoint
        // region (they come last): fp64's budgets, and the same bits twice.
        REQUIRE(bcall->states_scratch_bytes() > 0);
        CHECK(bcall->states_scratch_bytes() + bytes <= bcall->scratch_bytes());
        auto small = require_ok(jit::DeviceBuffer::allocate(bcall->states_scratch_bytes()));
        auto run_saved = [&] {
          REQUIRE_STATUS_OK(bp.poison_outputs(stream.get()));
          REQUIRE_STATUS_OK(rt->launch_bwd(*bcall, bptrs.data(),
                                           reinterpret_cast<void*>(small.get()), stream.get(),
                                           reinterpret_cast<void*>(states.get()), interval));
          REQUIRE_STATUS_OK(stream.synchronize());
          return require_ok(bp.download());
        };
        const DeviceGradBytes first = run_saved();
        const std::string line = check_bwd_grads(p.fwd, ref, first, false);
        check_bwd_bitwise_equal(first, run_saved(), "two backwards from saved states");
        check_bwd_grads(p.fwd, ref, recomputed, false);
        std::printf("%-58s %-40s %-30s max |saved - own| %.1e of %.1e;%s\n", g.key,
                    fc.key().c_str(), bc.key().c_str(), worst, scale, line.c_str());
        ++checked;

        // A wrong interval is refused, and nothing is launched.
        CHECK(rt->launch_bwd(*bcall, bptrs.data(), mine, stream.get(),
                             reinterpret_cast<void*>(states.get()), interval * 2)
                  .code() == Code::kInvalidArgument);
        CHECK(rt->launch_fwd(*fcall, fptrs.data(), nullptr, stream.get(),
                             reinterpret_cast<void*>(states.get()), 12)
                  .code() == Code::kInvalidArgument);
      }
    }
  }
  CHECK(checked >= 20);
}

TEST_CASE("what saves no states: a time-parallel forward, a single chunk",
          "[gpu][runtime][states]") {
  const auto dev = require_ok(jit::query_device(0));
  auto stream = require_ok(jit::Stream::create());
  const uint64_t seed = test_seed("saved states refusals");

  // The Blelloch scan never holds a chunk's end state in one thread.
  const BwdProblem p = require_ok(BwdProblem::from_key("bwd:b2.d32.l256.n16.g1.bf16.vB.vC.D.z"));
  const FwdHostInputs in = make_inputs(p.fwd, seed);
  auto fp = require_ok(FwdDeviceProblem::upload(in));
  const FwdConfig warp =
      default_config(p.fwd, ScanAlgo::kBlelloch, AccType::kF32, dev.max_shared_per_block);
  REQUIRE_STATUS_OK(check_config(p.fwd, warp, dev.max_shared_per_block));
  auto rt = forced_runtime(warp.key());
  const PreparedCall* call =
      require_ok(rt->prepare_fwd(to_c_args(fp.tensors(), p.fwd.delta_softplus)));
  CHECK(call->states_bytes(16) == 0);
  CHECK(require_ok(rt->prepare_states(*call, 16)) == 0);
  auto states = require_ok(jit::DeviceBuffer::allocate(1 << 20));
  const auto ptrs = fwd_pointers(fp.tensors());
  const Status refused = rt->launch_fwd(*call, ptrs.data(), nullptr, stream.get(),
                                        reinterpret_cast<void*>(states.get()), 16);
  CHECK(refused.code() == Code::kInvalidArgument);
  CHECK(refused.message().find("saves none") != std::string::npos);

  // A sequence of one backward chunk has no state to save.
  const BwdProblem shortp = require_ok(BwdProblem::from_key("bwd:b2.d40.l7.n8.g2.fp32.vB.D.z"));
  const FwdHostInputs sin = make_inputs(shortp.fwd, seed + 1);
  const std::vector<double> dout = bwd::make_dout(shortp.fwd, seed + 2);
  const FwdHostOutputs y = reference_fwd(sin);
  auto bp = require_ok(bwd::BwdDeviceProblem::upload(sin, false, y.out, dout, {}));
  RuntimeOptions o;
  o.use_db = false;
  auto plain = require_ok(Runtime::create(o));
  const PreparedBwdCall* bcall =
      require_ok(plain->prepare_bwd(to_c_args(bp.tensors(), shortp.fwd.delta_softplus)));
  CHECK(bcall->states_interval() == 0);
}

}  // namespace
}  // namespace ssmtune
