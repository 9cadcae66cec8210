// `ssmtune db export | import | merge`: moving tuning results between
// machines as JSON, or straight from another tuning database file (a
// shard's, a machine's local one folded into a shared one). import lets
// the file's best entries win; merge keeps whichever is newer. Both add
// only measurements not already present.
#include <cstring>
#include <fstream>
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

// An export, or another tuning database (sqlite's header), read-only and
// exported in memory.
bool is_sqlite_file(const std::string& path) {
  static constexpr char kHeader[] = "SQLite format 3";  // with its NUL: 16 bytes
  char head[sizeof kHeader] = {};
  std::ifstream in(path, std::ios::binary);
  in.read(head, sizeof head);
  return in.gcount() == sizeof head && std::memcmp(head, kHeader, sizeof head) == 0;
}

Result<nlohmann::json> read_source(const std::string& path) {
  if (!is_sqlite_file(path)) {
    SSMTUNE_ASSIGN_OR_RETURN(std::string text, read_input_file(path));
    return cache::parse_json_text(text, path);
  }
  auto source = cache::TuningDb::open(path, cache::OpenMode::kReadOnly);
  if (!source) return source.status().with_context("reading the tuning database " + path);
  return source->export_json();
}

void run_import(const ImportArgs& a, bool merge) {
  const char* name = merge ? "db merge" : "db import";
  auto fmt = parse_format(a.db.format);
  if (!report(name, fmt.status())) return;
  auto j = read_source(a.file);
  if (!report_input(name, j.status())) return;
  auto target = local_db_path(a.db.db);
  if (!report(name, target.status())) return;
  if (same_file(a.file, *target)) {
    report(name, Status::invalid_argument("cannot " + std::string(merge ? "merge" : "import") +
                                          " " + a.file + " into itself"));
    return;
  }
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
  cmd->add_option("file", a->file,
                  "JSON file written by 'ssmtune db export', or another tuning database file "
                  "(read-only; e.g. a tune shard's or a machine's local database)")
      ->required();
  add_db_options(cmd, a->db);
  cmd->callback([a, cmd, merge] {
    if (no_extra_arguments(cmd, merge ? "db merge" : "db import")) run_import(*a, merge);
  });
}

}  // namespace ssmtune::cli
