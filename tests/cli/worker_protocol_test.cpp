// The worker protocol's result: a Measurement through the records' JSON
// form, with an error per scored output, and the parent's identity fields
// kept when it reads the reply back.
#include "cli/worker_protocol.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

namespace ssmtune::cli {
namespace {

EvalResult scored_result() {
  EvalResult r;
  r.config.acc = AccType::kF32;
  r.status = EvalStatus::kInaccurate;
  r.detail = "outside";
  r.timing = {0.25, 0.24, 0.003, 40};
  r.score.out.rel_l2 = 3e-6;
  r.score.out.max_abs_over_max_ref = 8e-6;
  r.score.out.max_rel = std::numeric_limits<double>::infinity();
  r.score.out_z.rel_l2 = 5e-3;  // outside the budget: the headline
  r.score.out_z.nan_inf = 2;
  r.score.last_state.rel_l2 = 1e-7;
  r.score.last_state.unwritten = 1;
  r.score.has_out_z = r.score.has_last_state = true;
  r.score.floor = 2e-6;
  r.score.budget = budget_for(DType::kBF16, false, r.score.floor);
  r.score.verdict = Verdict::kDefect;
  jit::KernelImage k;
  k.resources.registers = 96;
  k.resources.spill_store_bytes = 4;
  k.resources.spill_load_bytes = 8;
  k.resources.shared_bytes = 12288;
  r.kernels = {k, k};
  r.kernels[1].resources.registers = 40;
  return r;
}

TEST_CASE("a worker result carries an error per scored output", "[cli][worker]") {
  FwdHostOutputs ref;
  ref.last_state = {1.0, -2.0, 0.5, 3.25};
  const nlohmann::json reply = to_json(scored_result(), ref);
  CHECK(reply["config"] == scored_result().config.key());
  CHECK_FALSE(reply.contains("device_uuid"));  // the parent's to fill

  Measurement m;
  m.family = "fwd";
  m.device_uuid = "GPU-1";
  m.problem_key = "fwd:b1.d4.l8.n4.g1.bf16.vB.vC.z.last";
  m.config_key = "seq.K64.D8.fp32.t128.i8.s1.fast";
  m.template_hash = "h";
  m.driver_version = 13000;
  m.nvrtc_version = "13.0";
  m.timestamp = 1700000000;
  REQUIRE(read_worker_result(reply, m).is_ok());
  CHECK(m.device_uuid == "GPU-1");
  CHECK(m.problem_key == "fwd:b1.d4.l8.n4.g1.bf16.vB.vC.z.last");
  CHECK(m.timestamp == 1700000000);
  CHECK(m.status == MeasureStatus::kInaccurate);
  CHECK(m.median_ms == 0.25);
  CHECK(m.repeats == 40);
  CHECK(m.registers == 96);
  CHECK(m.spill_bytes == 12);
  CHECK(m.shared_bytes == 12288);
  REQUIRE(m.errors.size() == 3);
  CHECK(m.errors[0].output == "out");
  CHECK(m.errors[0].max_abs_rel == 8e-6);
  CHECK(std::isinf(m.errors[0].max_rel));
  CHECK(m.errors[1].output == "out_z");
  CHECK(m.errors[1].verdict == "defect");  // non-finite elements
  CHECK(m.errors[2].output == "last_state");
  CHECK(m.errors[2].unwritten == 1);
  CHECK(m.errors[2].budget ==
        budget_for(DType::kF32, false, rounding_floor(ref.last_state, DType::kF32)).rel_l2);
  // The headline: the output furthest into its budget; sums of the counts.
  CHECK(m.rel_l2 == 5e-3);
  CHECK(m.verdict == "defect");
  CHECK(m.nan_inf == 2);
  CHECK(m.unwritten == 1);

  nlohmann::json bad = reply;
  bad["median_ms"] = "fast";
  CHECK(read_worker_result(bad, m).message().find("worker reply.median_ms") != std::string::npos);
}

TEST_CASE("a result that never ran has no errors", "[cli][worker]") {
  EvalResult r;
  r.status = EvalStatus::kCompileFailed;
  r.detail = "error: expected a ';'";
  Measurement m;
  REQUIRE(read_worker_result(to_json(r, FwdHostOutputs{}), m).is_ok());
  CHECK(m.status == MeasureStatus::kCompileFailed);
  CHECK(m.detail == "error: expected a ';'");
  CHECK(m.errors.empty());
  CHECK(m.verdict.empty());
}

}  // namespace
}  // namespace ssmtune::cli
