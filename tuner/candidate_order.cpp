// Candidate order from the family's first look and the store's rows.
#include "tuner/candidate_order.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace ssmtune {

std::vector<std::string> rank_candidates(const std::vector<std::string>& order,
                                         const std::string& first,
                                         const std::vector<std::vector<Measurement>>& hints) {
  const std::set<std::string> in(order.begin(), order.end());
  std::vector<std::string> out;
  std::set<std::string> placed;
  auto place = [&](const std::string& c) {
    if (in.count(c) && placed.insert(c).second) out.push_back(c);
  };
  place(first);
  std::set<std::string> failed;
  for (const auto& rows : hints) {
    // Per config its most careful row: usable ones fastest first.
    std::map<std::string, const Measurement*> best;
    for (const Measurement& m : rows) {
      auto it = best.find(m.config_key);
      if (it == best.end() || m.repeats > it->second->repeats) best[m.config_key] = &m;
    }
    std::vector<const Measurement*> ok;
    for (const auto& [k, m] : best) {
      if (m->status == MeasureStatus::kOk)
        ok.push_back(m);
      else if (m->status != MeasureStatus::kPruned)
        failed.insert(k);
    }
    std::stable_sort(ok.begin(), ok.end(), [](const Measurement* a, const Measurement* b) {
      return a->median_ms < b->median_ms;
    });
    for (const Measurement* m : ok) place(m->config_key);
  }
  for (const auto& c : order)
    if (!failed.count(c)) place(c);
  for (const auto& c : order) place(c);
  return out;
}

Result<std::vector<Measurement>> nearest_problem_rows(TuningStore& store,
                                                      const KernelFamily& family,
                                                      const FamilyProblem& problem,
                                                      const std::string& device_uuid) {
  MeasurementFilter f;
  f.family = family.name();
  f.device_uuid = device_uuid;
  f.status = MeasureStatus::kOk;
  f.limit = 20000;
  SSMTUNE_ASSIGN_OR_RETURN(auto ok_rows, store.measurements(f));
  const std::string self = problem.key();
  const std::string cls = problem.class_key();
  std::set<std::string> keys;
  for (const auto& m : ok_rows)
    if (m.problem_key != self) keys.insert(m.problem_key);
  std::string nearest;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& k : keys) {
    auto p = family.parse_problem(k);
    if (!p || (*p)->class_key() != cls) continue;
    const double d = problem.distance(**p);
    if (d < best) {
      best = d;
      nearest = k;
    }
  }
  if (nearest.empty()) return std::vector<Measurement>{};
  MeasurementFilter all;
  all.family = family.name();
  all.device_uuid = device_uuid;
  all.problem_key = nearest;
  return store.measurements(all);
}

}  // namespace ssmtune
