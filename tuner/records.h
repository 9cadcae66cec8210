// The records a tuning session produces and reads back, for every kernel
// family: a device, one measurement of one config on one problem (with an
// error per named output), the selected best config, and the versions that
// decide whether an entry is stale. Values; the one field description of a
// Measurement (visit_fields) is what sqlite binds, JSON and the worker
// protocol all use, so a new field is added in one place.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jit/device.h"
#include "ssmtune/status.h"

namespace ssmtune {

// What became of one config on one problem. Failed configs are values too:
// stored so a resumed tuning run does not retry them. The evaluator, the
// worker protocol and the database share this enum.
enum class MeasureStatus {
  kOk,             // compiled, ran, timed and scored inside its budget
  kPruned,         // skipped before timing (illegal, resources over the device's limits, ...)
  kCompileFailed,  // NVRTC rejected it; detail holds the log excerpt
  kLaunchFailed,   // cuLaunchKernel refused it, or the run failed without faulting
  kFaulted,        // the kernel faulted (illegal address, hang); detail holds the message
  kInaccurate,     // ran, but an output failed the accuracy check
};
const char* to_string(MeasureStatus s);  // "ok", "pruned", "compile_failed", ...
Result<MeasureStatus> parse_measure_status(const std::string& s);
inline constexpr MeasureStatus kAllMeasureStatuses[] = {
    MeasureStatus::kOk,           MeasureStatus::kPruned,  MeasureStatus::kCompileFailed,
    MeasureStatus::kLaunchFailed, MeasureStatus::kFaulted, MeasureStatus::kInaccurate};

struct DeviceRecord {
  std::string uuid;  // "GPU-...": the primary key
  std::string name;  // "NVIDIA H200"
  int64_t cc_major = 0;
  int64_t cc_minor = 0;
  int64_t sm_count = 0;
  int64_t driver_version = 0;  // e.g. 13000
  std::string nvrtc_version;   // e.g. "13.0"
  int64_t total_memory = 0;    // bytes; 0: unknown (a row from before schema 4)
};
DeviceRecord device_record(const jit::DeviceInfo& d);
// The device's class: the GPU model as far as tuning can tell (name,
// compute capability, SM count, memory in whole GiB when known), e.g.
// "NVIDIA H200 sm_90 132 SMs 140 GiB". GPUs of one class share tuned
// entries; driver and NVRTC versions stay each entry's own staleness, the
// UUID its provenance.
std::string device_class(const DeviceRecord& d);
// Memory in whole GiB, rounded (what the class compares: ECC and driver
// reservations move the byte count a little); 0 when unknown.
int64_t memory_gib(const DeviceRecord& d);
// Same class: name, compute capability and SM count equal, and the memory
// (in whole GiB) equal unless either is unknown, so rows migrated from
// before schema 4 keep serving their class.
bool same_class(const DeviceRecord& a, const DeviceRecord& b);

// The error of one named output ("out", "out_z", "last_state", "du", ...)
// against the fp64 reference.
struct OutputError {
  std::string output;
  double rel_l2 = 0;       // ||got - ref|| / ||ref||
  double max_abs_rel = 0;  // max |err| over max |ref|
  double max_rel = 0;      // max relative error where |ref| is not tiny
  int64_t nan_inf = 0;     // non-finite elements
  int64_t unwritten = 0;   // elements still holding the poison
  double budget = 0;       // the rel L2 budget it was scored against
  std::string verdict;     // "inside", "at-limit", "outside", "defect"
};

struct Measurement {
  std::string family;  // "fwd", "bwd", ...: the prefix of problem_key
  std::string device_uuid;
  std::string problem_key;  // with the family prefix, e.g. "fwd:b8.d1536.l2048.n16.g1.bf16.vB.vC"
  std::string config_key;   // the family's config key
  MeasureStatus status = MeasureStatus::kOk;
  double median_ms = 0;
  double spread_ms = 0;  // run-to-run spread (interquartile range)
  double min_ms = 0;
  int64_t repeats = 0;
  // The headline error: that of the output with the largest rel_l2 / budget
  // (selection ranks ties by it); every output's error is in `errors`.
  double rel_l2 = 0;
  double error_budget = 0;
  std::string verdict;        // the worst over the outputs
  int64_t nan_inf = 0;        // summed over the outputs
  int64_t unwritten = 0;      // summed over the outputs
  std::string detail;         // prune reason, compile log excerpt, fault message
  std::string template_hash;  // TemplateSources::hash() it was compiled from
  int64_t driver_version = 0;
  std::string nvrtc_version;
  int64_t timestamp = 0;  // unix seconds
  int64_t registers = 0;  // per thread, the largest over the config's kernels
  int64_t spill_bytes = 0;
  int64_t shared_bytes = 0;
  std::vector<OutputError> errors;  // one per named output, in the family's order
};

// Sets the headline fields (rel_l2, error_budget, verdict, nan_inf,
// unwritten) from m.errors.
void summarize_errors(Measurement& m);

// The scalar fields of a Measurement, in storage order, each with its name:
// v(name, field) for std::string, double, int64_t and MeasureStatus fields.
// `errors` is not visited (a child table / a nested array).
template <typename M, typename V>
void visit_fields(M& m, V&& v) {
  v("family", m.family);
  v("device_uuid", m.device_uuid);
  v("problem_key", m.problem_key);
  v("config_key", m.config_key);
  v("status", m.status);
  v("median_ms", m.median_ms);
  v("spread_ms", m.spread_ms);
  v("min_ms", m.min_ms);
  v("repeats", m.repeats);
  v("rel_l2", m.rel_l2);
  v("error_budget", m.error_budget);
  v("verdict", m.verdict);
  v("nan_inf", m.nan_inf);
  v("unwritten", m.unwritten);
  v("detail", m.detail);
  v("template_hash", m.template_hash);
  v("driver_version", m.driver_version);
  v("nvrtc_version", m.nvrtc_version);
  v("timestamp", m.timestamp);
  v("registers", m.registers);
  v("spill_bytes", m.spill_bytes);
  v("shared_bytes", m.shared_bytes);
}

template <typename E, typename V>
void visit_fields_of_error(E& e, V&& v) {
  v("output", e.output);
  v("rel_l2", e.rel_l2);
  v("max_abs_rel", e.max_abs_rel);
  v("max_rel", e.max_rel);
  v("nan_inf", e.nan_inf);
  v("unwritten", e.unwritten);
  v("budget", e.budget);
  v("verdict", e.verdict);
}

// The versions current entries must match. A field left empty (0 or "")
// is not compared: e.g. a machine without a driver cannot say which
// driver is current.
struct Versions {
  int64_t driver_version = 0;
  std::string nvrtc_version;
  std::string template_hash;
};

// "" when an entry made under (driver, nvrtc, template_hash) is current for
// `v`, else why it is stale, e.g. "driver 12040 != 13000".
std::string stale_reason(int64_t driver_version, const std::string& nvrtc_version,
                         const std::string& template_hash, const Versions& v);
bool is_stale(const Measurement& m, const Versions& v);

// The config selected for (device, problem), with the numbers it won by.
struct BestEntry {
  std::string family;
  std::string device_uuid;
  std::string problem_key;
  std::string config_key;
  double median_ms = 0;
  double spread_ms = 0;
  double rel_l2 = 0;
  std::string template_hash;
  int64_t driver_version = 0;
  std::string nvrtc_version;
  int64_t timestamp = 0;  // unix seconds
  std::string rule;       // why: "fastest inside budget (...)", "tie with ...; more accurate"
  bool stale = false;     // computed on read against the caller's Versions; not stored
};
bool is_stale(const BestEntry& b, const Versions& v);

// `s` as text the tuning database accepts (cache/record_checks.h): invalid
// UTF-8 and control characters become '?' (\n, \t and \r stay when
// `multiline`), and at most `max_bytes` bytes, cut between characters. For
// text a run produces (a compile log excerpt, a fault message).
std::string printable_text(const std::string& s, bool multiline = true,
                           size_t max_bytes = size_t{1} << 16);

// The family of a problem key: the text before ':' ("fwd" for "fwd:b8...").
// Keys without a prefix (written before families existed) are "fwd".
std::string family_of_key(const std::string& problem_key);

}  // namespace ssmtune
