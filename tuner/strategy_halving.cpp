// Successive halving: cheap first looks at many, careful timing of the few
// best; under a time limit the first looks leave room for the later rungs.
#include <algorithm>
#include <cmath>
#include <vector>

#include "tuner/strategy.h"

namespace ssmtune {
namespace {

// The rungs after `first_looks` first looks: fidelities grow geometrically
// from cheap to careful.
int later_rungs(size_t first_looks, int eta) {
  return std::max(
      1, static_cast<int>(std::ceil(std::log(std::max<size_t>(1, first_looks)) / std::log(eta))));
}

double fidelity(const Budget& b, int rung, int rungs, bool last) {
  if (last) return b.careful_ms;
  return b.cheap_ms * std::pow(b.careful_ms / b.cheap_ms, static_cast<double>(rung) / rungs);
}

size_t survivors(size_t n, int eta) { return (n + eta - 1) / eta; }

// The few that go straight to the careful rung when the budget is spent.
constexpr size_t kFinalWhenOut = 2;

}  // namespace

double halving_later_cost(size_t first_looks, double overhead_s, const Budget& budget, int eta) {
  eta = std::max(2, eta);
  const int rungs = later_rungs(first_looks, eta);
  size_t n = first_looks;
  double s = 0;
  for (int rung = 1; rung <= rungs && n > 0; ++rung) {
    n = survivors(n, eta);
    const bool last = rung == rungs || n <= 2;
    s += static_cast<double>(n) * (overhead_s + fidelity(budget, rung, rungs, last) / 1e3);
    if (last) break;
  }
  return s;
}

std::vector<Trial> run_halving(CandidateSource& source, const MeasureFn& measure,
                               const Budget& budget, int eta) {
  eta = std::max(2, eta);
  BudgetClock clock(budget);
  std::vector<Trial> all;
  // Rung 0: first looks, in the source's order, as candidates become ready.
  // The time each first look took (not waiting for candidates); the median
  // stands for them, so a slow first one or a worker restarted after a fault
  // does not shrink the first looks.
  std::vector<double> look_s;
  auto fits = [&]() {
    // One more first look and the later rungs still fit in the time limit.
    if (budget.max_seconds <= 0 || all.empty()) return true;
    std::vector<double> v = look_s;
    const size_t mid = (v.size() - 1) / 2;  // the lower median
    std::nth_element(v.begin(), v.begin() + mid, v.end());
    const double per = v[mid];
    const double overhead = std::max(0.0, per - budget.cheap_ms / 1e3);
    return clock.elapsed() + per + halving_later_cost(all.size() + 1, overhead, budget, eta) <=
           budget.max_seconds;
  };
  // The first look (the default) is never cut by time: a tune measures something.
  auto in_time = [&] { return all.empty() || (!clock.out_of_time() && fits()); };
  while (!clock.stopped() && in_time() &&
         (budget.max_configs <= 0 || static_cast<int>(all.size()) < budget.max_configs)) {
    auto c = source.next([&] { return clock.stopped() || !in_time(); });
    if (!c) break;
    const double t0 = clock.now();
    TrialResult r = measure(*c, budget.cheap_ms);
    look_s.push_back(clock.now() - t0);
    all.push_back({*c, r, budget.cheap_ms, 0});
  }
  source.close();
  if (clock.stopped()) return all;

  // Later rungs over the survivors, which are all compiled already.
  const int rungs = later_rungs(all.size(), eta);
  std::vector<Trial> prev = all;
  for (int rung = 1; rung <= rungs; ++rung) {
    std::vector<Trial> usable;
    for (const auto& r : prev)
      if (r.result.usable) usable.push_back(r);
    if (usable.empty()) break;
    std::stable_sort(usable.begin(), usable.end(), [](const Trial& a, const Trial& b) {
      return a.result.median_ms < b.result.median_ms;
    });
    size_t keep = std::min(usable.size(), survivors(usable.size(), eta));
    // Once the budget is spent, the best few go straight to the final rung.
    const bool out = clock.out_of_time();
    if (out) keep = std::min(keep, kFinalWhenOut);
    const bool last = rung == rungs || keep <= 2 || out;
    const double t = fidelity(budget, rung, rungs, last);
    std::vector<Trial> results;
    for (size_t i = 0; i < keep; ++i) {
      // A caller's stop ends everything, the final measurements included;
      // the budget cuts an intermediate rung, never the final one.
      if (clock.stopped()) {
        all.insert(all.end(), results.begin(), results.end());
        return all;
      }
      if (!last && clock.out_of_time()) break;
      results.push_back({usable[i].config, measure(usable[i].config, t), t, rung});
    }
    all.insert(all.end(), results.begin(), results.end());
    if (last) break;
    // A rung cut short: what it measured, then the rest by their earlier rank.
    for (size_t i = results.size(); i < keep; ++i) results.push_back(usable[i]);
    prev = results;
  }
  return all;
}

std::vector<Trial> run_halving(const std::vector<std::string>& candidates, const MeasureFn& measure,
                               const Budget& budget, int eta) {
  ListSource source(candidates);
  return run_halving(source, measure, budget, eta);
}

}  // namespace ssmtune
