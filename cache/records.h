// The records the tuner writes to the tuning database and reads back: a
// device, one measurement of one config on one problem, the selected best
// config, and the versions that decide whether an entry is stale.
// Header-only values (tuner/selection uses them without linking sqlite).
#pragma once

#include <cstdint>
#include <string>

#include "jit/device.h"
#include "ssmtune/status.h"

namespace ssmtune::cache {

// What became of one config on one problem. Failed configs are values too:
// stored so a resumed tuning run does not retry them.
enum class MeasureStatus {
  kOk,             // compiled, ran, timed and scored
  kPruned,         // skipped before timing (resources over the device's limits, ...)
  kCompileFailed,  // NVRTC rejected it; detail holds the log excerpt
  kLaunchFailed,   // cuLaunchKernel refused it (too many threads, shared memory, ...)
  kFaulted,        // the kernel faulted (illegal address, ...); detail holds the message
  kInaccurate,     // ran, but its output failed the accuracy check
};

inline const char* to_string(MeasureStatus s) {
  switch (s) {
    case MeasureStatus::kOk:
      return "ok";
    case MeasureStatus::kPruned:
      return "pruned";
    case MeasureStatus::kCompileFailed:
      return "compile_failed";
    case MeasureStatus::kLaunchFailed:
      return "launch_failed";
    case MeasureStatus::kFaulted:
      return "faulted";
    case MeasureStatus::kInaccurate:
      return "inaccurate";
  }
  return "?";
}

inline constexpr MeasureStatus kAllMeasureStatuses[] = {
    MeasureStatus::kOk,           MeasureStatus::kPruned,  MeasureStatus::kCompileFailed,
    MeasureStatus::kLaunchFailed, MeasureStatus::kFaulted, MeasureStatus::kInaccurate};

inline Result<MeasureStatus> parse_measure_status(const std::string& s) {
  for (MeasureStatus m : kAllMeasureStatuses)
    if (s == to_string(m)) return m;
  return Status::invalid_argument("unknown measurement status '" + s +
                                  "' (expected ok, pruned, compile_failed, launch_failed, "
                                  "faulted or inaccurate)");
}

struct DeviceRecord {
  std::string uuid;  // "GPU-...": the primary key
  std::string name;  // "NVIDIA H200"
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int driver_version = 0;     // e.g. 13000
  std::string nvrtc_version;  // e.g. "13.0"
};

inline DeviceRecord device_record(const jit::DeviceInfo& d) {
  return {d.uuid, d.name, d.cc_major, d.cc_minor, d.sm_count, d.driver_version, d.nvrtc_version};
}

struct Measurement {
  std::string device_uuid;
  std::string problem_key;  // FwdProblem::key()
  std::string config_key;   // FwdConfig::key()
  MeasureStatus status = MeasureStatus::kOk;
  double median_ms = 0;
  double spread_ms = 0;  // run-to-run spread, e.g. the interquartile range
  double min_ms = 0;
  int repeats = 0;
  double rel_l2 = 0;          // relative L2 error against fp64
  double max_abs_rel = 0;     // max |err| over max |ref|
  double max_rel = 0;         // max relative error where |ref| is not tiny
  int64_t nan_inf = 0;        // NaN/Inf elements in the output
  int64_t unwritten = 0;      // output elements still holding the poison
  std::string verdict;        // "inside", "at-limit", "outside", "defect"
  double error_budget = 0;    // the rel L2 budget it was scored against
  std::string detail;         // prune reason, compile log excerpt, fault message
  std::string template_hash;  // TemplateSources::hash() it was compiled from
  int driver_version = 0;
  std::string nvrtc_version;
  int64_t timestamp = 0;  // unix seconds
  int registers = 0;      // per thread, from the ptxas report
  int spill_bytes = 0;
  int shared_bytes = 0;
};

// The versions current entries must match. A field left empty (0 or "")
// is not compared: e.g. a machine without a driver cannot say which
// driver is current.
struct Versions {
  int driver_version = 0;
  std::string nvrtc_version;
  std::string template_hash;
};

// "" when an entry made under (driver, nvrtc, template_hash) is current for
// `v`, else why it is stale, e.g. "driver 12040 != 13000".
inline std::string stale_reason(int driver_version, const std::string& nvrtc_version,
                                const std::string& template_hash, const Versions& v) {
  std::string why;
  auto add = [&why](const std::string& s) { why += (why.empty() ? "" : "; ") + s; };
  if (v.driver_version != 0 && driver_version != v.driver_version)
    add("driver " + std::to_string(driver_version) + " != " + std::to_string(v.driver_version));
  if (!v.nvrtc_version.empty() && nvrtc_version != v.nvrtc_version)
    add("nvrtc " + nvrtc_version + " != " + v.nvrtc_version);
  if (!v.template_hash.empty() && template_hash != v.template_hash)
    add("templates " + template_hash.substr(0, 8) + " != " + v.template_hash.substr(0, 8));
  return why;
}

inline bool is_stale(const Measurement& m, const Versions& v) {
  return !stale_reason(m.driver_version, m.nvrtc_version, m.template_hash, v).empty();
}

// The config selected for (device, problem), with the numbers it won by.
struct BestEntry {
  std::string device_uuid;
  std::string problem_key;
  std::string config_key;
  double median_ms = 0;
  double spread_ms = 0;
  double rel_l2 = 0;
  std::string template_hash;
  int driver_version = 0;
  std::string nvrtc_version;
  int64_t timestamp = 0;  // unix seconds
  std::string rule;       // why: "fastest inside budget (...)", "tie with ...; more accurate"
  bool stale = false;     // computed on read against the caller's Versions; not stored
};

inline bool is_stale(const BestEntry& b, const Versions& v) {
  return !stale_reason(b.driver_version, b.nvrtc_version, b.template_hash, v).empty();
}

}  // namespace ssmtune::cache
