// Protocol encoding.
#include "cli/worker_protocol.h"

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

nlohmann::json to_json(const EvalResult& r) {
  int regs = 0, spill = 0, smem = 0;
  for (const auto& k : r.kernels) {
    regs = std::max(regs, k.resources.registers);
    spill = std::max(spill, k.resources.spill_store_bytes + k.resources.spill_load_bytes);
    smem = std::max(smem, k.resources.shared_bytes);
  }
  const auto& s = r.score;
  return {{"config", r.config.key()},
          {"status", to_string(r.status)},
          {"detail", r.detail},
          {"median_ms", r.timing.median_ms},
          {"spread_ms", r.timing.spread_ms},
          {"min_ms", r.timing.min_ms},
          {"repeats", r.timing.repeats},
          {"rel_l2", s.out.rel_l2},
          {"max_abs_rel", s.out.max_abs_over_max_ref},
          {"max_rel", s.out.max_rel},
          {"nan_inf", s.out.nan_inf + s.out_z.nan_inf + s.last_state.nan_inf},
          {"unwritten", s.out.unwritten + s.out_z.unwritten + s.last_state.unwritten},
          {"verdict", to_string(s.verdict)},
          {"budget", s.budget.rel_l2},
          {"registers", regs},
          {"spill_bytes", spill},
          {"shared_bytes", smem}};
}

WorkerResult worker_result_from_json(const nlohmann::json& j) {
  WorkerResult r;
  r.status = j.value("status", "faulted");
  r.detail = j.value("detail", "");
  r.median_ms = j.value("median_ms", 0.0);
  r.spread_ms = j.value("spread_ms", 0.0);
  r.min_ms = j.value("min_ms", 0.0);
  r.repeats = j.value("repeats", 0);
  r.rel_l2 = j.value("rel_l2", 0.0);
  r.max_abs_rel = j.value("max_abs_rel", 0.0);
  r.max_rel = j.value("max_rel", 0.0);
  r.budget = j.value("budget", 0.0);
  r.nan_inf = j.value("nan_inf", int64_t{0});
  r.unwritten = j.value("unwritten", int64_t{0});
  r.verdict = j.value("verdict", "");
  r.registers = j.value("registers", 0);
  r.spill_bytes = j.value("spill_bytes", 0);
  r.shared_bytes = j.value("shared_bytes", 0);
  return r;
}

}  // namespace ssmtune::cli
