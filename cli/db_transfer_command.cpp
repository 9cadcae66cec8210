// `ssmtune db export | import | merge`: moving tuning results between
// machines as JSON. import lets the file's best entries win; merge keeps
// whichever is newer. Both add only measurements not already present.
#include <fstream>
#include <iostream>
#include <iterator>

#include "cli/commands.h"
#include "cli/db_support.h"

namespace ssmtune::cli {
namespace {

struct ExportArgs {
  DbOptions db;
  std::string output;
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
  auto tdb = open_for_read(a.db.db);
  if (!report(name, tdb.status())) return;
  auto j = tdb->export_json();
  if (!report(name, j.status())) return;
  const std::string text = j->dump(2) + "\n";
  if (a.output.empty() || a.output == "-") {
    std::cout << text;
  } else {
    // Into a temporary file renamed over the target, so a failed export
    // never leaves half a file.
    const std::string tmp = a.output + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary);
      out << text;
      if (!out) {
        report(name, Status::io_error("cannot write " + tmp));
        return;
      }
    }
    if (std::rename(tmp.c_str(), a.output.c_str()) != 0) {
      std::remove(tmp.c_str());
      report(name, Status::io_error("cannot write " + a.output));
      return;
    }
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
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::not_found("cannot read " + path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return Status::invalid_argument(path + " is not valid JSON: " + e.what());
  }
}

void run_import(const ImportArgs& a, bool merge) {
  const char* name = merge ? "db merge" : "db import";
  auto fmt = parse_format(a.db.format);
  if (!report(name, fmt.status())) return;
  auto j = read_json(a.file);
  if (!report(name, j.status())) return;
  auto tdb = open_for_write(a.db.db);
  if (!report(name, tdb.status())) return;
  auto r = tdb->import_json(
      *j, merge ? cache::MergePolicy::kNewerWins : cache::MergePolicy::kIncomingWins);
  if (!report(name, r.status().with_context(a.file))) return;
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
  cmd->add_option("--output,-o", a->output, "file to write (default: stdout)");
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
