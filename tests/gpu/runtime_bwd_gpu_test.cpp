// The runtime's backward on the GPU: the library call and prepared plans
// (caller's and runtime's scratch) against the fp64 CPU reference, gradient
// by gradient, over fp32/bf16 (and one fp16), variable and constant B/C,
// flags, h0 and dlast, seqlens 1, 7, 129, 1000; every path bitwise equal to
// the others and to itself; many threads launching one plan; forced
// sequential and multipass configs; exact and nearest selection from a
// database.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cache/db_fixtures.h"
#include "cache/tuning_db.h"
#include "jit/device.h"
#include "jit/device_buffer.h"
#include "jit/stream.h"
#include "jit/template_sources.h"
#include "runtime/call_args.h"
#include "runtime/prepared_bwd_call.h"
#include "ssmtune/runtime.h"
#include "support/bwd_grads.h"
#include "support/gpu_helpers.h"
#include "support/launch_pointers.h"
#include "tuner/bwd/config.h"
#include "tuner/bwd/device_problem.h"
#include "tuner/bwd/host_grads.h"
#include "tuner/bwd/reference_cpu.h"
#include "tuner/fwd/reference_cpu.h"

namespace ssmtune {
namespace {

using bwd::BwdDeviceProblem;
using bwd::BwdHostGrads;
using bwd::BwdProblem;
using bwd::DeviceGradBytes;
using testing::bwd_pointers;
using testing::check_bwd_bitwise_equal;
using testing::check_bwd_grads;
using testing::require_ok;
using testing::test_seed;

// One problem's inputs on the device, its fp64 gradients and its C arguments.
struct BwdCase {
  BwdProblem p;
  BwdHostGrads ref;
  BwdDeviceProblem dp;
  ssmtune_bwd_args args;
};

BwdCase make_case(const BwdProblem& p, uint64_t seed) {
  const FwdHostInputs in = make_inputs(p.fwd, seed);
  const std::vector<double> dout = bwd::make_dout(p.fwd, seed + 1);
  const std::vector<double> dlast =
      p.has_dlast ? bwd::make_dlast(p.fwd, seed + 2) : std::vector<double>{};
  REQUIRE(dlast.empty() != p.has_dlast);
  // The saved forward output y (before the z gate), rounded to the dtype on upload.
  const FwdHostOutputs fwd = reference_fwd(in);
  BwdHostGrads ref = bwd::reference_backward_cpu(in, dout, dlast);
  auto dp = require_ok(BwdDeviceProblem::upload(in, p.has_dlast, fwd.out, dout, dlast));
  const ssmtune_bwd_args args = to_c_args(dp.tensors(), p.fwd.delta_softplus);
  return {p, std::move(ref), std::move(dp), args};
}

// The layout of a call: the same tensors with no data pointers.
ssmtune_bwd_args layout_of(ssmtune_bwd_args a) {
  for (ssmtune_tensor* t :
       {&a.u,          &a.delta, &a.A,   &a.B,    &a.C,     &a.D,           &a.z,
        &a.delta_bias, &a.h0,    &a.out, &a.dout, &a.dlast, &a.du,          &a.ddelta,
        &a.dA,         &a.dB,    &a.dC,  &a.dD,   &a.dz,    &a.ddelta_bias, &a.dh0})
    t->data = nullptr;
  return a;
}

template <typename Launch>
DeviceGradBytes run(const BwdDeviceProblem& dp, const jit::Stream& stream, Launch&& launch) {
  REQUIRE_STATUS_OK(dp.poison_outputs(stream.get()));
  REQUIRE_STATUS_OK(launch());
  REQUIRE_STATUS_OK(stream.synchronize());
  return require_ok(dp.download());
}

bool accumulates_f64(const PreparedBwdCall& call) {
  return call.choice().config.acc == bwd::BwdAcc::kF64;
}

// The grid: each key is canonical (BwdProblem::key), `.last` exactly with `.dlast`.
const char* const kGrid[] = {
    "bwd:b2.d37.l1.n4.g1.fp32.vB.vC.D.z.bias.sp.last.h0.dlast",
    "bwd:b2.d24.l1.n16.g1.bf16",
    "bwd:b2.d40.l7.n8.g2.fp32.vB.D.z",
    "bwd:b3.d16.l7.n4.g1.bf16.vB.vC.bias.sp.last.h0.dlast",
    "bwd:b2.d48.l129.n16.g2.bf16.vB.vC.D.z.bias.sp.last.h0.dlast",
    "bwd:b1.d33.l129.n16.g1.fp32.vC.h0",
    "bwd:b2.d20.l129.n4.g1.fp16.vB.vC.z.last.dlast",
    "bwd:b2.d32.l1000.n16.g1.fp32.vB.vC.D.z.bias.sp.last.h0.dlast",
    "bwd:b2.d64.l1000.n16.g1.bf16.vB.vC.D.z",
    "bwd:b2.d16.l1000.n4.g1.fp32.D.bias.sp",
    "bwd:b2.d24.l1000.n16.g2.bf16.vC.D.z.bias.sp.last.dlast",
};

TEST_CASE("the runtime backward matches fp64: library call and prepared plans, bitwise equal",
          "[gpu][runtime]") {
  RuntimeOptions o;
  o.use_db = false;
  auto rt = require_ok(Runtime::create(o));
  auto stream = require_ok(jit::Stream::create());
  const uint64_t seed = test_seed("runtime bwd gpu test");
  uint64_t case_seed = seed;
  for (const char* key : kGrid) {
    case_seed += 3;
    const BwdProblem p = require_ok(BwdProblem::from_key(key));
    INFO("problem " << key << " seed " << case_seed);
    BwdCase c = make_case(p, case_seed);

    // The library call: selection (the heuristic default) on first use.
    const std::string before = require_ok(rt->explain_bwd(c.args));
    INFO(before);
    CHECK(before.rfind(std::string(key) + ": ", 0) == 0);
    CHECK(before.find("[default]") != std::string::npos);
    const DeviceGradBytes library =
        run(c.dp, stream, [&] { return rt->selective_scan_bwd(c.args, stream.get()); });
    CHECK(require_ok(rt->explain_bwd(c.args)).find("[default, in use]") != std::string::npos);

    // The prepared plan: one per layout, data pointers play no part.
    const PreparedBwdCall* call = require_ok(rt->prepare_bwd(c.args));
    CHECK(require_ok(rt->prepare_bwd(c.args)) == call);
    CHECK(require_ok(rt->prepare_bwd(layout_of(c.args))) == call);
    INFO(Runtime::explain(*call));
    CHECK(call->problem() == p);
    const std::string line = check_bwd_grads(p.fwd, c.ref, library, accumulates_f64(*call));
    std::printf("%-60s %-28s%s\n", key, call->choice().config.key().c_str(), line.c_str());

    const auto ptrs = bwd_pointers(c.dp.tensors());
    REQUIRE(call->scratch_bytes() > 0);
    auto scratch = require_ok(jit::DeviceBuffer::allocate(call->scratch_bytes()));
    void* mine = reinterpret_cast<void*>(scratch.get());
    const DeviceGradBytes first =
        run(c.dp, stream, [&] { return rt->launch_bwd(*call, ptrs.data(), mine, stream.get()); });
    check_bwd_grads(p.fwd, c.ref, first, accumulates_f64(*call));
    check_bwd_bitwise_equal(library, first, "library call vs prepared plan");
    const DeviceGradBytes second =
        run(c.dp, stream, [&] { return rt->launch_bwd(*call, ptrs.data(), mine, stream.get()); });
    check_bwd_bitwise_equal(first, second, "two launches of one plan");
    const DeviceGradBytes runtimes = run(
        c.dp, stream, [&] { return rt->launch_bwd(*call, ptrs.data(), nullptr, stream.get()); });
    check_bwd_bitwise_equal(first, runtimes, "caller's scratch vs the runtime's");
  }
}

TEST_CASE("prepared backward launches check their pointers and scratch", "[gpu][runtime]") {
  RuntimeOptions o;
  o.use_db = false;
  auto rt = require_ok(Runtime::create(o));
  auto other = require_ok(Runtime::create(o));
  const BwdProblem p =
      require_ok(BwdProblem::from_key("bwd:b2.d32.l129.n16.g1.bf16.vB.vC.D.z.bias.sp"));
  BwdCase c = make_case(p, test_seed("runtime bwd pointer checks"));
  auto stream = require_ok(jit::Stream::create());
  const PreparedBwdCall* call = require_ok(rt->prepare_bwd(c.args));
  auto scratch = require_ok(jit::DeviceBuffer::allocate(call->scratch_bytes() + 256));
  const auto ptrs = bwd_pointers(c.dp.tensors());
  void* misaligned = reinterpret_cast<void*>(scratch.get() + 16);
  Status s = rt->launch_bwd(*call, ptrs.data(), misaligned, stream.get());
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message().find("scratch") != std::string::npos);
  s = other->launch_bwd(*call, ptrs.data(), nullptr, stream.get());
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message().find("another runtime") != std::string::npos);
  auto bad = ptrs;
  bad[SSMTUNE_BWD_DZ] = bad[SSMTUNE_BWD_DU];
  s = rt->launch_bwd(*call, bad.data(), nullptr, stream.get());
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message().find("dz: overlaps output du") != std::string::npos);
  bad = ptrs;
  bad[SSMTUNE_BWD_H0] = bad[SSMTUNE_BWD_U];
  s = rt->launch_bwd(*call, bad.data(), nullptr, stream.get());
  CHECK(s.message().find("h0: given, but the plan was prepared without it") != std::string::npos);
  // The library call reports the same argument errors before any launch.
  ssmtune_bwd_args args = c.args;
  args.dD = ssmtune_tensor{};
  s = rt->selective_scan_bwd(args, stream.get());
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message().rfind("dD:", 0) == 0);
  REQUIRE_STATUS_OK(stream.synchronize());
}

