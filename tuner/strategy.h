// Search strategies over candidate configs. Each strategy is one function
// (in its own file) that pulls candidates from a source (in the order it
// should meet them, each once it is ready to measure: a tuning session
// compiles while it measures), asks `measure` for timings at a fidelity
// (the timing target in ms: cheap for many, careful for few) and stops at
// its budget. Measurements are recorded by `measure`'s owner; the strategy
// only ranks. Pure logic: testable on recorded measurements and a fake clock.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ssmtune {

struct TrialResult {
  bool usable = false;  // ran and was accurate: may be selected
  double median_ms = 0;
  double spread_ms = 0;
};

// `target_ms`: how long the timing may take (the fidelity).
using MeasureFn = std::function<TrialResult(const std::string&, double target_ms)>;

struct Budget {
  int max_configs = 0;     // 0: no limit on distinct configs measured
  double max_seconds = 0;  // 0: no wall-time limit (from the strategy's start)
  // Fidelity of a first look: small, so that 100+ looks at a fast kernel fit
  // in ~20 s (with the fixed cost of a look: load, run, score, round trip).
  double cheap_ms = 4;
  double careful_ms = 150;  // fidelity of a final measurement
  // Asked before each measurement; true ends the search (a caller's cancel).
  std::function<bool()> stop;
  // Seconds, monotonic; empty: the steady clock (tests pass a fake one).
  std::function<double()> clock;
};

struct Trial {
  std::string config;
  TrialResult result;
  double target_ms = 0;
  int rung = 0;
};

// Where a strategy's candidates come from: in the order it should meet
// them, each handed out once it is ready to measure.
class CandidateSource {
 public:
  virtual ~CandidateSource() = default;
  // The next candidate; waits while none is ready but some may still come,
  // asking `give_up` now and then. nullopt when none is left or on giving up.
  virtual std::optional<std::string> next(const std::function<bool()>& give_up) = 0;
  // The strategy will pull no more (work on the rest may stop).
  virtual void close() {}
};

// A list, every candidate ready, in its order.
class ListSource final : public CandidateSource {
 public:
  explicit ListSource(std::vector<std::string> candidates) : list_(std::move(candidates)) {}
  std::optional<std::string> next(const std::function<bool()>&) override {
    if (i_ >= list_.size()) return std::nullopt;
    return list_[i_++];
  }

 private:
  std::vector<std::string> list_;
  size_t i_ = 0;
};

// Every candidate once, carefully (up to the budget).
std::vector<Trial> run_exhaustive(CandidateSource& source, const MeasureFn& measure,
                                  const Budget& budget);
std::vector<Trial> run_exhaustive(const std::vector<std::string>& candidates,
                                  const MeasureFn& measure, const Budget& budget);
// A random sample of the budget's size, carefully (the session shuffles
// before it compiles and runs run_exhaustive over the shuffled order).
std::vector<std::string> shuffled(const std::vector<std::string>& candidates, uint64_t seed);
std::vector<Trial> run_random(const std::vector<std::string>& candidates, const MeasureFn& measure,
                              const Budget& budget, uint64_t seed);
// Successive halving: first looks at the cheap fidelity, then the best 1/eta
// more carefully, until a few remain, measured at the careful fidelity.
// Under a time limit the first looks stop where the later rungs (estimated
// from the first looks' cost) still fit; a budget that runs out anyway sends
// the best two straight to the careful rung.
std::vector<Trial> run_halving(CandidateSource& source, const MeasureFn& measure,
                               const Budget& budget, int eta = 4);
std::vector<Trial> run_halving(const std::vector<std::string>& candidates, const MeasureFn& measure,
                               const Budget& budget, int eta = 4);
// Seconds the rungs after `first_looks` first looks take under `budget`,
// at `overhead_s` per measurement on top of its fidelity (halving's reserve).
double halving_later_cost(size_t first_looks, double overhead_s, const Budget& budget, int eta = 4);

// Shared budget clock for the strategies.
class BudgetClock {
 public:
  explicit BudgetClock(const Budget& b);
  double now() const;
  double elapsed() const { return now() - start_; }
  bool out_of_time() const;            // the wall-time limit passed
  bool stopped() const;                // the caller's stop
  bool exhausted(int measured) const;  // either, or max_configs measured

 private:
  Budget budget_;
  double start_;
};

}  // namespace ssmtune
