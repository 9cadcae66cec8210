// The self-contained HTML report: one file, inline CSS and SVG, no script and
// no URL, so it opens anywhere without a network. Sections: a compare table
// (with --compare), the selected configs per GPU with their speedups, and per
// (GPU, problem) time against error, the tuning curve, failures by reason
// and a heatmap per algorithm. An empty or stale-only model says so instead.
#pragma once

#include <string>
#include <vector>

#include "report/bench_json.h"
#include "report/diff.h"
#include "report/report_model.h"

namespace ssmtune::report {

struct ReportInputs {
  const Model* model = nullptr;
  std::vector<BenchEntry> bench;  // from --bench files
  bool compare = false;           // --compare given: `diff` against `compare_source`
  std::string compare_source;
  std::vector<DiffRow> diff;
  std::string generated;  // when, for the header
};

std::string render_html(const ReportInputs& in);

}  // namespace ssmtune::report