TEST_CASE("many threads launch one backward plan on their own streams and scratch",
          "[gpu][runtime]") {
  RuntimeOptions o;
  o.use_db = false;
  auto rt = require_ok(Runtime::create(o));
  const BwdProblem p = require_ok(
      BwdProblem::from_key("bwd:b2.d64.l512.n16.g1.bf16.vB.vC.D.z.bias.sp.last.h0.dlast"));
  const uint64_t seed = test_seed("runtime bwd threads");
  const FwdHostInputs in = make_inputs(p.fwd, seed);
  const auto dout = bwd::make_dout(p.fwd, seed + 1);
  const auto dlast = bwd::make_dlast(p.fwd, seed + 2);
  const FwdHostOutputs fwd = reference_fwd(in);
  auto stream = require_ok(jit::Stream::create());
  auto dp = require_ok(BwdDeviceProblem::upload(in, true, fwd.out, dout, dlast));
  const PreparedBwdCall* call =
      require_ok(rt->prepare_bwd(to_c_args(dp.tensors(), p.fwd.delta_softplus)));
  const auto base_ptrs = bwd_pointers(dp.tensors());
  const DeviceGradBytes want = run(
      dp, stream, [&] { return rt->launch_bwd(*call, base_ptrs.data(), nullptr, stream.get()); });
  check_bwd_grads(p.fwd, bwd::reference_backward_cpu(in, dout, dlast), want,
                  accumulates_f64(*call));

  constexpr int kThreads = 6, kCalls = 8;
  std::vector<int> failures(kThreads, 0);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // The test's own allocations need the context current on this thread.
      auto ctx = jit::Context::create(0);
      if (!ctx) {
        failures[t] = kCalls;
        errors[t] = ctx.status().to_string();
        return;
      }
      auto mine = BwdDeviceProblem::upload(in, true, fwd.out, dout, dlast);
      auto s = jit::Stream::create();
      auto scratch = jit::DeviceBuffer::allocate(call->scratch_bytes());
      if (!mine || !s || !scratch) {
        failures[t] = kCalls;
        errors[t] = "setup failed";
        return;
      }
      const auto ptrs = bwd_pointers(mine->tensors());
      void* buf = reinterpret_cast<void*>(scratch->get());
      for (int k = 0; k < kCalls; ++k) {
        Status st = mine->poison_outputs(s->get());
        if (st) st = rt->launch_bwd(*call, ptrs.data(), buf, s->get());
        if (st) st = s->synchronize();
        auto got = mine->download();
        if (!st || !got) {
          ++failures[t];
          errors[t] = !st ? st.to_string() : got.status().to_string();
          continue;
        }
        for (const auto& g : testing::kBwdGrads)
          if ((*got).*g.got != want.*g.got) {
            ++failures[t];
            errors[t] = std::string(g.name) + " differs from the single-thread launch";
            break;
          }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    INFO("thread " << t << ": " << errors[t]);
    CHECK(failures[t] == 0);
  }
}

