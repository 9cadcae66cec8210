// The runtime's decode step on the GPU: the library call and a prepared
// step against the fp64 step (out and the updated state, relative L2 within
// the fp32 budget plus the storage rounding), the state restored between
// runs; the two paths bitwise equal; a prepared step's
// pointer errors.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "jit/stream.h"
#include "runtime/prepared_step_call.h"
#include "runtime/step_call_args.h"
#include "ssmtune/runtime.h"
#include "support/gpu_helpers.h"
#include "support/problems.h"
#include "tuner/accuracy.h"
#include "tuner/step/device_problem.h"
#include "tuner/step/host_inputs.h"

namespace ssmtune {
namespace {

using step::StepDeviceProblem;
using step::StepProblem;
using testing::require_ok;

struct Outputs {
  std::vector<unsigned char> out, state;
};

template <typename Launch>
Outputs run(const StepDeviceProblem& dp, const jit::Stream& stream, Launch&& launch) {
  REQUIRE_STATUS_OK(dp.reset(stream.get()));
  REQUIRE_STATUS_OK(launch());
  REQUIRE_STATUS_OK(stream.synchronize());
  return {require_ok(dp.download_out()), require_ok(dp.download_state())};
}

void check(const StepProblem& p, const step::StepHostOutputs& ref, const Outputs& got) {
  const ErrorStats so = score(ref.out, got.out.data(), p.dtype, 0, 0);
  const ErrorStats ss = score(ref.state, got.state.data(), p.state_dtype, 0, 0);
  std::printf("%-52s out %.1e state %.1e\n", p.key().c_str(), so.rel_l2, ss.rel_l2);
  CHECK(so.unwritten == 0);
  CHECK(so.nan_inf == 0);
  CHECK(ss.nan_inf == 0);
  CHECK(so.rel_l2 <= kAccBudgetF32 + 1.5 * rounding_floor(ref.out, p.dtype));
  CHECK(ss.rel_l2 <= kAccBudgetF32 + 1.5 * rounding_floor(ref.state, p.state_dtype));
}

TEST_CASE("the runtime's step matches fp64; the call and a prepared step agree bitwise",
          "[gpu][runtime][step]") {
  RuntimeOptions o;
  o.use_db = false;
  auto rt = require_ok(Runtime::create(o));
  auto stream = require_ok(jit::Stream::create());
  const uint64_t seed = testing::test_seed("runtime step test");
  int index = 0;
  for (const StepProblem& p :
       {testing::step_problem(4, 1, 1536, 16, 1, DType::kBF16, DType::kF32, true, false),
        testing::step_problem(3, 6, 64, 64, 2, DType::kF16, DType::kBF16, true, true),
        testing::step_problem(2, 1, 100, 13, 1, DType::kF32, DType::kF32, false, false)}) {
    INFO(p.key() << " seed " << seed + index);
    const step::StepHostInputs in = step::make_step_inputs(p, seed + index++);
    const step::StepHostOutputs ref = step::reference_step(in);
    auto dp = require_ok(StepDeviceProblem::upload(in));
    const ssmtune_step_args args = to_c_args(dp.tensors(), p.softplus);
    const Outputs called =
        run(dp, stream, [&] { return rt->selective_state_update(args, stream.get()); });
    check(p, ref, called);
    INFO(require_ok(rt->explain_step(args)));
    const PreparedStepCall* call = require_ok(rt->prepare_step(args));
    CHECK(require_ok(rt->prepare_step(args)) == call);  // cached per layout
    const ssmtune_tensor* t[kStepTensorCount] = {
        &args.state,   &args.x,   &args.dt,           &args.A, &args.B, &args.C, &args.D, &args.z,
        &args.dt_bias, &args.out, &args.state_indices};
    std::vector<const void*> ptrs(kStepTensorCount);
    for (int i = 0; i < kStepTensorCount; ++i) ptrs[static_cast<size_t>(i)] = t[i]->data;
    const Outputs launched =
        run(dp, stream, [&] { return rt->launch_step(*call, ptrs.data(), stream.get()); });
    CHECK(launched.out == called.out);
    CHECK(launched.state == called.state);
    // A missing pointer is refused before anything is enqueued.
    ptrs[SSMTUNE_STEP_X] = nullptr;
    const Status missing = rt->launch_step(*call, ptrs.data(), stream.get());
    CHECK(missing.message().rfind("x: the plan was prepared with this tensor", 0) == 0);
  }
}

}  // namespace
}  // namespace ssmtune
