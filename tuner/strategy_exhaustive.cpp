// Exhaustive search, and the budget clock every strategy shares.
#include <chrono>

#include "tuner/strategy.h"

namespace ssmtune {
namespace {
double steady_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

BudgetClock::BudgetClock(const Budget& b) : budget_(b) {
  if (!budget_.clock) budget_.clock = steady_s;
  start_ = now();
}

double BudgetClock::now() const { return budget_.clock(); }

bool BudgetClock::out_of_time() const {
  return budget_.max_seconds > 0 && elapsed() >= budget_.max_seconds;
}

bool BudgetClock::stopped() const { return budget_.stop && budget_.stop(); }

bool BudgetClock::exhausted(int measured) const {
  if (budget_.max_configs > 0 && measured >= budget_.max_configs) return true;
  return stopped() || out_of_time();
}

std::vector<Trial> run_exhaustive(CandidateSource& source, const MeasureFn& measure,
                                  const Budget& budget) {
  BudgetClock clock(budget);
  std::vector<Trial> out;
  // The first config is never cut by time: a search measures something.
  auto in_time = [&] { return out.empty() || !clock.out_of_time(); };
  while (!clock.stopped() && in_time() &&
         (budget.max_configs <= 0 || static_cast<int>(out.size()) < budget.max_configs)) {
    auto c = source.next([&] { return clock.stopped() || !in_time(); });
    if (!c) break;
    out.push_back({*c, measure(*c, budget.careful_ms), budget.careful_ms, 0});
  }
  source.close();
  return out;
}

std::vector<Trial> run_exhaustive(const std::vector<std::string>& candidates,
                                  const MeasureFn& measure, const Budget& budget) {
  ListSource source(candidates);
  return run_exhaustive(source, measure, budget);
}

}  // namespace ssmtune
