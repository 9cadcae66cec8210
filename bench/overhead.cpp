// Host overhead of a library call on a warm cache against a raw launch of
// the same kernel: Runtime::selective_scan_fwd (validate, key, memo lookup,
// launch) and the prepared call Runtime::launch_fwd (pointer checks, params,
// launch) versus FwdKernel::launch (cuLaunchKernel through the plan).
// The host clock times the enqueue of batches of 64 calls, with the stream
// drained between batches (outside the timing), so the launch queue never
// fills and GPU time does not leak into the host figure. Prints
// microseconds per call and the difference.
#include <chrono>
#include <cstdio>

#include "jit/device.h"
#include "jit/stream.h"
#include "runtime/call_args.h"
#include "runtime/prepared_call.h"
#include "ssmtune/runtime.h"
#include "tuner/fwd/device_problem.h"
#include "tuner/fwd/heuristics.h"
#include "tuner/fwd/runner.h"

using namespace ssmtune;

namespace {

int fail(const Status& s) {
  std::fprintf(stderr, "overhead: %s\n", s.to_string().c_str());
  return 1;
}

}  // namespace

int main() {
  RuntimeOptions o;
  o.use_db = false;
  auto rt = Runtime::create(o);
  if (!rt) return fail(rt.status());
  auto dev = jit::query_device(0);
  if (!dev) return fail(dev.status());
  FwdProblem p;
  p.batch = 1;
  p.dim = 64;
  p.seqlen = 64;
  p.dstate = 16;
  auto dp = FwdDeviceProblem::upload(make_inputs(p, 12345));
  if (!dp) return fail(dp.status());
  const FwdTensors& t = dp->tensors();
  const ssmtune_fwd_args a = to_c_args(t, false);
  auto stream = jit::Stream::create();
  if (!stream) return fail(stream.status());
  jit::Compiler compiler(jit::TemplateSources::embedded(), nullptr, 1);
  const FwdConfig c = heuristic_default(p, dev->sm_count, dev->max_shared_per_block).config;
  auto k = build_fwd_kernel(compiler, p, c, dev->arch(), dev->max_shared_per_block);
  if (!k) return fail(k.status());
  FwdScratch scratch;
  const auto params = make_params(p, t);
  constexpr int kBatch = 64, kBatches = 200, kCalls = kBatch * kBatches;
  auto time_us = [&](auto&& call) -> double {
    for (int i = 0; i < kBatch; ++i) call();  // warm: compile, memo, scratch
    if (!stream->synchronize()) return -1;
    double total = 0;
    for (int b = 0; b < kBatches; ++b) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < kBatch; ++i) call();
      const auto t1 = std::chrono::steady_clock::now();
      total += std::chrono::duration<double, std::micro>(t1 - t0).count();
      if (!stream->synchronize()) return -1;
    }
    return total / kCalls;
  };
  auto prepared = (*rt)->prepare_fwd(a);  // the layout; a's pointers are ignored
  if (!prepared) return fail(prepared.status());
  const void* ptrs[kFwdTensorCount] = {t.u.data,  t.delta.data, t.A.data,     t.B.data,
                                       t.C.data,  t.D.data,     t.z.data,     t.delta_bias.data,
                                       t.h0.data, t.out.data,   t.out_z.data, t.last_state.data};
  Status last;
  double raw_best = 1e9, api_best = 1e9, prep_best = 1e9;
  for (int round = 0; round < 3; ++round) {  // alternate, best of three
    raw_best =
        std::min(raw_best, time_us([&] { last = k->launch(params, stream->get(), scratch); }));
    if (!last) return fail(last);
    api_best =
        std::min(api_best, time_us([&] { last = (*rt)->selective_scan_fwd(a, stream->get()); }));
    if (!last) return fail(last);
    prep_best = std::min(prep_best, time_us([&] {
                           last = (*rt)->launch_fwd(**prepared, ptrs, nullptr, stream->get());
                         }));
    if (!last) return fail(last);
  }
  std::printf("config %s, problem %s, %d calls each, best of 3\n", c.key().c_str(), p.key().c_str(),
              kCalls);
  std::printf("raw launch (FwdKernel::launch): %.2f us/call\n", raw_best);
  std::printf("library call (Runtime::selective_scan_fwd): %.2f us/call\n", api_best);
  std::printf("prepared call (Runtime::launch_fwd): %.2f us/call\n", prep_best);
  std::printf("overhead: %.2f us/call library, %.2f us/call prepared (target: within 2 us)\n",
              api_best - raw_best, prep_best - raw_best);
  return 0;
}
