// `ssmtune db explain` (why a config is the selected one for a problem)
// and `ssmtune db diff` (best configs and times of two databases or two
// devices, problem by problem).
#include <iostream>
#include <map>
#include <set>

#include "cache/keys.h"
#include "cli/commands.h"
#include "cli/db_support.h"
#include "cli/option_checks.h"
#include "report/diff.h"
#include "report/report_data.h"
#include "tuner/selection.h"

namespace ssmtune::cli {
namespace {

// The one device `problem` was measured on, or an error asking for --device.
Result<std::string> only_device(const std::vector<Measurement>& ms, const std::string& problem) {
  std::set<std::string> devices;
  for (const auto& m : ms) devices.insert(m.device_uuid);
  if (devices.empty()) return Status::not_found("no measurements of " + problem);
  if (devices.size() > 1) {
    std::string list;
    for (const auto& d : devices) list += (list.empty() ? "" : ", ") + d;
    return Status::invalid_argument(problem + " was measured on " + std::to_string(devices.size()) +
                                    " devices; pick one with --device (" + list + ")");
  }
  return *devices.begin();
}

// The newest measurement of each config (a re-tune supersedes).
std::vector<Measurement> newest_per_config(const std::vector<Measurement>& ms) {
  std::map<std::string, const Measurement*> newest;
  for (const auto& m : ms) {  // oldest first: later ones win
    newest[m.config_key] = &m;
  }
  std::vector<Measurement> out;
  for (const auto& m : ms)
    if (newest[m.config_key] == &m) out.push_back(m);
  return out;
}

struct ExplainArgs {
  DbOptions db;
  VersionOptions versions;
  std::string problem, device;
  double max_error = 0;
};

void explain(const ExplainArgs& a) {
  const char* name = "db explain";
  auto fmt = parse_format(a.db.format);
  if (!report(name, fmt.status())) return;
  if (a.problem.empty()) {
    report(name, Status::invalid_argument("--problem KEY is required"));
    return;
  }
  auto v = current_versions(a.versions);
  if (!report(name, v.status())) return;
  auto tdb = open_for_read(a.db.db);
  if (!report(name, tdb.status())) return;
  if (!report(name, check_problem(*tdb, a.problem))) return;
  const std::string problem = cache::qualified_key(a.problem);
  std::string device = a.device;
  if (device.empty()) {
    auto all = tdb->measurements({.problem_key = problem});
    if (!report(name, all.status())) return;
    auto d = only_device(*all, problem);
    if (!report(name, d.status())) return;
    device = *d;
  } else if (!report(name, check_device(*tdb, device))) {
    return;
  }
  auto dev = tdb->device(device);
  if (!report(name, dev.status())) return;
  auto all = tdb->measurements({.device_uuid = device, .problem_key = problem});
  if (!report(name, all.status())) return;
  MeasurementFilter current{.device_uuid = device, .problem_key = problem};
  current.current = *v;
  auto ms = tdb->measurements(current);
  if (!report(name, ms.status())) return;
  const size_t stale = all->size() - ms->size();
  const auto candidates = newest_per_config(*ms);
  Selection sel = select_best(candidates, a.max_error);
  if (candidates.empty() && stale > 0)
    sel.rule = "no current measurements: " + std::to_string(stale) +
               " stale ones left out (re-tune under " + describe(*v) + ")";
  auto stored = tdb->best(device, problem, *v);
  if (!report(name, stored.status())) return;

  const auto outputs = output_names(candidates);
  std::vector<std::string> columns = {"rank",   "config", "status",  "median_ms", "spread_ms",
                                      "rel_l2", "budget", "verdict", "outcome",   "reason"};
  for (auto& c : error_column_names(outputs, *fmt)) columns.push_back(c);
  Table t(columns);
  int rank = 0;
  auto row = [&](const Measurement& m, const char* outcome, const std::string& why) {
    std::vector<nlohmann::json> cells = {++rank,
                                         m.config_key,
                                         to_string(m.status),
                                         m.median_ms,
                                         m.spread_ms,
                                         m.rel_l2,
                                         a.max_error > 0 ? a.max_error : m.error_budget,
                                         m.verdict,
                                         outcome,
                                         why};
    add_error_cells(cells, m, outputs, *fmt);
    t.add_row(std::move(cells));
  };
  if (sel.found) row(sel.best, "selected", sel.rule);
  for (const auto& [m, why] : sel.others) row(m, "lost", why);

  std::string stored_text = "none";
  bool agrees = false;
  if (stored->has_value()) {
    const BestEntry& b = **stored;
    agrees = sel.found && b.config_key == sel.best.config_key;
    stored_text = b.config_key + " (" + b.rule + "; " + iso_time(b.timestamp) +
                  (b.stale ? "; stale: " + stale_reason(b.driver_version, b.nvrtc_version,
                                                        b.template_hash, *v)
                           : "") +
                  ")" +
                  (agrees      ? ": agrees"
                   : sel.found ? ": differs from the selection"
                               : "");
  }
  const std::string device_name = (*dev) ? (*dev)->name : "";
  if (*fmt == Format::kJson) {
    nlohmann::json out = {{"problem", problem},
                          {"device", device},
                          {"device_name", device_name},
                          {"versions", describe(*v)},
                          {"found", sel.found},
                          {"selected", sel.found ? nlohmann::json(sel.best.config_key) : nullptr},
                          {"rule", sel.rule},
                          {"stale_left_out", stale},
                          {"stored_best", nullptr},
                          {"stored_agrees", agrees},
                          {"candidates", table_json(t)}};
    if (stored->has_value()) {
      const BestEntry& b = **stored;
      out["stored_best"] = {
          {"config", b.config_key}, {"median_ms", b.median_ms},      {"rel_l2", b.rel_l2},
          {"rule", b.rule},         {"time", iso_time(b.timestamp)}, {"stale", b.stale}};
    }
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
  if (*fmt == Format::kTable) {
    std::cout << "problem:  " << problem << "\n"
              << "device:   " << device_name << " (" << device << ")\n"
              << "selected: "
              << (sel.found ? sel.best.config_key + ": " + sel.rule : "none: " + sel.rule) << "\n"
              << "stored:   " << stored_text << "\n"
              << "current:  " << describe(*v) << "; " << candidates.size() << " configs compared, "
              << stale << " stale measurements left out\n\n";
  }
  t.print(std::cout, *fmt);
}

struct DiffArgs {
  DbOptions db;
  VersionOptions versions;
  std::string against, device, against_device;
  std::vector<std::string> databases;  // positional: A B, or B (A from --db)
};

struct Side {
  std::string label;                      // "A: NVIDIA H200 (GPU-...) in a.db"
  std::map<std::string, BestEntry> best;  // by problem
};

Result<Side> load_side(cache::TuningDb& db, const std::string& device_flag, const Versions& v,
                       const char* which) {
  std::string device = device_flag;
  if (device.empty()) {
    SSMTUNE_ASSIGN_OR_RETURN(auto all, db.list_best(v));
    std::set<std::string> devices;
    for (const auto& b : all) devices.insert(b.device_uuid);
    if (devices.empty())
      return Status::not_found(std::string(which) + ": " + db.path() + " has no best entries");
    if (devices.size() > 1)
      return Status::invalid_argument(std::string(which) + ": " + db.path() + " holds " +
                                      std::to_string(devices.size()) + " devices; pick one with " +
                                      (which[0] == 'A' ? "--device" : "--against-device"));
    device = *devices.begin();
  } else {
    SSMTUNE_RETURN_IF_ERROR(check_device(db, device));
  }
  SSMTUNE_ASSIGN_OR_RETURN(auto dev, db.device(device));
  SSMTUNE_ASSIGN_OR_RETURN(auto entries, db.list_best(v, device));
  Side s;
  s.label =
      std::string(which) + ": " + (dev ? dev->name : "") + " (" + device + ") in " + db.path();
  for (auto& b : entries) s.best[b.problem_key] = std::move(b);
  return s;
}

// Two databases per device class (GPU name) and problem, every device of each.
void diff_by_class(const std::string& path_a, const std::string& path_b, const Versions& v,
                   Format fmt) {
  const char* name = "db diff";
  report::Model models[2];
  const std::string paths[2] = {path_a, path_b};
  for (int i = 0; i < 2; ++i) {
    auto db = open_for_read(paths[i]);
    if (!report(name, db.status())) return;
    auto m = report::load_model(*db, v, describe(v));
    if (!report(name, m.status())) return;
    models[i] = std::move(*m);
  }
  const auto rows = report::diff_models(models[0], models[1]);
  Table t({"device", "problem", "change", "config_a", "ms_a", "config_b", "ms_b", "ratio_b_over_a",
           "stale"});
  for (const auto& r : rows) {
    auto num = [](double x) { return x > 0 ? nlohmann::json(x) : nlohmann::json(); };
    auto str = [](const std::string& x) {
      return x.empty() ? nlohmann::json() : nlohmann::json(x);
    };
    t.add_row({r.device, r.problem, r.change, str(r.config_a), num(r.ms_a), str(r.config_b),
               num(r.ms_b), num(r.ratio),
               std::string(r.stale_a ? "a" : "") + (r.stale_b ? "b" : "")});
  }
  if (fmt == Format::kTable) {
    const auto s = report::summarize(rows);
    std::cout << "A: " << models[0].source << "\nB: " << models[1].source << "\n"
              << s.changed << " changed config, " << s.same << " same, " << s.added
              << " added in B, " << s.removed << " removed in B (ratio: B ms / A ms)\n\n";
  }
  t.print(std::cout, fmt);
}

void diff(const DiffArgs& a) {
  const char* name = "db diff";
  auto fmt = parse_format(a.db.format);
  if (!report(name, fmt.status())) return;
  if (a.databases.size() > 2) {
    report(name, Status::invalid_argument("give at most two databases (A B)"));
    return;
  }
  // Positional databases: "A B", or "B" with A from --db.
  std::string db_a = a.db.db, against = a.against;
  if (!a.databases.empty()) {
    if (!against.empty()) {
      report(name,
             Status::invalid_argument("give the other database once: positional or --against"));
      return;
    }
    against = a.databases.back();
    if (a.databases.size() == 2) db_a = a.databases.front();
  }
  if (!against.empty() && a.device.empty() && a.against_device.empty()) {
    auto v = current_versions(a.versions);
    if (!report(name, v.status())) return;
    diff_by_class(db_a, against, *v, *fmt);
    return;
  }
  if (against.empty() && a.against_device.empty()) {
    report(name, Status::invalid_argument(
                     "diff compares two databases (--against FILE) or two devices (--device "
                     "UUID --against-device UUID)"));
    return;
  }
  auto v = current_versions(a.versions);
  if (!report(name, v.status())) return;
  auto da = open_for_read(db_a);
  if (!report(name, da.status())) return;
  auto sa = load_side(*da, a.device, *v, "A");
  if (!report(name, sa.status())) return;
  Result<Side> sb = Status::internal("unset");
  if (against.empty()) {
    sb = load_side(*da, a.against_device, *v, "B");
  } else {
    auto db = open_for_read(against);
    if (!report(name, db.status())) return;
    sb = load_side(*db, a.against_device, *v, "B");
  }
  if (!report(name, sb.status())) return;
  std::set<std::string> problems;
  for (const auto& [k, b] : sa->best) problems.insert(k);
  for (const auto& [k, b] : sb->best) problems.insert(k);
  Table t({"problem", "config_a", "ms_a", "config_b", "ms_b", "ratio_b_over_a", "same_config",
           "stale"});
  for (const auto& p : problems) {
    auto ia = sa->best.find(p), ib = sb->best.find(p);
    const bool has_a = ia != sa->best.end(), has_b = ib != sb->best.end();
    nlohmann::json ratio = nullptr;
    if (has_a && has_b && ia->second.median_ms > 0)
      ratio = ib->second.median_ms / ia->second.median_ms;
    std::string stale;
    if (has_a && ia->second.stale) stale += "a";
    if (has_b && ib->second.stale) stale += "b";
    t.add_row({p, has_a ? nlohmann::json(ia->second.config_key) : nullptr,
               has_a ? nlohmann::json(ia->second.median_ms) : nullptr,
               has_b ? nlohmann::json(ib->second.config_key) : nullptr,
               has_b ? nlohmann::json(ib->second.median_ms) : nullptr, ratio,
               has_a && has_b && ia->second.config_key == ib->second.config_key, stale});
  }
  if (*fmt == Format::kTable) std::cout << sa->label << "\n" << sb->label << "\n\n";
  t.print(std::cout, *fmt);
}

}  // namespace

void add_db_explain(CLI::App& db) {
  auto* cmd = db.add_subcommand(
      "explain", "Say which config is selected for a problem and why, with the runners-up");
  auto a = std::make_shared<ExplainArgs>();
  cmd->add_option("--problem", a->problem, "problem key (see 'ssmtune db list problems')");
  cmd->add_option("--device", a->device,
                  "device UUID (needed when the problem was measured on several)");
  cmd->add_option("--max-error", a->max_error, "rel. L2 budget (0: each measurement's own)")
      ->check(non_negative())
      ->capture_default_str();
  add_db_options(cmd, a->db);
  add_version_options(cmd, a->versions);
  cmd->callback([a, cmd] {
    if (no_extra_arguments(cmd, "db explain")) explain(*a);
  });
}

void add_db_diff(CLI::App& db) {
  auto* cmd = db.add_subcommand(
      "diff",
      "Compare the best configs and times of two databases (per GPU name and problem: changed, "
      "same, added, removed) or of two devices");
  auto a = std::make_shared<DiffArgs>();
  cmd->add_option("databases", a->databases,
                  "A B: the two databases (or only B, with A from --db)");
  cmd->add_option("--against", a->against, "the other database (default: the same one)");
  cmd->add_option("--device", a->device, "device of side A (needed when it holds several)");
  cmd->add_option("--against-device", a->against_device,
                  "device of side B (needed when it holds several)");
  add_db_options(cmd, a->db);
  add_version_options(cmd, a->versions);
  cmd->callback([a, cmd] {
    if (no_extra_arguments(cmd, "db diff")) diff(*a);
  });
}

}  // namespace ssmtune::cli
