// Exhaustive search, and the budget clock every strategy shares.
#include <chrono>

#include "tuner/strategy.h"

namespace ssmtune {
namespace {
double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

BudgetClock::BudgetClock(const Budget& b) : budget_(b), start_(now_s()) {}

bool BudgetClock::exhausted(int measured) const {
  if (budget_.max_configs > 0 && measured >= budget_.max_configs) return true;
  if (budget_.stop && budget_.stop()) return true;
  return budget_.max_seconds > 0 && now_s() - start_ >= budget_.max_seconds;
}

std::vector<Trial> run_exhaustive(const std::vector<std::string>& candidates,
                                  const MeasureFn& measure, const Budget& budget) {
  BudgetClock clock(budget);
  std::vector<Trial> out;
  for (const auto& c : candidates) {
    if (clock.exhausted(static_cast<int>(out.size()))) break;
    out.push_back({c, measure(c, budget.careful_ms), budget.careful_ms, 0});
  }
  return out;
}

}  // namespace ssmtune
