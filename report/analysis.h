// What the plots compute from the model: which measurements count, the one
// measurement standing for each config, the Pareto front of time against
// error, failure reasons grouped, the tuning curve and heatmap cells.
// Pure functions over report::Model values.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "report/report_model.h"

namespace ssmtune::report {

// Selectable: ok, verdict neither outside nor defect, every element written
// and finite, error within a positive budget.
bool eligible(const Measurement& m);

// The measurements of one (device, problem), current ones only, one per
// config: the most careful (most repeats; the newer on a tie), as the tuner
// selects from. In config-key order.
std::vector<const Measurement*> per_config(const std::vector<const Measurement*>& ms);

struct XY {
  double x = 0;
  double y = 0;
};
// Indices of the points no other point beats in both x and y (both
// minimized; of equal points the first), ordered by x.
std::vector<size_t> pareto_front(const std::vector<XY>& pts);

// A failure's reason with the numbers left out, so that "smem 70000 > 49152"
// and "smem 80000 > 49152" count together: "pruned: smem # > #".
std::string reason_class(const std::string& status, const std::string& detail);
// Not-ok measurements counted by reason class, most frequent first.
std::vector<std::pair<std::string, int>> failure_counts(const std::vector<const Measurement*>& ms);

// A pause between two measurements longer than this (a resumed tune, days
// later) counts as no time on the tuning curve.
inline constexpr double kCurveMaxGapS = 600;

struct CurvePoint {
  double elapsed_s = 0;  // since the first measurement, pauses over kCurveMaxGapS left out
  double best_ms = 0;    // best eligible time up to then
  std::string config;
};
// Best-so-far against elapsed time from the measurements' timestamps (oldest
// first in, one point per improvement out, plus a last point at the end).
std::vector<CurvePoint> tuning_curve(const std::vector<const Measurement*>& ms);

struct HeatCell {
  int chunk = 0;
  int d_step = 0;
  double best_ms = 0;  // fastest eligible config in the cell
  std::string config;
  int configs = 0;  // eligible configs in the cell
};
// Eligible measurements grouped by algorithm, then by (K, D).
std::map<std::string, std::vector<HeatCell>> heat_cells(const std::string& family,
                                                        const std::vector<const Measurement*>& ms);

}  // namespace ssmtune::report
