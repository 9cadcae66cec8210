// Choosing the best config for one (device, problem) from its measurements:
// the fastest that is accurate enough, where a difference smaller than the
// run-to-run spread is a tie that goes to the more accurate config; every
// other measurement gets the reason it lost. A pure function; thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tuner/records.h"

namespace ssmtune {

struct Selection {
  bool found = false;  // false when no measurement is selectable
  Measurement best;    // valid when found
  std::string rule;    // why best won, e.g. "fastest inside budget (0.112 ms, ...)"
  // Every other measurement with why it lost: eligible ones fastest first,
  // then the rest in input order.
  std::vector<std::pair<Measurement, std::string>> others;
};

// Eligible: status ok, verdict neither "outside" nor "defect", no NaN/Inf or
// unwritten output, and rel_l2 <= the budget: `max_error` when > 0, else
// the measurement's own error_budget (a measurement without one is not
// eligible). Since the verdict still applies, a max_error looser than a
// measurement's own budget cannot admit what its scoring rejected: in
// effect max_error only tightens.
// Among the eligible, the fastest by median; a candidate whose median is
// within the larger of its and the fastest's spread_ms of the fastest ties
// with it, and the tie goes to the lowest rel_l2 (then the lower median,
// then the config key, so the choice is deterministic).
// The caller filters out stale measurements (other driver, NVRTC or
// template version) and passes one measurement per config.
Selection select_best(const std::vector<Measurement>& ms, double max_error);

// Numbers as the reasons print them: "0.112" (ms), "3.1e-6".
std::string format_ms(double ms);
std::string format_error(double e);

}  // namespace ssmtune
