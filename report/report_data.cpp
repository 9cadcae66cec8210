// load_model: devices, problems, measurements and best entries through the
// TuningDb API (schema v3: an error per named output), plus the heuristic
// default (from the problem's family) each problem would run untuned on each
// device.
#include "report/report_data.h"

#include <map>
#include <set>

#include "jit/compiler.h"
#include "jit/driver.h"
#include "tuner/family.h"

namespace ssmtune::report {
namespace {

// The opt-in shared memory per block of a compute capability: the database
// does not store it, and the heuristic default shrinks its chunk to fit it.
size_t max_shared_per_block(int cc_major, int cc_minor) {
  const int cc = cc_major * 10 + cc_minor;
  if (cc >= 90 && cc < 120) return 232448;  // sm_90, sm_100: 227 KiB
  if (cc == 80 || cc == 87) return 166912;  // 163 KiB
  if (cc >= 86) return 101376;              // sm_86, sm_89, sm_120: 99 KiB
  if (cc == 75) return 65536;
  if (cc >= 70) return 98304;
  return 49152;
}

}  // namespace

Result<Model> load_model(cache::TuningDb& db, const Versions& current,
                         const std::string& versions_text) {
  Model m;
  m.source = db.path();
  m.versions = versions_text;
  SSMTUNE_ASSIGN_OR_RETURN(auto devices, db.devices());
  std::map<std::string, DeviceRecord> records;
  for (const auto& d : devices) {
    records[d.device.uuid] = d.device;
    m.devices.push_back(
        {d.device.uuid, d.device.name,
         jit::arch_for(static_cast<int>(d.device.cc_major), static_cast<int>(d.device.cc_minor)),
         static_cast<int>(d.device.sm_count), jit::cuda_version_string(d.device.driver_version),
         d.device.nvrtc_version});
  }
  SSMTUNE_ASSIGN_OR_RETURN(auto problems, db.problems());
  for (const auto& p : problems) m.problems.push_back({p.key, family_of(p.key)});

  SSMTUNE_ASSIGN_OR_RETURN(auto ms, db.measurements());
  std::set<std::pair<std::string, std::string>> pairs;  // (device, problem) seen
  for (const auto& x : ms) {
    Measurement r;
    r.device_uuid = x.device_uuid;
    r.problem_key = x.problem_key;
    r.config_key = x.config_key;
    r.status = ssmtune::to_string(x.status);
    r.median_ms = x.median_ms;
    r.spread_ms = x.spread_ms;
    r.repeats = x.repeats;
    if (x.status == MeasureStatus::kOk || x.status == MeasureStatus::kInaccurate) {
      for (const auto& e : x.errors) r.errors.push_back({e.output, e.rel_l2});
      if (r.errors.empty()) r.errors.push_back({"out", x.rel_l2});
    }
    r.bad_elements = x.nan_inf + x.unwritten;
    r.budget = x.error_budget;
    r.verdict = x.verdict;
    r.detail = x.detail;
    r.timestamp = x.timestamp;
    r.registers = x.registers;
    r.stale = ssmtune::is_stale(x, current);
    m.measurements.push_back(std::move(r));
    pairs.insert({x.device_uuid, x.problem_key});
  }
  SSMTUNE_ASSIGN_OR_RETURN(auto best, db.list_best(current));
  for (const auto& b : best) {
    m.best.push_back(
        {b.device_uuid, b.problem_key, b.config_key, b.median_ms, b.spread_ms, b.rel_l2,
         b.timestamp, b.rule, b.stale,
         ssmtune::stale_reason(b.driver_version, b.nvrtc_version, b.template_hash, current)});
    pairs.insert({b.device_uuid, b.problem_key});
  }

  for (const auto& [uuid, key] : pairs) {
    auto dev = records.find(uuid);
    if (dev == records.end()) continue;
    auto p = parse_any_problem(key);
    if (!p) continue;
    jit::DeviceInfo info;
    info.cc_major = static_cast<int>(dev->second.cc_major);
    info.cc_minor = static_cast<int>(dev->second.cc_minor);
    info.sm_count = static_cast<int>(dev->second.sm_count);
    info.max_shared_per_block = max_shared_per_block(info.cc_major, info.cc_minor);
    m.defaults.push_back({uuid, key, p->family->heuristic_default(*p->problem, info).config});
  }
  return m;
}

}  // namespace ssmtune::report
