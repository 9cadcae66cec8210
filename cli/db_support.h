// What the `ssmtune db` subcommands share: the --db/--format and version
// options, opening the database for reading or writing, the versions an
// entry must match to be current, and cell formatting.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cache/tuning_db.h"
#include "cli/table.h"
#include "tuner/records.h"

namespace ssmtune::cli {

struct DbOptions {
  std::string db;  // --db; empty: SSMTUNE_DB or the user's cache directory
  std::string format = "table";
};
// Adds --db and --format (default `format`) to `sub`.
void add_db_options(CLI::App* sub, DbOptions& o, const char* format = "table");

// --driver / --nvrtc / --template-hash: the versions current entries must
// match. Empty: this machine's (driver when one loads); "any": not compared.
struct VersionOptions {
  std::string driver;
  std::string nvrtc;
  std::string template_hash;
};
void add_version_options(CLI::App* sub, VersionOptions& v);
Result<Versions> current_versions(const VersionOptions& v);
// "driver 13.0, NVRTC 13.0, templates 0123abcd" (fields not compared left out).
std::string describe(const Versions& v);

// The database a db command works on: --db (or $SSMTUNE_DB, or the
// default), and of a list LOCAL:SHARED... the local one (a note on stderr
// says so once). Errors: a malformed list.
Result<std::string> local_db_path(const std::string& db_flag);

// The database for a read command, opened read-only (also in a read-only
// directory): a missing file is an error (nothing is created); an older
// schema is refused with a pointer to `ssmtune db migrate` (reads never
// rewrite the file).
Result<cache::TuningDb> open_for_read(const std::string& db_flag);
// For a command that changes an existing database (prune): missing is an error.
Result<cache::TuningDb> open_existing_for_write(const std::string& db_flag);
// For import and merge: created when missing.
Result<cache::TuningDb> open_for_write(const std::string& db_flag);

// Checks a --problem value: a valid key that the database holds. A key
// without a family prefix is a forward key ("fwd:" is prepended).
Status check_problem(cache::TuningDb& db, const std::string& key);
// --family: only the entries of one kernel family ("fwd", "bwd", ...).
void add_family_option(CLI::App* sub, std::string& family);
// Checks a --device value: a UUID the database holds.
Status check_device(cache::TuningDb& db, const std::string& uuid);

// Reports arguments that `cmd` left over and returns false when there are
// any. (`ssmtune db` allows extras so that it can name an unknown
// subcommand; CLI11 then leaves a subcommand's extras in its remaining().)
bool no_extra_arguments(const CLI::App* cmd, const char* name);

// "2025-01-02T03:04:05Z".
std::string iso_time(int64_t unix_seconds);
// For table output: one line of at most `n` characters.
std::string one_line(const std::string& s, size_t n);
// The rows of `t` as a JSON array (for outputs that combine tables).
nlohmann::json table_json(const Table& t);

// Per-output error columns of a measurement table. The outputs named in
// `ms`' errors, in first-seen order; their columns: in a table one per
// output ("out": "3.1e-6 inside"), in CSV one per field of each output
// ("out.rel_l2", "out.max_abs_rel", ...), in JSON one "errors" column (an
// array of objects as the export writes them).
std::vector<std::string> output_names(const std::vector<Measurement>& ms);
std::vector<std::string> error_column_names(const std::vector<std::string>& outputs, Format f);
void add_error_cells(std::vector<nlohmann::json>& row, const Measurement& m,
                     const std::vector<std::string>& outputs, Format f);

// Subcommands of `ssmtune db`, one function each.
void add_db_list(CLI::App& db);
void add_db_show(CLI::App& db);
void add_db_best(CLI::App& db);
void add_db_explain(CLI::App& db);
void add_db_diff(CLI::App& db);
void add_db_export(CLI::App& db);
void add_db_import(CLI::App& db, bool merge);
void add_db_prune(CLI::App& db);
void add_db_stale(CLI::App& db);
void add_db_migrate(CLI::App& db);

}  // namespace ssmtune::cli
