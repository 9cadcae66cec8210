// `ssmtune explain`: which config a library call for this problem (of any
// kernel family: forward, backward) would run on this GPU, and which rule
// (exact, nearest, default) picked it.
#include <filesystem>
#include <iostream>
#include <optional>

#include "cache/db_path.h"
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
  // Read-only (it may be a shared file); no database yet: the default rule.
  const std::string path = cache::resolve_db_path(a.db);
  std::optional<cache::TuningDb> db;
  if (std::error_code ec; std::filesystem::exists(path, ec)) {
    auto opened = open_for_read(path);
    if (!report("explain", opened.status())) return;
    db.emplace(std::move(*opened));
  }
  const Versions v{dev->driver_version, dev->nvrtc_version, sources->hash()};
  auto c = choose_family_config(db ? &*db : nullptr, *p->family, *p->problem, *dev, v);
  if (!report("explain", c.status())) return;
  Table t({"problem", "device", "config", "rule", "why"});
  t.add_row({p->problem->key(), dev->name, c->config, to_string(c->rule), c->reason});
  if (*fmt != Format::kTable) return t.print(std::cout, *fmt);
  std::cout << p->problem->key() << " on " << dev->name << ": " << c->config
            << "\n  rule: " << to_string(c->rule) << "\n  why: " << c->reason << "\n";
}

}  // namespace

void add_explain_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "explain", "Which config a library call for a problem runs on this GPU, and why");
  auto a = std::make_shared<ExplainArgs>();
  add_problem_options(cmd, a->problem);
  cmd->add_option("--db", a->db, "tuning database (default: $SSMTUNE_DB or the cache dir)");
  cmd->add_option("--format", a->format, "table, json or csv")->capture_default_str();
  cmd->callback([a] { run(*a); });
}

}  // namespace ssmtune::cli
