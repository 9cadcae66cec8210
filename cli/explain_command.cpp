// `ssmtune explain`: which config a library call for this problem (of any
// kernel family: forward, backward) would run on this GPU, and which rule
// (exact, exact-class, nearest, default) picked it; over a database list
// (local, then shared layers) also which database the entry came from.
#include <filesystem>
#include <iostream>
#include <optional>

#include "cache/db_path.h"
#include "cache/db_stack.h"
#include "cache/tuning_db.h"
#include "cli/commands.h"
#include "cli/db_support.h"
#include "cli/problem_options.h"
#include "jit/device.h"
#include "jit/template_sources.h"
#include "runtime/selector.h"

namespace ssmtune::cli {
namespace {

struct ExplainArgs {
  ProblemArgs problem;
  std::string db;
  std::string format = "table";
};

void run(const ExplainArgs& a) {
  auto fmt = parse_format(a.format);
  if (!report("explain", fmt.status())) return;
  auto p = a.problem.any_problem();
  if (!report("explain", p.status())) return;
  auto dev = jit::query_device(0);
  if (!report("explain", dev.status())) return;
  auto sources = jit::TemplateSources::load_default();
  if (!report("explain", sources.status())) return;
  // Read-only (it may be a shared file); no local database yet: the shared
  // layers, or the default rule. Shared layers must exist.
  auto paths = cache::resolve_db_paths(a.db);
  if (!report("explain", paths.status())) return;
  std::optional<cache::TuningDb> local;
  if (std::error_code ec; std::filesystem::exists(paths->local, ec)) {
    auto opened = open_for_read(paths->local);
    if (!report("explain", opened.status())) return;
    local.emplace(std::move(*opened));
  }
  auto shared = cache::DbStack::open_shared(*paths);
  if (!report("explain", shared.status())) return;
  cache::DbStack stack(std::move(local), std::move(*shared));
  const Versions v{dev->driver_version, dev->nvrtc_version, sources->hash()};
  auto c = choose_family_config(stack.layers(), *p->family, *p->problem, *dev, v);
  if (!report("explain", c.status())) return;
  // With shared layers, which database the choice came from.
  const bool layered = paths->layered();
  std::vector<std::string> columns{"problem", "device", "config", "rule", "why"};
  if (layered) columns.push_back("database");
  Table t(columns);
  std::vector<nlohmann::json> row{p->problem->key(), dev->name, c->config, to_string(c->rule),
                                  c->reason};
  const std::string from = c->source_db.empty()
                               ? "(none: built-in default)"
                               : c->source_db + (c->source_shared ? " (shared)" : " (local)");
  if (layered) row.push_back(from);
  t.add_row(row);
  if (*fmt != Format::kTable) return t.print(std::cout, *fmt);
  std::cout << p->problem->key() << " on " << dev->name << ": " << c->config
            << "\n  rule: " << to_string(c->rule) << "\n  why: " << c->reason << "\n";
  if (layered) std::cout << "  database: " << from << "\n";
}

}  // namespace

void add_explain_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "explain", "Which config a library call for a problem runs on this GPU, and why");
  auto a = std::make_shared<ExplainArgs>();
  add_problem_options(cmd, a->problem);
  cmd->add_option("--db", a->db,
                  "tuning database, or LOCAL:SHARED... (read-only shared layers, read after the "
                  "local one) (default: $SSMTUNE_DB or the cache dir)");
  cmd->add_option("--format", a->format, "table, json or csv")->capture_default_str();
  cmd->callback([a] { run(*a); });
}

}  // namespace ssmtune::cli