TEST_CASE("forced backward configs (sequential, multipass) run on the caller's scratch",
          "[gpu][runtime]") {
  const BwdProblem p = require_ok(
      BwdProblem::from_key("bwd:b2.d64.l1000.n16.g1.fp32.vB.vC.D.z.bias.sp.last.h0.dlast"));
  const auto dev = require_ok(jit::query_device(0));
  const bwd::BwdConfig base =
      bwd::default_config(p, bwd::BwdAcc::kF32, dev.max_shared_per_block).config;
  bwd::BwdConfig seq = base, mp = base;
  seq.algo = bwd::BwdAlgo::kSequential;
  seq.segments = 1;
  mp.algo = bwd::BwdAlgo::kMultiPass;
  mp.segments = 3;
  BwdCase c = make_case(p, test_seed("runtime bwd forced configs"));
  auto stream = require_ok(jit::Stream::create());
  for (const bwd::BwdConfig& config : {seq, mp}) {
    REQUIRE_STATUS_OK(bwd::check_config(p, config, dev.max_shared_per_block));
    // A forward key beside it: each family takes its own.
    const std::string forced = "sequential.K128.D32.fp32.t64.i1.s2.fast," + config.key();
    INFO("forced " << forced);
    ::setenv("SSMTUNE_FORCE_CONFIG", forced.c_str(), 1);
    RuntimeOptions o;
    o.use_db = false;
    auto created = Runtime::create(o);
    ::unsetenv("SSMTUNE_FORCE_CONFIG");
    auto rt = require_ok(std::move(created));
    const PreparedBwdCall* call = require_ok(rt->prepare_bwd(c.args));
    INFO(Runtime::explain(*call));
    CHECK(call->choice().config == config);
    CHECK(Runtime::explain(*call).find("forced by $SSMTUNE_FORCE_CONFIG") != std::string::npos);
    auto scratch = require_ok(jit::DeviceBuffer::allocate(call->scratch_bytes()));
    const auto ptrs = bwd_pointers(c.dp.tensors());
    void* mine = reinterpret_cast<void*>(scratch.get());
    const DeviceGradBytes with_mine =
        run(c.dp, stream, [&] { return rt->launch_bwd(*call, ptrs.data(), mine, stream.get()); });
    const std::string line = check_bwd_grads(p.fwd, c.ref, with_mine, false);
    std::printf("%-60s %-28s%s\n", p.key().c_str(), config.key().c_str(), line.c_str());
    const DeviceGradBytes with_runtimes = run(
        c.dp, stream, [&] { return rt->launch_bwd(*call, ptrs.data(), nullptr, stream.get()); });
    check_bwd_bitwise_equal(with_mine, with_runtimes, "caller's scratch vs the runtime's");
    const DeviceGradBytes library =
        run(c.dp, stream, [&] { return rt->selective_scan_bwd(c.args, stream.get()); });
    check_bwd_bitwise_equal(with_mine, library, "prepared plan vs library call");
  }
}

