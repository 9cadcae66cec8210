// `ssmtune db`: inspect and maintain the tuning database. This file holds
// the command itself and list, show, best, stale and prune; explain and
// diff are in db_explain_command.cpp, export/import/merge in
// db_transfer_command.cpp.
#include <filesystem>
#include <iostream>
#include <map>
#include <tuple>

#include "cache/db_path.h"
#include "cache/keys.h"
#include "cli/commands.h"
#include "cli/db_support.h"
#include "cli/option_checks.h"
#include "jit/compiler.h"
#include "jit/driver.h"

namespace ssmtune::cli {

void add_db_command(CLI::App& app) {
  auto* db = app.add_subcommand(
      "db", "Inspect, compare, explain, move and prune the tuning database (no GPU needed)");
  // At most one subcommand; a missing or unknown one is reported here, by
  // name, rather than as CLI11's "A subcommand is required".
  db->require_subcommand(0, 1);
  db->allow_extras();
  db->footer(
      "The database is --db FILE, else $SSMTUNE_DB, else $XDG_CACHE_HOME/ssmtune/tuning.db "
      "(~/.cache/ssmtune/tuning.db).\nEntries made under another driver, NVRTC or template "
      "version are stale: kept, but not selected until re-tuned.");
  add_db_list(*db);
  add_db_show(*db);
  add_db_best(*db);
  add_db_explain(*db);
  add_db_diff(*db);
  add_db_export(*db);
  add_db_import(*db, false);
  add_db_import(*db, true);
  add_db_prune(*db);
  add_db_stale(*db);
  add_db_migrate(*db);
  db->callback([db] {
    if (!db->get_subcommands().empty()) return;
    const auto extra = db->remaining();
    const std::string known =
        "list, show, best, explain, diff, export, import, merge, prune, stale or migrate";
    report("db", Status::invalid_argument(extra.empty() ? "give a subcommand: " + known
                                                        : "unknown subcommand '" + extra.front() +
                                                              "' (expected " + known +
                                                              "); run 'ssmtune db --help'"));
  });
}

// --- list

namespace {

Table devices_table(const std::vector<cache::DeviceSummary>& ds) {
  Table t({"uuid", "name", "arch", "sms", "driver", "nvrtc", "measurements", "problems"});
  for (const auto& d : ds)
    t.add_row({d.device.uuid, d.device.name, jit::arch_for(d.device.cc_major, d.device.cc_minor),
               d.device.sm_count, jit::cuda_version_string(d.device.driver_version),
               d.device.nvrtc_version, d.measurements, d.problems});
  return t;
}

Table problems_table(const std::vector<cache::ProblemSummary>& ps) {
  Table t({"problem", "family", "measurements", "ok", "devices", "best"});
  for (const auto& p : ps) t.add_row({p.key, p.family, p.measurements, p.ok, p.devices, p.best});
  return t;
}

}  // namespace

void add_db_list(CLI::App& db) {
  auto* cmd = db.add_subcommand("list", "List the devices and problems with their counts");
  struct Args {
    DbOptions db;
    std::string what = "all";
    std::string family;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("what", a->what, "all, devices or problems")->capture_default_str();
  add_family_option(cmd, a->family);
  add_db_options(cmd, a->db);
  cmd->callback([a, cmd] {
    const char* name = "db list";
    if (!no_extra_arguments(cmd, name)) return;
    auto fmt = parse_format(a->db.format);
    if (!report(name, fmt.status())) return;
    if (a->what != "all" && a->what != "devices" && a->what != "problems") {
      report(name, Status::invalid_argument("unknown list '" + a->what +
                                            "' (expected all, devices or problems)"));
      return;
    }
    if (a->what == "all" && *fmt == Format::kCsv) {
      report(name, Status::invalid_argument(
                       "csv holds one table: ask for 'list devices' or 'list problems'"));
      return;
    }
    auto tdb = open_for_read(a->db.db);
    if (!report(name, tdb.status())) return;
    auto ds = tdb->devices();
    if (!report(name, ds.status())) return;
    auto ps = tdb->problems(a->family);
    if (!report(name, ps.status())) return;
    const Table dt = devices_table(*ds), pt = problems_table(*ps);
    if (a->what == "devices") return dt.print(std::cout, *fmt);
    if (a->what == "problems") return pt.print(std::cout, *fmt);
    if (*fmt == Format::kJson) {
      std::cout << nlohmann::json{{"devices", table_json(dt)}, {"problems", table_json(pt)}}.dump(
                       2, ' ', false, nlohmann::json::error_handler_t::replace)
                << "\n";
      return;
    }
    std::cout << "devices (" << dt.rows() << ")\n";
    dt.print(std::cout, *fmt);
    std::cout << "\nproblems (" << pt.rows() << ")\n";
    pt.print(std::cout, *fmt);
  });
}

// --- show

void add_db_show(CLI::App& db) {
  auto* cmd =
      db.add_subcommand("show", "Show measurements, oldest first, with the error of each output");
  struct Args {
    DbOptions db;
    std::string problem, device, config, status, family;
    int64_t limit = 0;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--problem", a->problem, "only this problem key");
  add_family_option(cmd, a->family);
  cmd->add_option("--device", a->device, "only this device UUID");
  cmd->add_option("--config", a->config, "only this config key");
  cmd->add_option("--status", a->status,
                  "only this status: ok, pruned, compile_failed, launch_failed, faulted, "
                  "inaccurate");
  cmd->add_option("--limit", a->limit, "only the newest N (0: all)")
      ->check(non_negative())
      ->capture_default_str();
  add_db_options(cmd, a->db);
  cmd->callback([a, cmd] {
    const char* name = "db show";
    if (!no_extra_arguments(cmd, name)) return;
    auto fmt = parse_format(a->db.format);
    if (!report(name, fmt.status())) return;
    MeasurementFilter f{.family = a->family,
                        .device_uuid = a->device,
                        .problem_key = a->problem,
                        .config_key = a->config};
    if (!a->status.empty()) {
      auto s = parse_measure_status(a->status);
      if (!report(name, s.status())) return;
      f.status = *s;
    }
    if (a->limit < 0) {
      report(name, Status::invalid_argument("--limit must be >= 0"));
      return;
    }
    f.limit = a->limit;
    auto tdb = open_for_read(a->db.db);
    if (!report(name, tdb.status())) return;
    if (!a->problem.empty() && !report(name, check_problem(*tdb, a->problem))) return;
    if (!a->device.empty() && !report(name, check_device(*tdb, a->device))) return;
    auto ms = tdb->measurements(f);
    if (!report(name, ms.status())) return;
    const bool table = *fmt == Format::kTable;
    // The headline error (the output furthest into its budget), then each
    // output's own.
    const auto outputs = output_names(*ms);
    std::vector<std::string> columns = {"time",      "device",    "problem", "config",   "status",
                                        "median_ms", "spread_ms", "min_ms",  "repeats",  "rel_l2",
                                        "budget",    "verdict",   "nan_inf", "unwritten"};
    for (auto& c : error_column_names(outputs, *fmt)) columns.push_back(c);
    for (const char* c :
         {"registers", "spill_bytes", "shared_bytes", "template", "driver", "nvrtc", "detail"})
      columns.push_back(c);
    Table t(columns);
    for (const auto& m : *ms) {
      std::vector<nlohmann::json> row = {
          iso_time(m.timestamp), m.device_uuid, m.problem_key, m.config_key, to_string(m.status),
          m.median_ms,           m.spread_ms,   m.min_ms,      m.repeats,    m.rel_l2,
          m.error_budget,        m.verdict,     m.nan_inf,     m.unwritten};
      add_error_cells(row, m, outputs, *fmt);
      for (nlohmann::json cell :
           {nlohmann::json(m.registers), nlohmann::json(m.spill_bytes),
            nlohmann::json(m.shared_bytes),
            nlohmann::json(table ? m.template_hash.substr(0, 8) : m.template_hash),
            nlohmann::json(jit::cuda_version_string(m.driver_version)),
            nlohmann::json(m.nvrtc_version),
            nlohmann::json(table ? one_line(m.detail, 60) : m.detail)})
        row.push_back(std::move(cell));
      t.add_row(std::move(row));
    }
    t.print(std::cout, *fmt);
  });
}

// --- best

void add_db_best(CLI::App& db) {
  auto* cmd = db.add_subcommand("best", "Show the selected config per device and problem");
  struct Args {
    DbOptions db;
    VersionOptions versions;
    std::string problem, device, family;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--problem", a->problem, "only this problem key");
  cmd->add_option("--device", a->device, "only this device UUID");
  add_family_option(cmd, a->family);
  add_db_options(cmd, a->db);
  add_version_options(cmd, a->versions);
  cmd->callback([a, cmd] {
    const char* name = "db best";
    if (!no_extra_arguments(cmd, name)) return;
    auto fmt = parse_format(a->db.format);
    if (!report(name, fmt.status())) return;
    auto v = current_versions(a->versions);
    if (!report(name, v.status())) return;
    auto tdb = open_for_read(a->db.db);
    if (!report(name, tdb.status())) return;
    if (!a->problem.empty() && !report(name, check_problem(*tdb, a->problem))) return;
    if (!a->device.empty() && !report(name, check_device(*tdb, a->device))) return;
    auto best = tdb->list_best(*v, a->device, a->family);
    if (!report(name, best.status())) return;
    const std::string problem = a->problem.empty() ? "" : cache::qualified_key(a->problem);
    Table t({"device", "problem", "config", "median_ms", "spread_ms", "rel_l2", "time", "stale",
             "stale_why", "rule"});
    for (const auto& b : *best) {
      if (!problem.empty() && b.problem_key != problem) continue;
      t.add_row({b.device_uuid, b.problem_key, b.config_key, b.median_ms, b.spread_ms, b.rel_l2,
                 iso_time(b.timestamp), b.stale,
                 stale_reason(b.driver_version, b.nvrtc_version, b.template_hash, *v), b.rule});
    }
    t.print(std::cout, *fmt);
  });
}

// --- stale

void add_db_stale(CLI::App& db) {
  auto* cmd = db.add_subcommand(
      "stale", "List the entries made under another driver, NVRTC or template version");
  struct Args {
    DbOptions db;
    VersionOptions versions;
    std::string family;
  };
  auto a = std::make_shared<Args>();
  add_family_option(cmd, a->family);
  add_db_options(cmd, a->db);
  add_version_options(cmd, a->versions);
  cmd->callback([a, cmd] {
    const char* name = "db stale";
    if (!no_extra_arguments(cmd, name)) return;
    auto fmt = parse_format(a->db.format);
    if (!report(name, fmt.status())) return;
    auto v = current_versions(a->versions);
    if (!report(name, v.status())) return;
    auto tdb = open_for_read(a->db.db);
    if (!report(name, tdb.status())) return;
    auto best = tdb->list_best(*v, "", a->family);
    if (!report(name, best.status())) return;
    auto ms = tdb->measurements({.family = a->family});
    if (!report(name, ms.status())) return;
    Table t({"kind", "device", "problem", "config", "count", "driver", "nvrtc", "template", "why"});
    size_t stale_best = 0;
    for (const auto& b : *best) {
      if (!b.stale) continue;
      ++stale_best;
      t.add_row({"best", b.device_uuid, b.problem_key, b.config_key, 1,
                 jit::cuda_version_string(b.driver_version), b.nvrtc_version, b.template_hash,
                 stale_reason(b.driver_version, b.nvrtc_version, b.template_hash, *v)});
    }
    // Stale measurements grouped by device and the versions they were made under.
    std::map<std::tuple<std::string, int64_t, std::string, std::string>, int64_t> groups;
    int64_t stale_ms = 0;
    for (const auto& m : *ms)
      if (is_stale(m, *v)) {
        ++groups[{m.device_uuid, m.driver_version, m.nvrtc_version, m.template_hash}];
        ++stale_ms;
      }
    for (const auto& [k, n] : groups) {
      const auto& [dev, driver, nvrtc, hash] = k;
      t.add_row({"measurements", dev, "*", "*", n, jit::cuda_version_string(driver), nvrtc, hash,
                 stale_reason(driver, nvrtc, hash, *v)});
    }
    t.print(std::cout, *fmt);
    std::cerr << stale_best << " of " << best->size() << " best entries and " << stale_ms << " of "
              << ms->size() << " measurements are stale against " << describe(*v) << "\n";
  });
}

// --- prune

void add_db_prune(CLI::App& db) {
  auto* cmd = db.add_subcommand(
      "prune", "Delete stale, failed or old measurements (and stale best entries)");
  struct Args {
    DbOptions db;
    VersionOptions versions;
    bool stale = false, failed = false, dry_run = false;
    int older_than = 0;
  };
  auto a = std::make_shared<Args>();
  cmd->add_flag("--stale", a->stale,
                "measurements and best entries stale against the current versions");
  cmd->add_flag("--failed", a->failed, "compile_failed, launch_failed and faulted measurements");
  auto* older = cmd->add_option("--older-than", a->older_than, "measurements older than DAYS")
                    ->check(CLI::Range(0, 1000000));
  cmd->add_flag("--dry-run", a->dry_run, "count what would be removed; change nothing");
  add_db_options(cmd, a->db);
  add_version_options(cmd, a->versions);
  cmd->callback([a, cmd, older] {
    const char* name = "db prune";
    if (!no_extra_arguments(cmd, name)) return;
    auto fmt = parse_format(a->db.format);
    if (!report(name, fmt.status())) return;
    cache::PruneOptions o;
    o.stale = a->stale;
    o.failed = a->failed;
    o.dry_run = a->dry_run;
    if (older->count() > 0) o.older_than_days = a->older_than;
    if (!o.stale && !o.failed && !o.older_than_days) {
      report(name, Status::invalid_argument(
                       "nothing to prune: give --stale, --failed and/or --older-than DAYS"));
      return;
    }
    if (o.stale) {
      auto v = current_versions(a->versions);
      if (!report(name, v.status())) return;
      o.versions = *v;
    }
    // A dry run only reads: it works on a database this user cannot write.
    auto tdb = o.dry_run ? open_for_read(a->db.db) : open_existing_for_write(a->db.db);
    if (!report(name, tdb.status())) return;
    auto r = tdb->prune(o);
    if (!report(name, r.status())) return;
    Table t({"measurements", "best", "dry_run"});
    t.add_row({r->measurements, r->best, o.dry_run});
    t.print(std::cout, *fmt);
    std::cerr << (o.dry_run ? "would remove " : "removed ") << r->measurements
              << " measurements and " << r->best << " best entries from " << tdb->path() << "\n";
  });
}

// --- migrate

void add_db_migrate(CLI::App& db) {
  auto* cmd = db.add_subcommand(
      "migrate", "Bring a database of an older schema to this build's (read commands never do)");
  auto a = std::make_shared<DbOptions>();
  add_db_options(cmd, *a);
  cmd->callback([a, cmd] {
    const char* name = "db migrate";
    if (!no_extra_arguments(cmd, name)) return;
    auto local = local_db_path(a->db);
    if (!report(name, local.status())) return;
    const std::string path = *local;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      report(name, Status::not_found("no tuning database at " + path));
      return;
    }
    auto before = cache::TuningDb::schema_version_of(path);
    if (!report(name, before.status())) return;
    auto tdb = cache::TuningDb::open(path, cache::OpenMode::kReadWrite);
    if (!report(name, tdb.status())) return;
    std::cerr << (*before == cache::kSchemaVersion
                      ? "already at"
                      : "migrated from schema version " + std::to_string(*before) + " to")
              << " schema version " << cache::kSchemaVersion << ": " << path << "\n";
  });
}

}  // namespace ssmtune::cli
