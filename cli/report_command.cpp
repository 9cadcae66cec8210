// `ssmtune report`: writes the self-contained HTML report (inline SVG plots)
// of a tuning database, optionally with bench/compare.py results and a
// comparison with a second database. The work is in report/.
#include <ctime>
#include <iostream>
#include <set>

#include "cache/db_path.h"
#include "cli/commands.h"
#include "cli/db_support.h"
#include "cli/file_io.h"
#include "report/bench_json.h"
#include "report/diff.h"
#include "report/html_report.h"
#include "report/report_data.h"

namespace ssmtune::cli {
namespace {

struct ReportArgs {
  DbOptions db;
  VersionOptions versions;
  std::string output = "report.html";
  std::vector<std::string> bench, gpus, families, problems;
  std::string compare;
};

// Each --gpu / --family / --problem value must match something (a typo
// would otherwise give a silently empty report).
Status check_selection(const report::Model& m, const report::Selection& s) {
  for (const auto& g : s.gpus) {
    bool found = false;
    std::string known;
    for (const auto& d : m.devices) {
      found = found || d.uuid == g || d.name == g;
      known += (known.empty() ? "" : ", ") + d.name + " (" + d.uuid + ")";
    }
    if (!found)
      return Status::invalid_argument("--gpu '" + g + "' matches no GPU of the database (" +
                                      (known.empty() ? "none" : known) + ")");
  }
  std::set<std::string> families;
  for (const auto& p : m.problems) families.insert(p.family);
  for (const auto& f : s.families)
    if (!families.count(f)) {
      std::string known;
      for (const auto& k : families) known += (known.empty() ? "" : ", ") + k;
      return Status::invalid_argument("--family '" + f + "': no problem of that family (" +
                                      (known.empty() ? "none" : known) + ")");
    }
  for (const auto& k : s.problems) {
    bool found = false;
    for (const auto& p : m.problems) found = found || p.key == k;
    if (!found)
      return Status::invalid_argument("--problem '" + k +
                                      "' is not in the database (see 'ssmtune db list problems')");
  }
  return Status::ok();
}

Result<report::Model> load(const std::string& db_flag, const Versions& v) {
  SSMTUNE_ASSIGN_OR_RETURN(auto db, open_for_read(db_flag));
  return report::load_model(db, v, describe(v));
}

void run(const ReportArgs& a) {
  const char* name = "report";
  auto v = current_versions(a.versions);
  if (!report(name, v.status())) return;
  auto full = load(a.db.db, *v);
  if (!report(name, full.status())) return;
  const report::Selection sel{a.gpus, a.families, a.problems};
  if (!full->empty() && !report(name, check_selection(*full, sel))) return;
  const report::Model model = report::select(*full, sel);

  report::ReportInputs in;
  in.model = &model;
  for (const auto& path : a.bench) {
    auto entries = report::read_bench_json(path);
    if (!report(name, entries.status())) return;
    in.bench.insert(in.bench.end(), entries->begin(), entries->end());
  }
  report::Model other;
  if (!a.compare.empty()) {
    auto o = load(a.compare, *v);
    if (!report(name, o.status())) return;
    other = report::select(*o, sel);
    in.compare = true;
    in.compare_source = other.source;
    in.diff = report::diff_models(model, other);
  }
  in.generated = iso_time(static_cast<int64_t>(std::time(nullptr)));
  const std::string html = report::render_html(in);
  // Never over the database it was made from; a failure leaves no half file.
  auto local = local_db_path(a.db.db);
  if (!report(name, local.status())) return;
  if (!report(name, write_output_file(a.output, html, *local))) return;
  size_t plots = 0;
  for (size_t i = html.find("<svg"); i != std::string::npos; i = html.find("<svg", i + 4)) ++plots;
  std::cerr << "wrote " << a.output << ": " << plots << " plots, " << model.devices.size()
            << " GPUs, " << model.problems.size() << " problems, " << model.measurements.size()
            << " measurements"
            << (model.empty()        ? " (empty database)"
                : model.stale_only() ? " (all stale)"
                                     : "")
            << "\n";
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "report", "Write a self-contained HTML report with plots of the tuning database");
  auto a = std::make_shared<ReportArgs>();
  cmd->add_option("-o,--output", a->output, "the HTML file to write")->capture_default_str();
  cmd->add_option("--bench", a->bench,
                  "bench/compare.py JSON: speedups over mamba_ssm (repeatable)");
  cmd->add_option("--gpu", a->gpus, "only this GPU: UUID or name (repeatable)");
  cmd->add_option("--family", a->families, "only this kernel family, e.g. fwd (repeatable)");
  cmd->add_option("--problem", a->problems, "only this problem key (repeatable)");
  cmd->add_option("--compare", a->compare,
                  "a second database: which problems changed config and by how much");
  add_db_options(cmd, a->db);
  add_version_options(cmd, a->versions);
  cmd->callback([a] { run(*a); });
}

}  // namespace ssmtune::cli
