// Protocol encoding.
#include "cli/worker_protocol.h"

#include <algorithm>

#include "tuner/records_json.h"

namespace ssmtune::cli {

nlohmann::json to_json(const jit::DeviceInfo& d) {
  return {{"ordinal", d.ordinal},
          {"name", d.name},
          {"uuid", d.uuid},
          {"cc_major", d.cc_major},
          {"cc_minor", d.cc_minor},
          {"sm_count", d.sm_count},
          {"total_memory", d.total_memory},
          {"sm_clock_khz", d.sm_clock_khz},
          {"memory_clock_khz", d.memory_clock_khz},
          {"memory_bus_bits", d.memory_bus_bits},
          {"l2_bytes", d.l2_bytes},
          {"max_shared_per_block", d.max_shared_per_block},
          {"max_shared_per_sm", d.max_shared_per_sm},
          {"registers_per_sm", d.registers_per_sm},
          {"max_threads_per_sm", d.max_threads_per_sm},
          {"max_threads_per_block", d.max_threads_per_block},
          {"driver_version", d.driver_version},
          {"nvrtc_version", d.nvrtc_version}};
}

jit::DeviceInfo device_from_json(const nlohmann::json& j) {
  jit::DeviceInfo d;
  d.ordinal = j.value("ordinal", 0);
  d.name = j.value("name", "");
  d.uuid = j.value("uuid", "");
  d.cc_major = j.value("cc_major", 0);
  d.cc_minor = j.value("cc_minor", 0);
  d.sm_count = j.value("sm_count", 0);
  d.total_memory = j.value("total_memory", size_t{0});
  d.sm_clock_khz = j.value("sm_clock_khz", 0);
  d.memory_clock_khz = j.value("memory_clock_khz", 0);
  d.memory_bus_bits = j.value("memory_bus_bits", 0);
  d.l2_bytes = j.value("l2_bytes", 0);
  d.max_shared_per_block = j.value("max_shared_per_block", 0);
  d.max_shared_per_sm = j.value("max_shared_per_sm", 0);
  d.registers_per_sm = j.value("registers_per_sm", 0);
  d.max_threads_per_sm = j.value("max_threads_per_sm", 0);
  d.max_threads_per_block = j.value("max_threads_per_block", 0);
  d.driver_version = j.value("driver_version", 0);
  d.nvrtc_version = j.value("nvrtc_version", "");
  return d;
}

namespace {

// What the parent fills in itself; the worker leaves them out.
constexpr const char* kIdentityFields[] = {"family",        "device_uuid",   "problem_key",
                                           "config_key",    "template_hash", "driver_version",
                                           "nvrtc_version", "timestamp"};

OutputError output_error(const char* name, const ErrorStats& s, const ErrorBudget& budget,
                         double floor) {
  OutputError e;
  e.output = name;
  e.rel_l2 = s.rel_l2;
  e.max_abs_rel = s.max_abs_over_max_ref;
  e.max_rel = s.max_rel;
  e.nan_inf = s.nan_inf;
  e.unwritten = s.unwritten;
  e.budget = budget.rel_l2;
  e.verdict = to_string(classify(s, budget, floor));
  return e;
}

// Each scored output with the budget score_run judged it by.
std::vector<OutputError> output_errors(const EvalResult& r, const HostOutputs& ref) {
  const RunScore& s = r.score;
  std::vector<OutputError> out = {output_error("out", s.out, s.budget, s.floor)};
  if (s.has_out_z) out.push_back(output_error("out_z", s.out_z, s.budget, s.floor));
  if (s.has_last_state) {
    const double floor32 = rounding_floor(ref.last_state, DType::kF32);
    out.push_back(output_error("last_state", s.last_state,
                               budget_for(DType::kF32, r.config.acc == AccType::kF64, floor32),
                               floor32));
  }
  return out;
}

}  // namespace

nlohmann::json to_json(const EvalResult& r, const HostOutputs& ref) {
  Measurement m;
  auto status = parse_measure_status(to_string(r.status));
  m.status = status ? *status : MeasureStatus::kLaunchFailed;
  m.detail = r.detail;
  m.median_ms = r.timing.median_ms;
  m.spread_ms = r.timing.spread_ms;
  m.min_ms = r.timing.min_ms;
  m.repeats = r.timing.repeats;
  if (r.status == EvalStatus::kOk || r.status == EvalStatus::kInaccurate) {
    m.errors = output_errors(r, ref);
    summarize_errors(m);
  }
  for (const auto& k : r.kernels) {
    m.registers = std::max<int64_t>(m.registers, k.resources.registers);
    m.spill_bytes = std::max<int64_t>(m.spill_bytes,
                                      k.resources.spill_store_bytes + k.resources.spill_load_bytes);
    m.shared_bytes = std::max<int64_t>(m.shared_bytes, k.resources.shared_bytes);
  }
  nlohmann::json j = ssmtune::to_json(m);
  for (const char* f : kIdentityFields) j.erase(f);
  j["config"] = r.config.key();
  return j;
}

Status read_worker_result(const nlohmann::json& reply, Measurement& m) {
  if (!reply.is_object()) return Status::invalid_argument("worker reply: expected an object");
  nlohmann::json result = reply;
  for (const char* f : kIdentityFields) result.erase(f);
  return measurement_from_json(result, "worker reply", m, {"status"});
}

}  // namespace ssmtune::cli
