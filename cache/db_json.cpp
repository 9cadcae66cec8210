// Export of devices, measurements and best entries as JSON, and import or
// merge of such a file in one transaction.
#include "cache/tuning_db.h"

#include <cstdint>
#include <ctime>

#include "cache/keys.h"
#include "cache/record_checks.h"
#include "tuner/records_json.h"

namespace ssmtune::cache {
namespace {

using nlohmann::json;

// Bump when the export layout changes.
//   1: forward only: unprefixed problem keys, the error of `out` as
//      measurement fields (rel_l2, max_abs_rel, max_rel, ...)
//   2: family fields, prefixed problem keys, an "errors" array per measurement
constexpr int kExportFormat = 2;

// Reads typed fields of one object, keeping the first error with the
// entry's name ("measurements[3].status: expected a string").
class Reader {
 public:
  Reader(const json& o, std::string where) : o_(o), where_(std::move(where)) {
    if (!o_.is_object()) fail("", "expected an object");
  }
  const Status& status() const { return status_; }

  std::string text(const char* k, bool required = true) {
    const json* v = find(k, required);
    if (v == nullptr) return {};
    if (!v->is_string()) return fail(k, "expected a string"), std::string();
    return v->get<std::string>();
  }
  int64_t integer(const char* k, bool required = false) {
    const json* v = find(k, required);
    if (v == nullptr) return 0;
    if (!v->is_number_integer()) return fail(k, "expected an integer"), 0;
    if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t{INT64_MAX})
      return fail(k, v->dump() + " does not fit a 64-bit integer"), 0;
    return v->get<int64_t>();
  }
  // An integer the driver API holds in 32 bits (versions, SM counts):
  // refused, not cut, when it does not fit.
  int64_t int32(const char* k) {
    const int64_t v = integer(k);
    if (v < INT32_MIN || v > INT32_MAX)
      return fail(k, std::to_string(v) + " does not fit a 32-bit integer"), 0;
    return v;
  }
  double number(const char* k) {
    const json* v = find(k, false);
    if (v == nullptr) return 0;
    auto d = number_from_json(*v, where_ + "." + k);
    if (!d) return fail(k, "expected a number, null, \"inf\" or \"-inf\""), 0;
    return *d;
  }

