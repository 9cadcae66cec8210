// diff_models: best entries keyed by (device name, problem).
#include "report/diff.h"

#include <map>
#include <set>

namespace ssmtune::report {
namespace {

using Key = std::pair<std::string, std::string>;  // device name, problem

std::map<Key, const BestEntry*> by_class(const Model& m) {
  std::map<Key, const BestEntry*> out;
  for (const auto& b : m.best) {
    const Device* d = m.device(b.device_uuid);
    const Key k{d ? d->name : b.device_uuid, b.problem_key};
    auto it = out.find(k);
    if (it == out.end() || (it->second->stale && !b.stale) ||
        (it->second->stale == b.stale && b.timestamp > it->second->timestamp))
      out[k] = &b;
  }
  return out;
}

}  // namespace

std::vector<DiffRow> diff_models(const Model& a, const Model& b) {
  const auto ea = by_class(a), eb = by_class(b);
  std::set<Key> keys;
  for (const auto& [k, e] : ea) keys.insert(k);
  for (const auto& [k, e] : eb) keys.insert(k);
  std::vector<DiffRow> out;
  for (const Key& k : keys) {
    DiffRow r;
    r.device = k.first;
    r.problem = k.second;
    auto ia = ea.find(k), ib = eb.find(k);
    if (ia != ea.end()) {
      r.config_a = ia->second->config_key;
      r.ms_a = ia->second->median_ms;
      r.stale_a = ia->second->stale;
    }
    if (ib != eb.end()) {
      r.config_b = ib->second->config_key;
      r.ms_b = ib->second->median_ms;
      r.stale_b = ib->second->stale;
    }
    if (ia == ea.end()) {
      r.change = "added";
    } else if (ib == eb.end()) {
      r.change = "removed";
    } else {
      r.change = r.config_a == r.config_b ? "same" : "changed";
      if (r.ms_a > 0) r.ratio = r.ms_b / r.ms_a;
    }
    out.push_back(r);
  }
  return out;
}

DiffSummary summarize(const std::vector<DiffRow>& rows) {
  DiffSummary s;
  for (const auto& r : rows) {
    if (r.change == "same") ++s.same;
    if (r.change == "changed") ++s.changed;
    if (r.change == "added") ++s.added;
    if (r.change == "removed") ++s.removed;
  }
  return s;
}

}  // namespace ssmtune::report
