// Record helpers: status names, headline errors, staleness.
#include "tuner/records.h"

#include "core/text.h"

namespace ssmtune {

const char* to_string(MeasureStatus s) {
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

Result<MeasureStatus> parse_measure_status(const std::string& s) {
  for (MeasureStatus m : kAllMeasureStatuses)
    if (s == to_string(m)) return m;
  return Status::invalid_argument("unknown measurement status '" + s +
                                  "' (expected ok, pruned, compile_failed, launch_failed, "
                                  "faulted or inaccurate)");
}

DeviceRecord device_record(const jit::DeviceInfo& d) {
  return {d.uuid,     d.name,           d.cc_major,      d.cc_minor,
          d.sm_count, d.driver_version, d.nvrtc_version, static_cast<int64_t>(d.total_memory)};
}

int64_t memory_gib(const DeviceRecord& d) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  return d.total_memory > 0 ? (d.total_memory + kGiB / 2) / kGiB : 0;
}

std::string device_class(const DeviceRecord& d) {
  std::string c = d.name + " sm_" + std::to_string(d.cc_major) + std::to_string(d.cc_minor) + " " +
                  std::to_string(d.sm_count) + " SMs";
  if (memory_gib(d) > 0) c += " " + std::to_string(memory_gib(d)) + " GiB";
  return c;
}

bool same_class(const DeviceRecord& a, const DeviceRecord& b) {
  if (a.name != b.name || a.cc_major != b.cc_major || a.cc_minor != b.cc_minor ||
      a.sm_count != b.sm_count)
    return false;
  const int64_t ma = memory_gib(a), mb = memory_gib(b);
  return ma == 0 || mb == 0 || ma == mb;
}

namespace {
int verdict_rank(const std::string& v) {
  if (v == "defect") return 3;
  if (v == "outside") return 2;
  if (v == "inside") return 1;
  return 0;  // at-limit, or none
}
}  // namespace

void summarize_errors(Measurement& m) {
  if (m.errors.empty()) return;
  m.nan_inf = 0;
  m.unwritten = 0;
  m.verdict.clear();
  const OutputError* head = nullptr;
  double head_ratio = -1;
  for (const OutputError& e : m.errors) {
    m.nan_inf += e.nan_inf;
    m.unwritten += e.unwritten;
    if (m.verdict.empty() || verdict_rank(e.verdict) > verdict_rank(m.verdict))
      m.verdict = e.verdict;
    const double ratio = e.budget > 0 ? e.rel_l2 / e.budget : e.rel_l2;
    if (!(ratio <= head_ratio)) {  // NaN ratios lead
      head = &e;
      head_ratio = ratio;
    }
  }
  m.rel_l2 = head->rel_l2;
  m.error_budget = head->budget;
}

std::string stale_reason(int64_t driver_version, const std::string& nvrtc_version,
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

bool is_stale(const Measurement& m, const Versions& v) {
  return !stale_reason(m.driver_version, m.nvrtc_version, m.template_hash, v).empty();
}

bool is_stale(const BestEntry& b, const Versions& v) {
  return !stale_reason(b.driver_version, b.nvrtc_version, b.template_hash, v).empty();
}

std::string family_of_key(const std::string& problem_key) {
  const auto colon = problem_key.find(':');
  return colon == std::string::npos ? "fwd" : problem_key.substr(0, colon);
}

std::string printable_text(const std::string& s, bool multiline, size_t max_bytes) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const TextChar ch = classify_char(s, i, multiline);
    const bool ok = ch.kind == CharKind::kPrintable;
    const size_t len = ok ? ch.len : 1;  // a bad byte becomes '?', the next is looked at anew
    if (out.size() + len > max_bytes) break;
    if (ok) {
      out.append(s, i, len);
    } else {
      out += '?';
    }
    i += len;
  }
  return out;
}

}  // namespace ssmtune
