// `ssmtune db export | import | merge`: moving tuning results between
// machines as JSON. import lets the file's best entries win; merge keeps
// whichever is newer. Both add only measurements not already present.
#include <iostream>

#include "cache/json_text.h"
#include "cli/commands.h"
#include "cli/db_support.h"
#include "cli/file_io.h"

namespace ssmtune::cli {
namespace {

struct ExportArgs {
  DbOptions db;
  std::string output;
  const CLI::Option* output_opt = nullptr;  // to tell -o "" from no -o
};

void run_export(const ExportArgs& a) {
  const char* name = "db export";
  auto fmt = parse_format(a.db.format);
  if (!report(name, fmt.status())) return;
  if (*fmt != Format::kJson) {
    report(name, Status::invalid_argument(
                     "export writes JSON only (use 'ssmtune db show --format csv' for a table)"));
    return;
  }
  if (a.output_opt != nullptr && a.output_opt->count() > 0 && a.output.empty()) {
    report(name, Status::invalid_argument("-o needs a file name (or '-' for stdout)"));
    return;
  }
  auto tdb = open_for_read(a.db.db);
  if (!report(name, tdb.status())) return;
  const bool to_stdout = a.output.empty() || a.output == "-";
  // Checked before exporting, and again (through the inode) when writing.
  if (!to_stdout && same_file(a.output, tdb->path())) {
    report(name, Status::invalid_argument("refusing to write the export over the database " +
                                          tdb->path() + " itself: give another -o file"));
    return;
  }
  auto j = tdb->export_json();
  if (!report(name, j.status())) return;
  const std::string text = cache::dump_json_text(*j) + "\n";
  if (to_stdout) {
    std::cout << text;
  } else if (!report(name, write_output_file(a.output, text, tdb->path()))) {
    return;
  }
  std::cerr << "exported " << (*j)["devices"].size() << " devices, " << (*j)["measurements"].size()
            << " measurements and " << (*j)["best"].size() << " best entries from " << tdb->path()
            << (a.output.empty() || a.output == "-" ? "" : " to " + a.output) << "\n";
}

struct ImportArgs {
  DbOptions db;
  std::string file;
};

Result<nlohmann::json> read_json(const std::string& path) {
  SSMTUNE_ASSIGN_OR_RETURN(std::string text, read_input_file(path));
  return cache::parse_json_text(text, path);
}

void run_import(const ImportArgs& a, bool merge) {
  const char* name = merge ? "db merge" : "db import";
  auto fmt = parse_format(a.db.format);
  if (!report(name, fmt.status())) return;
  auto j = read_json(a.file);
  if (!report_input(name, j.status())) return;
  auto tdb = open_for_write(a.db.db);
  if (!report(name, tdb.status())) return;
  auto r = tdb->import_json(
      *j, merge ? cache::MergePolicy::kNewerWins : cache::MergePolicy::kIncomingWins);
  // Errors in the file's entries name the file; a database that cannot be
  // written (read-only, full) names the database.
  if (!r.status().is_ok()) {
    const Code c = r.status().code();
    if (c == Code::kInvalidArgument || c == Code::kUnsupported)
      report_input(name, r.status().with_context(a.file));
    else
      report(name, r.status().with_context("importing into " + tdb->path()));
    return;
  }
  Table t({"devices_added", "measurements_added", "measurements_skipped", "best_added",
           "best_replaced", "best_kept"});
  t.add_row({r->devices_added, r->measurements_added, r->measurements_skipped, r->best_added,
             r->best_replaced, r->best_kept});
  t.print(std::cout, *fmt);
}

}  // namespace

void add_db_export(CLI::App& db) {
  auto* cmd = db.add_subcommand("export", "Write devices, measurements and best entries as JSON");
  auto a = std::make_shared<ExportArgs>();
  a->output_opt = cmd->add_option(
      "--output,-o", a->output,
      "file to write (default: stdout); a symlink is written through, never the database itself");
  add_db_options(cmd, a->db, "json");
  cmd->callback([a, cmd] {
    if (no_extra_arguments(cmd, "db export")) run_export(*a);
  });
}

void add_db_import(CLI::App& db, bool merge) {
  auto* cmd =
      merge ? db.add_subcommand("merge",
                                "Merge an export into the database: on a conflict the newer best "
                                "entry stays")
            : db.add_subcommand("import",
                                "Import an export into the database (created if missing): on a "
                                "conflict the file's best entry wins");
  auto a = std::make_shared<ImportArgs>();
  cmd->add_option("file", a->file, "JSON file written by 'ssmtune db export'")->required();
  add_db_options(cmd, a->db);
  cmd->callback([a, cmd, merge] {
    if (no_extra_arguments(cmd, merge ? "db merge" : "db import")) run_import(*a, merge);
  });
}

}  // namespace ssmtune::cli
