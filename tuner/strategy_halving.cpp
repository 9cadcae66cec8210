// Successive halving: cheap timing of many, careful timing of the few best.
#include <algorithm>
#include <cmath>

#include "tuner/strategy.h"

namespace ssmtune {

std::vector<Trial> run_halving(const std::vector<std::string>& candidates, const MeasureFn& measure,
                               const Budget& budget, int eta) {
  BudgetClock clock(budget);
  std::vector<Trial> all;
  std::vector<std::string> rung_configs = candidates;
  eta = std::max(2, eta);
  // Fidelities grow geometrically from cheap to careful.
  const int rungs =
      std::max(1, static_cast<int>(
                      std::ceil(std::log(std::max<size_t>(1, candidates.size())) / std::log(eta))));
  bool out_of_budget = false;
  for (int rung = 0; rung < rungs + 1 && !rung_configs.empty(); ++rung) {
    // Once the budget is spent, the survivors go straight to the final rung.
    const bool last = rung == rungs || rung_configs.size() <= 2 || out_of_budget;
    const double t = last ? budget.careful_ms
                          : budget.cheap_ms * std::pow(budget.careful_ms / budget.cheap_ms,
                                                       static_cast<double>(rung) / rungs);
    std::vector<Trial> results;
    bool stopped = false;
    for (const auto& c : rung_configs) {
      // A caller's stop ends everything, the final measurements included.
      if (budget.stop && budget.stop()) {
        stopped = true;
        break;
      }
      // The budget cuts a first look short, never the final measurements.
      if (!last && clock.exhausted(static_cast<int>(all.size() + results.size()))) {
        out_of_budget = true;
        break;
      }
      results.push_back({c, measure(c, t), t, rung});
    }
    all.insert(all.end(), results.begin(), results.end());
    if (last || stopped) break;
    std::vector<Trial> usable;
    for (const auto& r : results)
      if (r.result.usable) usable.push_back(r);
    std::sort(usable.begin(), usable.end(), [](const Trial& a, const Trial& b) {
      return a.result.median_ms < b.result.median_ms;
    });
    const size_t keep = std::min(usable.size(), (usable.size() + eta - 1) / eta);
    rung_configs.clear();
    for (size_t i = 0; i < keep; ++i) rung_configs.push_back(usable[i].config);
  }
  return all;
}

}  // namespace ssmtune
