// Prepared calls on the GPU: the same outputs as the library call (same
// config, same kernels), the same plan for the same layout, and configs that
// need scratch run with the caller's scratch and with the runtime's.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "jit/device_buffer.h"
#include "jit/stream.h"
#include "runtime/call_args.h"
#include "runtime/prepared_call.h"
#include "ssmtune/runtime.h"
#include "support/gpu_helpers.h"
#include "support/launch_pointers.h"
#include "tuner/accuracy.h"
#include "tuner/fwd/device_problem.h"
#include "tuner/fwd/reference_cpu.h"
#include "tuner/fwd/scoring.h"

namespace ssmtune {
namespace {

using testing::fwd_pointers;
using testing::require_ok;

struct Outputs {  // as FwdDeviceProblem downloads them
  std::vector<unsigned char> out, out_z;
  std::vector<float> last;
};

template <typename Launch>
Outputs run(FwdDeviceProblem& dp, jit::Stream& stream, Launch&& launch) {
  REQUIRE_STATUS_OK(dp.poison_outputs(stream.get()));
  REQUIRE_STATUS_OK(launch());
  REQUIRE_STATUS_OK(stream.synchronize());
  Outputs o;
  o.out = require_ok(dp.download_out());
  o.out_z = require_ok(dp.download_out_z());
  o.last = require_ok(dp.download_last_state());
  return o;
}

void check_equal(const Outputs& a, const Outputs& b) {
  CHECK(a.out == b.out);
  CHECK(a.out_z == b.out_z);
  CHECK(a.last.size() == b.last.size());  // bitwise: NaN-poisoned leftovers would differ
  CHECK(std::memcmp(a.last.data(), b.last.data(), a.last.size() * sizeof(float)) == 0);
}

TEST_CASE("prepared calls match the library call", "[gpu][runtime]") {
  RuntimeOptions o;
  o.use_db = false;
  auto rt = require_ok(Runtime::create(o));
  auto stream = require_ok(jit::Stream::create());
  const char* fixed = std::getenv("SSMTUNE_TEST_SEED");
  const uint64_t seed = fixed ? std::strtoull(fixed, nullptr, 10) : std::random_device{}();
  std::mt19937_64 rng(seed);
  const char* keys[] = {"b2.d48.l300.n16.g2.bf16.vB.vC.D.z.bias.sp.last",
                        "b1.d33.l1024.n4.g1.fp32.vC.last.h0", "b3.d16.l63.n1.g1.fp16.vB.vC.z"};
  for (const char* key : keys) {
    const FwdProblem p = require_ok(FwdProblem::from_key(key));
    INFO("seed " << seed << " problem " << key);
    const FwdHostInputs in = make_inputs(p, rng());
    auto dp = require_ok(FwdDeviceProblem::upload(in));
    const ssmtune_fwd_args args = to_c_args(dp.tensors(), p.delta_softplus);
    const PreparedCall* call = require_ok(rt->prepare_fwd(args));
    CHECK(require_ok(rt->prepare_fwd(args)) == call);  // cached per layout
    const auto ptrs = fwd_pointers(dp.tensors());
    const Outputs prepared =
        run(dp, stream, [&] { return rt->launch_fwd(*call, ptrs.data(), nullptr, stream.get()); });
    const Outputs library =
        run(dp, stream, [&] { return rt->selective_scan_fwd(args, stream.get()); });
    check_equal(prepared, library);
    const FwdHostOutputs ref = reference_fwd(in);
    const FwdRunScore s =
        score_run(p, false, ref, prepared.out.data(), p.has_z ? prepared.out_z.data() : nullptr,
                  p.return_last_state ? prepared.last.data() : nullptr);
    CHECK((s.verdict == Verdict::kInside || s.verdict == Verdict::kAtLimit));
  }
}

TEST_CASE("configs with scratch run on the caller's scratch", "[gpu][runtime]") {
  const char* configs[] = {"lookback.K128.D32.fp32.t64.i1.s2.fast",
                           "multipass.K128.D32.fp32.t64.i1.s2.fast"};
  for (const char* config : configs) {
    INFO("config " << config);
    ::setenv("SSMTUNE_FORCE_CONFIG", config, 1);
    RuntimeOptions o;
    o.use_db = false;
    auto created = Runtime::create(o);
    ::unsetenv("SSMTUNE_FORCE_CONFIG");
    auto rt = require_ok(std::move(created));
    auto stream = require_ok(jit::Stream::create());
    const FwdProblem p =
        require_ok(FwdProblem::from_key("b2.d64.l1000.n16.g1.fp32.vB.vC.D.z.bias.sp.last"));
    const FwdHostInputs in = make_inputs(p, 4242);
    auto dp = require_ok(FwdDeviceProblem::upload(in));
    const PreparedCall* call =
        require_ok(rt->prepare_fwd(to_c_args(dp.tensors(), p.delta_softplus)));
    INFO(Runtime::explain(*call));
    REQUIRE(call->scratch_bytes() > 0);
    auto scratch = require_ok(jit::DeviceBuffer::allocate(call->scratch_bytes()));
    const auto ptrs = fwd_pointers(dp.tensors());
    void* mine = reinterpret_cast<void*>(scratch.get());
    const Outputs with_mine =
        run(dp, stream, [&] { return rt->launch_fwd(*call, ptrs.data(), mine, stream.get()); });
    const Outputs with_runtimes =
        run(dp, stream, [&] { return rt->launch_fwd(*call, ptrs.data(), nullptr, stream.get()); });
    check_equal(with_mine, with_runtimes);
    const FwdRunScore s = score_run(p, false, reference_fwd(in), with_mine.out.data(),
                                    with_mine.out_z.data(), with_mine.last.data());
    CHECK((s.verdict == Verdict::kInside || s.verdict == Verdict::kAtLimit));
    void* misaligned = static_cast<char*>(mine) + 16;
    const Status bad = rt->launch_fwd(*call, ptrs.data(), misaligned, stream.get());
    CHECK(bad.code() == Code::kInvalidArgument);
  }
}

}  // namespace
}  // namespace ssmtune
