// An evaluation result as a record: an error per scored output, the
// headline, resources and timing, and its JSON form as the worker sends it
// (identity fields stay the session's).
#include "tuner/evaluator.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "tuner/records_json.h"

namespace ssmtune {
namespace {

EvalResult scored_result() {
  EvalResult r;
  r.config = "seq.K64.D8.fp32.t128.i8.s1.fast";
  r.status = MeasureStatus::kInaccurate;
  r.detail = "outside";
  r.timing = {0.25, 0.24, 0.003, 40};
  const ErrorBudget b16 = budget_for(DType::kBF16, false, 2e-6);
  ErrorStats out;
  out.rel_l2 = 3e-6;
  out.max_abs_over_max_ref = 8e-6;
  out.max_rel = std::numeric_limits<double>::infinity();
  ErrorStats out_z;
  out_z.rel_l2 = 5e-3;  // outside the budget: the headline
  out_z.nan_inf = 2;
  ErrorStats last;
  last.rel_l2 = 1e-7;
  last.unwritten = 1;
  r.outputs = {make_output_score("out", out, b16, 2e-6),
               make_output_score("out_z", out_z, b16, 2e-6),
               make_output_score("last_state", last, budget_for(DType::kF32, false, 0), 0)};
  r.verdict = worst_verdict(r.outputs);
  jit::KernelImage k;
  k.resources.registers = 96;
  k.resources.spill_store_bytes = 4;
  k.resources.spill_load_bytes = 8;
  k.resources.shared_bytes = 12288;
  r.kernels = {k, k};
  r.kernels[1].resources.registers = 40;
  return r;
}

TEST_CASE("an evaluation becomes a measurement with an error per output", "[tuner]") {
  const Measurement m = to_measurement(scored_result(), "fwd", "fwd:b1.d4.l8.n4.g1.bf16.vB.vC.z");
  CHECK(m.family == "fwd");
  CHECK(m.config_key == "seq.K64.D8.fp32.t128.i8.s1.fast");
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
  // The headline: the output furthest into its budget; sums of the counts.
  CHECK(m.rel_l2 == 5e-3);
  CHECK(m.verdict == "defect");
  CHECK(m.nan_inf == 2);
  CHECK(m.unwritten == 1);
}

TEST_CASE("a measurement survives the worker's JSON line", "[tuner]") {
  const Measurement sent =
      to_measurement(scored_result(), "fwd", "fwd:b1.d4.l8.n4.g1.bf16.vB.vC.z");
  const nlohmann::json line = nlohmann::json::parse(to_json(sent).dump());
  Measurement got;
  REQUIRE(measurement_from_json(line, "worker reply", got, {"status"}).is_ok());
  CHECK(got.status == sent.status);
  CHECK(got.median_ms == sent.median_ms);
  REQUIRE(got.errors.size() == 3);
  CHECK(std::isinf(got.errors[0].max_rel));
  CHECK(got.errors[1].nan_inf == 2);
  nlohmann::json bad = line;
  bad["median_ms"] = "fast";
  CHECK(measurement_from_json(bad, "worker reply", got).message().find("worker reply.median_ms") !=
        std::string::npos);
}

TEST_CASE("a result that never ran has no errors", "[tuner]") {
  EvalResult r;
  r.config = "seq.K64.D8.fp32.t128.i8.s1.fast";
  r.status = MeasureStatus::kCompileFailed;
  r.detail = "error: expected a ';'";
  const Measurement m = to_measurement(r, "fwd", "fwd:b1.d4.l8.n4.g1.bf16.vB.vC");
  CHECK(m.status == MeasureStatus::kCompileFailed);
  CHECK(m.detail == "error: expected a ';'");
  CHECK(m.errors.empty());
  CHECK(m.verdict.empty());
}

}  // namespace
}  // namespace ssmtune
