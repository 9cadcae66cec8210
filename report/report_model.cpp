// Model lookups, the selection by GPU / family / problem, and config axes.
#include "report/report_model.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "tuner/fwd/config.h"

namespace ssmtune::report {

double Measurement::error() const {
  double e = 0;
  for (const auto& o : errors) e = std::max(e, o.rel_l2);
  return e;
}

const Device* Model::device(const std::string& uuid) const {
  for (const auto& d : devices)
    if (d.uuid == uuid) return &d;
  return nullptr;
}

const DefaultConfig* Model::default_config(const std::string& uuid,
                                           const std::string& problem) const {
  for (const auto& d : defaults)
    if (d.device_uuid == uuid && d.problem_key == problem) return &d;
  return nullptr;
}

bool Model::stale_only() const {
  if (empty()) return false;
  for (const auto& m : measurements)
    if (!m.stale) return false;
  for (const auto& b : best)
    if (!b.stale) return false;
  return true;
}

std::string family_of(const std::string& problem_key) {
  const auto colon = problem_key.find(':');
  return colon == std::string::npos ? "fwd" : problem_key.substr(0, colon);
}

namespace {

bool selected(const std::vector<std::string>& list, const std::string& a,
              const std::string& b = "") {
  if (list.empty()) return true;
  return std::find(list.begin(), list.end(), a) != list.end() ||
         (!b.empty() && std::find(list.begin(), list.end(), b) != list.end());
}

// The number after `tag` in one of the dot-separated fields ("K64" -> 64), or 0.
int token(const std::string& key, char tag) {
  size_t start = 0;
  while (start <= key.size()) {
    size_t end = key.find('.', start);
    if (end == std::string::npos) end = key.size();
    const std::string f = key.substr(start, end - start);
    if (f.size() > 1 && f[0] == tag && f.find_first_not_of("0123456789", 1) == std::string::npos)
      return std::atoi(f.c_str() + 1);
    start = end + 1;
  }
  return 0;
}

}  // namespace

Model select(const Model& m, const Selection& s) {
  Model out;
  out.source = m.source;
  out.versions = m.versions;
  std::set<std::string> devices, problems;
  for (const auto& d : m.devices)
    if (selected(s.gpus, d.uuid, d.name)) {
      out.devices.push_back(d);
      devices.insert(d.uuid);
    }
  for (const auto& p : m.problems)
    if (selected(s.families, p.family) && selected(s.problems, p.key)) {
      out.problems.push_back(p);
      problems.insert(p.key);
    }
  auto keep = [&](const std::string& uuid, const std::string& problem) {
    return devices.count(uuid) > 0 && problems.count(problem) > 0;
  };
  for (const auto& x : m.measurements)
    if (keep(x.device_uuid, x.problem_key)) out.measurements.push_back(x);
  for (const auto& x : m.best)
    if (keep(x.device_uuid, x.problem_key)) out.best.push_back(x);
  for (const auto& x : m.defaults)
    if (keep(x.device_uuid, x.problem_key)) out.defaults.push_back(x);
  return out;
}

ConfigAxes config_axes(const std::string& family, const std::string& config_key) {
  ConfigAxes a;
  if (family == "fwd") {
    auto c = FwdConfig::from_key(config_key);
    if (c) {
      a.ok = true;
      a.algo = to_string(c->algo);
      a.chunk = c->chunk;
      a.d_step = c->d_step;
      return a;
    }
  }
  a.algo = config_key.substr(0, config_key.find('.'));
  a.chunk = token(config_key, 'K');
  a.d_step = token(config_key, 'D');
  a.ok = !a.algo.empty() && a.chunk > 0 && a.d_step > 0;
  return a;
}

}  // namespace ssmtune::report
