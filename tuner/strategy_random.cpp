// Random sampling under a budget.
#include <algorithm>
#include <random>

#include "tuner/strategy.h"

namespace ssmtune {

std::vector<std::string> shuffled(const std::vector<std::string>& candidates, uint64_t seed) {
  std::vector<std::string> order = candidates;
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

std::vector<Trial> run_random(const std::vector<std::string>& candidates, const MeasureFn& measure,
                              const Budget& budget, uint64_t seed) {
  return run_exhaustive(shuffled(candidates, seed), measure, budget);
}

}  // namespace ssmtune
