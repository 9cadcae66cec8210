// The report's four kinds of plot, each one inline <svg> string: time
// against error (Pareto front, budget, selection), a heatmap of time over
// K x D for one algorithm, the tuning curve, and speedups per GPU. Marks
// carry data-mark attributes (point, front, budget, selected, cell, step,
// improvement, bar) for the browser test.
#pragma once

#include <string>
#include <vector>

#include "report/analysis.h"

namespace ssmtune::report {

struct ScatterPoint {
  double error = 0;  // worst output's rel. L2 against fp64
  double ms = 0;
  std::string kind;  // eligible, over-budget, inaccurate, stale
  std::string config;
  bool selected = false;
};
// Log-log; errors of 0 are drawn at a floor below the smallest one. The
// Pareto front runs through the current ok points (eligible, over-budget).
std::string scatter_plot(const std::string& title, const std::vector<ScatterPoint>& pts,
                         double budget, const std::string& attrs);

// Cells colored by time over `best_ms` (the problem's fastest), capped at
// `worst_ratio`; the cell text is that ratio.
std::string heatmap_plot(const std::string& algo, const std::vector<HeatCell>& cells,
                         double best_ms, double worst_ratio, const std::string& attrs);

std::string curve_plot(const std::string& title, const std::vector<CurvePoint>& pts,
                       const std::string& attrs);

struct SpeedupRow {
  std::string label;      // the problem key
  double vs_default = 0;  // default ms / selected ms; 0: not known
  double vs_mamba = 0;    // mamba_ssm ms / ssmtune ms; 0: not known
  bool stale = false;
};
// Horizontal bars per problem, one series each, a line at 1x.
std::string speedup_plot(const std::string& title, const std::vector<SpeedupRow>& rows,
                         const std::string& attrs);

}  // namespace ssmtune::report
