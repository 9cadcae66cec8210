// Search strategies over a list of candidate configs. Each strategy is one
// function (in its own file) that asks `measure` for timings at a fidelity
// (the timing target in ms: cheap for many, careful for few) and stops at
// its budget. Measurements are recorded by `measure`'s owner; the strategy
// only ranks. Pure logic: testable on recorded measurements.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <string>

namespace ssmtune {

struct TrialResult {
  bool usable = false;  // ran and was accurate: may be selected
  double median_ms = 0;
  double spread_ms = 0;
};

// `target_ms`: how long the timing may take (the fidelity).
using MeasureFn = std::function<TrialResult(const std::string&, double target_ms)>;

struct Budget {
  int max_configs = 0;      // 0: no limit on configs measured
  double max_seconds = 0;   // 0: no wall-time limit
  double cheap_ms = 10;     // fidelity of a first look
  double careful_ms = 150;  // fidelity of a final measurement
  // Asked before each measurement; true ends the search (a caller's cancel).
  std::function<bool()> stop;
};

struct Trial {
  std::string config;
  TrialResult result;
  double target_ms = 0;
  int rung = 0;
};

// Every candidate once, carefully (up to the budget).
std::vector<Trial> run_exhaustive(const std::vector<std::string>& candidates,
                                  const MeasureFn& measure, const Budget& budget);
// A random sample of the budget's size, carefully.
std::vector<Trial> run_random(const std::vector<std::string>& candidates, const MeasureFn& measure,
                              const Budget& budget, uint64_t seed);
// Successive halving: all cheaply, then the best 1/eta more carefully,
// until a few remain, measured at the careful fidelity.
std::vector<Trial> run_halving(const std::vector<std::string>& candidates, const MeasureFn& measure,
                               const Budget& budget, int eta = 4);

// Shared budget clock for the strategies.
class BudgetClock {
 public:
  explicit BudgetClock(const Budget& b);
  bool exhausted(int measured) const;

 private:
  Budget budget_;
  double start_;
};

}  // namespace ssmtune
