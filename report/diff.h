// Two models compared problem by problem per device class (the device name:
// two H200s are one class): which problems changed config and by how much,
// which were added or removed. For `db diff` and `report --compare`.
#pragma once

#include <string>
#include <vector>

#include "report/report_model.h"

namespace ssmtune::report {

struct DiffRow {
  std::string device;   // the device class (name)
  std::string problem;  // key
  std::string change;   // same, changed, added (only in B), removed (only in A)
  std::string config_a, config_b;
  double ms_a = 0, ms_b = 0;
  double ratio = 0;  // ms_b / ms_a; 0 when either side is missing
  bool stale_a = false, stale_b = false;
};

// Per (device class, problem) the entry standing for each side: a current
// one before a stale one, then the newest. Rows by device, problem.
std::vector<DiffRow> diff_models(const Model& a, const Model& b);

struct DiffSummary {
  int same = 0, changed = 0, added = 0, removed = 0;
};
DiffSummary summarize(const std::vector<DiffRow>& rows);

}  // namespace ssmtune::report
