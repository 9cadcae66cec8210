// Range, key and text checks on records before they are written.
#include "cache/record_checks.h"

#include <cmath>
#include <ctime>
#include <sstream>

#include "cache/keys.h"
#include "core/text.h"
#include "jit/device.h"
#include "tuner/family.h"

namespace ssmtune::cache {
namespace {

Status bad(const std::string& where, const char* field, const std::string& why) {
  return Status::invalid_argument(where + "." + field + ": " + why);
}

std::string num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// A time in ms: NaN (not measured) or finite in [0, kMaxTimeMs].
Status time_ms(double v, const std::string& where, const char* field) {
  if (std::isnan(v)) return Status::ok();
  if (!std::isfinite(v) || v < 0 || v > kMaxTimeMs)
    return bad(
        where, field,
        num(v) + " is not a time in [0, " + num(kMaxTimeMs) + "] ms (or null: not measured)");
  return Status::ok();
}

// An error measure: NaN (not scored), or >= 0 (infinite when the output
// held NaN or Inf).
Status error_value(double v, const std::string& where, const char* field) {
  if (std::isnan(v) || v >= 0) return Status::ok();
  return bad(where, field, num(v) + " is negative");
}

Status count(int64_t v, int64_t max, const std::string& where, const char* field) {
  if (v >= 0 && v <= max) return Status::ok();
  return bad(where, field, std::to_string(v) + " is outside [0, " + std::to_string(max) + "]");
}

Status timestamp(int64_t t, bool allow_zero, int64_t now, const std::string& where) {
  if (t == 0 && allow_zero) return Status::ok();
  if (now == 0) now = int64_t{std::time(nullptr)};
  if (t <= 0) return bad(where, "timestamp", std::to_string(t) + " is not a time after 1970");
  if (t > now + kMaxClockSkewSeconds)
    return bad(where, "timestamp",
               std::to_string(t) + " is in the future (this machine's clock says " +
                   std::to_string(now) + "; at most " + std::to_string(kMaxClockSkewSeconds) +
                   " s of skew is accepted)");
  return Status::ok();
}

Status text(const std::string& s, const std::string& where, const char* field,
            bool multiline = false) {
  return check_text(s, where + "." + field, multiline);
}

// The problem and config keys parse, and the config is legal for the
// problem (what the family's plan would refuse is refused here too, shared
// memory aside: that limit is the device's). A family this build does not
// know (a newer build's) gets the generic key checks of cache/keys.h.
Status keys(const std::string& given_key, const std::string& config_key, const std::string& where,
            bool check_legal) {
  const std::string problem_key = qualified_key(given_key);
  const KernelFamily* family = find_family(family_of_key(problem_key));
  if (family == nullptr) {
    SSMTUNE_RETURN_IF_ERROR(check_problem_key(problem_key).with_context(where + ".problem_key"));
    return check_config_key(family_of_key(problem_key), config_key)
        .with_context(where + ".config_key");
  }
  auto p = family->parse_problem(problem_key);
  if (!p) return p.status().with_context(where + ".problem_key");
  auto c = family->canonical_config(config_key);
  if (!c) return c.status().with_context(where + ".config_key");
  if (check_legal) {
    Status s = family->check_config(**p, config_key, jit::DeviceInfo{});
    if (!s)
      return bad(where, "config_key",
                 config_key + " is illegal for " + problem_key + ": " + s.message());
  }
  return Status::ok();
}

// One output's error: a name, errors and budget >= 0 (NaN: not scored),
// counts >= 0, printable text.
Status output_error(const OutputError& e, const std::string& where) {
  if (e.output.empty()) return bad(where, "output", "empty output name");
  SSMTUNE_RETURN_IF_ERROR(text(e.output, where, "output"));
  SSMTUNE_RETURN_IF_ERROR(error_value(e.rel_l2, where, "rel_l2"));
  SSMTUNE_RETURN_IF_ERROR(error_value(e.max_abs_rel, where, "max_abs_rel"));
  SSMTUNE_RETURN_IF_ERROR(error_value(e.max_rel, where, "max_rel"));
  SSMTUNE_RETURN_IF_ERROR(count(e.nan_inf, INT64_MAX, where, "nan_inf"));
  SSMTUNE_RETURN_IF_ERROR(count(e.unwritten, INT64_MAX, where, "unwritten"));
  SSMTUNE_RETURN_IF_ERROR(error_value(e.budget, where, "budget"));
  return text(e.verdict, where, "verdict");
}

}  // namespace

Status check_text(const std::string& s, const std::string& where, bool multiline) {
  if (s.size() > kMaxTextBytes)
    return Status::invalid_argument(where + ": longer than " + std::to_string(kMaxTextBytes) +
                                    " bytes");
  for (size_t i = 0; i < s.size();) {
    const TextChar ch = classify_char(s, i, multiline);
    const char* why = nullptr;
    switch (ch.kind) {
      case CharKind::kPrintable:
        break;
      case CharKind::kControl:
        why = "a control character";
        break;
      case CharKind::kInvalid:
        why = "invalid UTF-8";
        break;
      case CharKind::kTruncated:
        why = "truncated UTF-8";
        break;
    }
    if (why != nullptr)
      return Status::invalid_argument(where + ": " + why + " at byte " + std::to_string(i));
    i += ch.len;
  }
  return Status::ok();
}

Status check_device_record(const DeviceRecord& d, const std::string& where) {
  if (d.uuid.empty()) return bad(where, "uuid", "empty");
  SSMTUNE_RETURN_IF_ERROR(text(d.uuid, where, "uuid"));
  SSMTUNE_RETURN_IF_ERROR(text(d.name, where, "name"));
  SSMTUNE_RETURN_IF_ERROR(text(d.nvrtc_version, where, "nvrtc_version"));
  SSMTUNE_RETURN_IF_ERROR(count(d.cc_major, 99, where, "cc_major"));
  SSMTUNE_RETURN_IF_ERROR(count(d.cc_minor, 99, where, "cc_minor"));
  SSMTUNE_RETURN_IF_ERROR(count(d.sm_count, 1 << 20, where, "sm_count"));
  SSMTUNE_RETURN_IF_ERROR(count(d.total_memory, int64_t{1} << 50, where, "total_memory"));
  return count(d.driver_version, 1 << 30, where, "driver_version");
}

Status check_measurement(const Measurement& m, const std::string& where, bool allow_zero_timestamp,
                         int64_t now) {
  SSMTUNE_RETURN_IF_ERROR(text(m.family, where, "family"));
  SSMTUNE_RETURN_IF_ERROR(text(m.device_uuid, where, "device_uuid"));
  // A pruned config may be one the plan refuses (that is why it was pruned).
  SSMTUNE_RETURN_IF_ERROR(
      keys(m.problem_key, m.config_key, where, m.status != MeasureStatus::kPruned));
  SSMTUNE_RETURN_IF_ERROR(time_ms(m.median_ms, where, "median_ms"));
  SSMTUNE_RETURN_IF_ERROR(time_ms(m.spread_ms, where, "spread_ms"));
  SSMTUNE_RETURN_IF_ERROR(time_ms(m.min_ms, where, "min_ms"));
  SSMTUNE_RETURN_IF_ERROR(count(m.repeats, 1 << 30, where, "repeats"));
  SSMTUNE_RETURN_IF_ERROR(error_value(m.rel_l2, where, "rel_l2"));
  SSMTUNE_RETURN_IF_ERROR(error_value(m.error_budget, where, "error_budget"));
  SSMTUNE_RETURN_IF_ERROR(count(m.nan_inf, INT64_MAX, where, "nan_inf"));
  SSMTUNE_RETURN_IF_ERROR(count(m.unwritten, INT64_MAX, where, "unwritten"));
  SSMTUNE_RETURN_IF_ERROR(text(m.verdict, where, "verdict"));
  SSMTUNE_RETURN_IF_ERROR(text(m.detail, where, "detail", true));
  SSMTUNE_RETURN_IF_ERROR(text(m.template_hash, where, "template_hash"));
  SSMTUNE_RETURN_IF_ERROR(count(m.driver_version, 1 << 30, where, "driver_version"));
  SSMTUNE_RETURN_IF_ERROR(text(m.nvrtc_version, where, "nvrtc_version"));
  SSMTUNE_RETURN_IF_ERROR(timestamp(m.timestamp, allow_zero_timestamp, now, where));
  SSMTUNE_RETURN_IF_ERROR(count(m.registers, 1 << 16, where, "registers"));
  SSMTUNE_RETURN_IF_ERROR(count(m.spill_bytes, 1 << 30, where, "spill_bytes"));
  SSMTUNE_RETURN_IF_ERROR(count(m.shared_bytes, 1 << 30, where, "shared_bytes"));
  if (m.errors.size() > kMaxOutputs)
    return bad(
        where, "errors",
        std::to_string(m.errors.size()) + " outputs (at most " + std::to_string(kMaxOutputs) + ")");
  for (size_t i = 0; i < m.errors.size(); ++i) {
    const std::string at = where + ".errors[" + std::to_string(i) + "]";
    SSMTUNE_RETURN_IF_ERROR(output_error(m.errors[i], at));
    for (size_t k = 0; k < i; ++k)
      if (m.errors[k].output == m.errors[i].output)
        return Status::invalid_argument(at + ": output '" + m.errors[i].output + "' repeated");
  }
  return Status::ok();
}

Status check_best_entry(const BestEntry& b, const std::string& where, bool allow_zero_timestamp,
                        int64_t now) {
  SSMTUNE_RETURN_IF_ERROR(text(b.family, where, "family"));
  SSMTUNE_RETURN_IF_ERROR(text(b.device_uuid, where, "device_uuid"));
  SSMTUNE_RETURN_IF_ERROR(keys(b.problem_key, b.config_key, where, true));
  if (std::isnan(b.median_ms)) return bad(where, "median_ms", "a best entry needs a time");
  SSMTUNE_RETURN_IF_ERROR(time_ms(b.median_ms, where, "median_ms"));
  SSMTUNE_RETURN_IF_ERROR(time_ms(b.spread_ms, where, "spread_ms"));
  SSMTUNE_RETURN_IF_ERROR(error_value(b.rel_l2, where, "rel_l2"));
  SSMTUNE_RETURN_IF_ERROR(text(b.template_hash, where, "template_hash"));
  SSMTUNE_RETURN_IF_ERROR(count(b.driver_version, 1 << 30, where, "driver_version"));
  SSMTUNE_RETURN_IF_ERROR(text(b.nvrtc_version, where, "nvrtc_version"));
  SSMTUNE_RETURN_IF_ERROR(timestamp(b.timestamp, allow_zero_timestamp, now, where));
  return text(b.rule, where, "rule", true);
}

}  // namespace ssmtune::cache