 private:
  const json* find(const char* k, bool required) {
    if (!status_.is_ok()) return nullptr;
    auto it = o_.find(k);
    if (it == o_.end()) {
      if (required) fail(k, "missing");
      return nullptr;
    }
    return &*it;
  }
  void fail(const char* k, const std::string& why) {
    if (!status_.is_ok()) return;
    status_ = Status::invalid_argument(where_ + (*k ? std::string(".") + k : "") + ": " + why);
  }
  const json& o_;
  std::string where_;
  Status status_;
};

json device_json(const DeviceRecord& d) {
  return {{"uuid", d.uuid},
          {"name", d.name},
          {"cc_major", d.cc_major},
          {"cc_minor", d.cc_minor},
          {"sm_count", d.sm_count},
          {"driver_version", d.driver_version},
          {"nvrtc_version", d.nvrtc_version},
          {"total_memory", d.total_memory}};
}

Result<DeviceRecord> parse_device(const json& j, const std::string& where) {
  Reader r(j, where);
  DeviceRecord d;
  d.uuid = r.text("uuid");
  d.name = r.text("name");
  d.cc_major = r.int32("cc_major");
  d.cc_minor = r.int32("cc_minor");
  d.sm_count = r.int32("sm_count");
  d.driver_version = r.int32("driver_version");
  d.nvrtc_version = r.text("nvrtc_version");
  d.total_memory = r.integer("total_memory");  // optional: absent before schema 4 (unknown)
  if (!r.status().is_ok()) return r.status();
  SSMTUNE_RETURN_IF_ERROR(check_device_record(d, where));
  return d;
}

// The error of `out` that a format 1 measurement (and a version 2 row)
// held as its own fields: one error entry, unless it holds nothing (a
// config that never ran). The same rule as migrate_2_to_3 in schema.cpp.
Status add_legacy_out_error(const json& j, const std::string& where, Measurement& m) {
  Reader r(j, where);
  OutputError e;
  e.output = "out";
  e.rel_l2 = m.rel_l2;
  e.max_abs_rel = r.number("max_abs_rel");
  e.max_rel = r.number("max_rel");
  e.nan_inf = m.nan_inf;
  e.unwritten = m.unwritten;
  e.budget = m.error_budget;
  e.verdict = m.verdict;
  SSMTUNE_RETURN_IF_ERROR(r.status());
  m.errors.clear();
  if (e.rel_l2 == 0 && e.max_abs_rel == 0 && e.max_rel == 0 && e.nan_inf == 0 && e.unwritten == 0 &&
      e.budget == 0 && e.verdict.empty())
    return Status::ok();
  m.errors.push_back(e);
  return Status::ok();
}

Result<Measurement> parse_measurement(const json& j, const std::string& where, int64_t format) {
  Measurement m;
  SSMTUNE_RETURN_IF_ERROR(
      measurement_from_json(j, where, m,
                            {"device_uuid", "problem_key", "config_key", "status", "template_hash",
                             "nvrtc_version", "timestamp"}));
  if (format == 1) SSMTUNE_RETURN_IF_ERROR(add_legacy_out_error(j, where, m));
  m.problem_key = qualified_key(m.problem_key);
  SSMTUNE_RETURN_IF_ERROR(check_measurement(m, where));
  return m;
}

json best_json(const BestEntry& b) {
  return {{"family", b.family},
          {"device_uuid", b.device_uuid},
          {"problem_key", b.problem_key},
          {"config_key", b.config_key},
          {"median_ms", json_number(b.median_ms)},
          {"spread_ms", json_number(b.spread_ms)},
          {"rel_l2", json_number(b.rel_l2)},
          {"template_hash", b.template_hash},
          {"driver_version", b.driver_version},
          {"nvrtc_version", b.nvrtc_version},
          {"timestamp", b.timestamp},
          {"rule", b.rule}};
}

Result<BestEntry> parse_best(const json& j, const std::string& where) {
  Reader r(j, where);
  BestEntry b;
  b.family = r.text("family", false);
  b.device_uuid = r.text("device_uuid");
  b.problem_key = qualified_key(r.text("problem_key"));
  b.config_key = r.text("config_key");
  b.median_ms = r.number("median_ms");
  b.spread_ms = r.number("spread_ms");
  b.rel_l2 = r.number("rel_l2");
  b.template_hash = r.text("template_hash");
  b.driver_version = r.int32("driver_version");
  b.nvrtc_version = r.text("nvrtc_version");
  b.timestamp = r.integer("timestamp", true);
  b.rule = r.text("rule", false);
  if (!r.status().is_ok()) return r.status();
  SSMTUNE_RETURN_IF_ERROR(check_best_entry(b, where));
  return b;
}

// The array `name` of the export (absent: empty).
Result<const json*> section(const json& j, const char* name) {
  static const json kEmpty = json::array();
  auto it = j.find(name);
  if (it == j.end()) return &kEmpty;
  if (!it->is_array()) return Status::invalid_argument(std::string(name) + ": expected an array");
  return &*it;
}

}  // namespace

Result<json> TuningDb::export_json() {
  json out = {{"application", "ssmtune"},
              {"format", kExportFormat},
              {"schema_version", kSchemaVersion},
              {"exported_at", int64_t{std::time(nullptr)}}};
  // One read transaction: a consistent snapshot while others write.
  SSMTUNE_ASSIGN_OR_RETURN(Transaction tx, Transaction::begin(c_, Transaction::Kind::kDeferred));
  SSMTUNE_ASSIGN_OR_RETURN(auto devs, devices());
  out["devices"] = json::array();
  for (const auto& d : devs) out["devices"].push_back(device_json(d.device));
  SSMTUNE_ASSIGN_OR_RETURN(auto ms, measurements());
  out["measurements"] = json::array();
  for (const auto& m : ms) out["measurements"].push_back(to_json(m));
  SSMTUNE_ASSIGN_OR_RETURN(auto best, list_best(Versions{}));
  out["best"] = json::array();
  for (const auto& b : best) out["best"].push_back(best_json(b));
  return out;
}