// A best entry for `problem` on this GPU, current for these versions.
void seed_best(cache::TuningDb& db, const jit::DeviceInfo& dev, const Versions& v,
               const std::string& problem, const std::string& config) {
  Measurement m;
  m.device_uuid = dev.uuid;
  m.problem_key = problem;
  m.config_key = config;
  m.median_ms = 0.25;
  m.verdict = "inside";
  m.error_budget = 3e-4;
  m.template_hash = v.template_hash;
  m.driver_version = v.driver_version;
  m.nvrtc_version = v.nvrtc_version;
  m.timestamp = 1700000000;
  REQUIRE_STATUS_OK(db.add_measurement(m));
  BestEntry b;
  b.device_uuid = dev.uuid;
  b.problem_key = problem;
  b.config_key = config;
  b.median_ms = m.median_ms;
  b.template_hash = v.template_hash;
  b.driver_version = v.driver_version;
  b.nvrtc_version = v.nvrtc_version;
  b.timestamp = m.timestamp;
  b.rule = "fastest inside budget";
  REQUIRE_STATUS_OK(db.set_best(b));
}

TEST_CASE("the runtime backward selects tuned entries: exact, then nearest", "[gpu][runtime]") {
  testing::TempDir dir;
  REQUIRE_FALSE(dir.path().empty());
  const std::string path = dir.file("tuning.db");
  const auto dev = require_ok(jit::query_device(0));
  const auto sources = require_ok(jit::TemplateSources::load_default());
  const Versions v{dev.driver_version, dev.nvrtc_version, sources.hash()};
  const BwdProblem p =
      require_ok(BwdProblem::from_key("bwd:b2.d48.l1000.n16.g1.bf16.vB.vC.D.z.bias.sp"));
  // A tuned config that is not the default: the other exp mode.
  bwd::BwdConfig tuned = bwd::default_config(p, bwd::BwdAcc::kF32, dev.max_shared_per_block).config;
  tuned.exp = tuned.exp == bwd::BwdExp::kFast ? bwd::BwdExp::kAccurate : bwd::BwdExp::kFast;
  REQUIRE_STATUS_OK(bwd::check_config(p, tuned, dev.max_shared_per_block));
  {
    auto db = require_ok(cache::TuningDb::open(path, cache::OpenMode::kReadWrite));
    REQUIRE_STATUS_OK(db.upsert_device(device_record(dev)));
    seed_best(db, dev, v, p.key(), tuned.key());
  }
  RuntimeOptions o;
  o.db_path = path;
  o.tune_on_first_use_s = 0;
  auto rt = require_ok(Runtime::create(o));
  auto stream = require_ok(jit::Stream::create());
  BwdCase c = make_case(p, test_seed("runtime bwd selection"));
  const std::string before = require_ok(rt->explain_bwd(c.args));
  INFO(before);
  CHECK(before.find("[exact]") != std::string::npos);
  CHECK(before.find(tuned.key()) != std::string::npos);
  const PreparedBwdCall* call = require_ok(rt->prepare_bwd(c.args));
  CHECK(call->choice().rule == SelectRule::kExact);
  CHECK(call->choice().config == tuned);
  const DeviceGradBytes got =
      run(c.dp, stream, [&] { return rt->selective_scan_bwd(c.args, stream.get()); });
  check_bwd_grads(p.fwd, c.ref, got, false);
  CHECK(require_ok(rt->explain_bwd(c.args)).find("[exact, in use]") != std::string::npos);

  // Twice the sequence: nearest to the tuned entry, legal, and right.
  BwdProblem longer = p;
  longer.fwd.seqlen = 2000;
  BwdCase l = make_case(longer, test_seed("runtime bwd nearest"));
  const PreparedBwdCall* near = require_ok(rt->prepare_bwd(l.args));
  INFO(Runtime::explain(*near));
  CHECK(near->choice().rule == SelectRule::kNearest);
  CHECK(near->choice().source_problem == p.key());
  const auto ptrs = bwd_pointers(l.dp.tensors());
  const DeviceGradBytes got_near =
      run(l.dp, stream, [&] { return rt->launch_bwd(*near, ptrs.data(), nullptr, stream.get()); });
  check_bwd_grads(longer.fwd, l.ref, got_near, false);
}

}  // namespace
}  // namespace ssmtune