Result<ImportReport> TuningDb::import_json(const json& j, MergePolicy policy) {
  // (No json::value(): it throws when "application" is not a string.)
  if (!j.is_object() || !j.contains("application") || j["application"] != "ssmtune")
    return Status::invalid_argument(
        "not an ssmtune export (expected a JSON object with \"application\": \"ssmtune\")");
  if (!j.contains("format") || !j["format"].is_number_integer() ||
      j["format"].get<int64_t>() > kExportFormat || j["format"].get<int64_t>() < 1)
    return Status::unsupported("unknown export format " +
                               (j.contains("format") ? j["format"].dump() : std::string("(none)")) +
                               "; this build reads formats 1 to " + std::to_string(kExportFormat));
  const int64_t format = j["format"].get<int64_t>();
  // Parse everything before writing anything.
  std::vector<DeviceRecord> devs;
  std::vector<Measurement> ms;
  std::vector<BestEntry> bests;
  SSMTUNE_ASSIGN_OR_RETURN(const json* jd, section(j, "devices"));
  for (size_t i = 0; i < jd->size(); ++i) {
    SSMTUNE_ASSIGN_OR_RETURN(auto d, parse_device((*jd)[i], "devices[" + std::to_string(i) + "]"));
    devs.push_back(std::move(d));
  }
  SSMTUNE_ASSIGN_OR_RETURN(const json* jm, section(j, "measurements"));
  for (size_t i = 0; i < jm->size(); ++i) {
    SSMTUNE_ASSIGN_OR_RETURN(
        auto m, parse_measurement((*jm)[i], "measurements[" + std::to_string(i) + "]", format));
    ms.push_back(std::move(m));
  }
  SSMTUNE_ASSIGN_OR_RETURN(const json* jb, section(j, "best"));
  for (size_t i = 0; i < jb->size(); ++i) {
    SSMTUNE_ASSIGN_OR_RETURN(auto b, parse_best((*jb)[i], "best[" + std::to_string(i) + "]"));
    bests.push_back(std::move(b));
  }

  ImportReport report;
  Status s = write_transaction([&]() -> Status {
    report = {};
    for (size_t i = 0; i < devs.size(); ++i) {
      SSMTUNE_ASSIGN_OR_RETURN(auto mine, device(devs[i].uuid));
      if (mine && policy == MergePolicy::kNewerWins) continue;  // our own row knows better
      if (devs[i].uuid.empty())
        return Status::invalid_argument("devices[" + std::to_string(i) + "]: empty uuid");
      SSMTUNE_RETURN_IF_ERROR(write_device(devs[i]));
      if (!mine) ++report.devices_added;
    }
    SSMTUNE_ASSIGN_OR_RETURN(
        Statement dup,
        c_.prepare("SELECT 1 FROM measurements WHERE device_uuid = ?1 AND problem_key = ?2 AND "
                   "config_key = ?3 AND timestamp = ?4 AND template_hash = ?5 LIMIT 1"));
    for (size_t i = 0; i < ms.size(); ++i) {
      const Measurement& m = ms[i];
      SSMTUNE_RETURN_IF_ERROR(dup.reset());
      SSMTUNE_RETURN_IF_ERROR(dup.bind(1, m.device_uuid));
      SSMTUNE_RETURN_IF_ERROR(dup.bind(2, m.problem_key));
      SSMTUNE_RETURN_IF_ERROR(dup.bind(3, m.config_key));
      SSMTUNE_RETURN_IF_ERROR(dup.bind(4, m.timestamp));
      SSMTUNE_RETURN_IF_ERROR(dup.bind(5, m.template_hash));
      SSMTUNE_ASSIGN_OR_RETURN(bool present, dup.step());
      if (present) {
        ++report.measurements_skipped;
        continue;
      }
      SSMTUNE_RETURN_IF_ERROR(
          insert_measurement(m).with_context("measurements[" + std::to_string(i) + "]"));
      ++report.measurements_added;
    }
    for (size_t i = 0; i < bests.size(); ++i) {
      const BestEntry& b = bests[i];
      SSMTUNE_ASSIGN_OR_RETURN(auto mine, best(b.device_uuid, b.problem_key, Versions{}));
      if (mine && policy == MergePolicy::kNewerWins && mine->timestamp >= b.timestamp) {
        ++report.best_kept;
        continue;
      }
      SSMTUNE_RETURN_IF_ERROR(insert_best(b).with_context("best[" + std::to_string(i) + "]"));
      ++(mine ? report.best_replaced : report.best_added);
    }
    return Status::ok();
  });
  SSMTUNE_RETURN_IF_ERROR(s);
  return report;
}

}  // namespace ssmtune::cache
