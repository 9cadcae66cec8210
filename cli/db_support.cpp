// Shared plumbing of the `ssmtune db` subcommands.
#include "cli/db_support.h"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <type_traits>

#include "cache/db_path.h"
#include "cache/keys.h"
#include "cli/commands.h"
#include "jit/compiler.h"
#include "jit/driver.h"
#include "jit/template_sources.h"
#include "tuner/records_json.h"
#include "tuner/selection.h"

namespace ssmtune::cli {

void add_db_options(CLI::App* sub, DbOptions& o, const char* format) {
  o.format = format;
  sub->add_option("--db", o.db,
                  "tuning database file (default: $SSMTUNE_DB, else "
                  "$XDG_CACHE_HOME/ssmtune/tuning.db or ~/.cache/ssmtune/tuning.db); of a list "
                  "LOCAL:SHARED... the local one");
  sub->add_option("--format", o.format, "table, json or csv")->capture_default_str();
}

void add_version_options(CLI::App* sub, VersionOptions& v) {
  sub->add_option("--driver", v.driver,
                  "current driver version, e.g. 13.0 or 13000 (default: the loaded driver's; "
                  "'any': not compared)");
  sub->add_option("--nvrtc", v.nvrtc,
                  "current NVRTC version, e.g. 13.0 (default: this build's; 'any': not compared)");
  sub->add_option("--template-hash", v.template_hash,
                  "current template hash (default: the templates this binary uses; 'any': not "
                  "compared)");
}

namespace {

// "13.0" -> 13000, "13000" -> 13000.
Result<int> parse_driver_version(const std::string& s) {
  auto bad = [&s] {
    return Status::invalid_argument("bad --driver '" + s +
                                    "' (expected a version such as 13.0 or 13000, or 'any')");
  };
  try {
    size_t used = 0;
    const auto dot = s.find('.');
    if (dot == std::string::npos) {
      const int v = std::stoi(s, &used);
      if (used != s.size() || v < 0) return bad();
      return v;
    }
    const int major = std::stoi(s.substr(0, dot), &used);
    if (used != dot) return bad();
    const std::string rest = s.substr(dot + 1);
    const int minor = std::stoi(rest, &used);
    if (used != rest.size() || major < 0 || minor < 0 || minor > 99) return bad();
    return major * 1000 + minor * 10;
  } catch (...) {
    return bad();
  }
}

std::string db_path_or_hint(const std::string& path) {
  return path + " (give --db FILE or set SSMTUNE_DB)";
}

}  // namespace

Result<Versions> current_versions(const VersionOptions& o) {
  Versions v;
  if (o.driver == "any") {
    v.driver_version = 0;
  } else if (!o.driver.empty()) {
    SSMTUNE_ASSIGN_OR_RETURN(v.driver_version, parse_driver_version(o.driver));
  } else if (auto drv = jit::Driver::get(); drv.is_ok()) {
    v.driver_version = (*drv)->driver_version;
  }
  if (o.nvrtc != "any")
    v.nvrtc_version = o.nvrtc.empty() ? jit::nvrtc_version().to_string() : o.nvrtc;
  if (o.template_hash != "any") {
    if (!o.template_hash.empty()) {
      v.template_hash = o.template_hash;
    } else {
      SSMTUNE_ASSIGN_OR_RETURN(auto sources, jit::TemplateSources::load_default());
      v.template_hash = sources.hash();
    }
  }
  return v;
}

std::string describe(const Versions& v) {
  std::string s;
  auto add = [&s](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  add(v.driver_version ? "driver " + jit::cuda_version_string(v.driver_version) : "any driver");
  add(v.nvrtc_version.empty() ? "any NVRTC" : "NVRTC " + v.nvrtc_version);
  add(v.template_hash.empty() ? "any templates" : "templates " + v.template_hash.substr(0, 8));
  return s;
}

Result<std::string> local_db_path(const std::string& db_flag) {
  SSMTUNE_ASSIGN_OR_RETURN(const cache::DbPathList paths, cache::resolve_db_paths(db_flag));
  static bool said = false;
  if (paths.layered() && !said) {
    said = true;
    std::cerr << "ssmtune: note: this command works on one file, the local database " << paths.local
              << " of the list; shared layers are read by tune, explain and "
              << "library calls (name one with --db to work on it)\n";
  }
  return paths.local;
}

Result<cache::TuningDb> open_for_read(const std::string& db_flag) {
  SSMTUNE_ASSIGN_OR_RETURN(const std::string path, local_db_path(db_flag));
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return Status::not_found("no tuning database at " + db_path_or_hint(path));
  if (std::filesystem::is_directory(path, ec))
    return Status::invalid_argument(path + " is a directory, not a tuning database file");
  // Reading never changes the file: an older schema is not migrated here
  // (the file may be shared and read-only); `ssmtune db migrate` does it.
  SSMTUNE_ASSIGN_OR_RETURN(int version, cache::TuningDb::schema_version_of(path));
  if (version > 0 && version < cache::kSchemaVersion)
    return Status::unsupported(path + " has schema version " + std::to_string(version) +
                               ", older than this build's " +
                               std::to_string(cache::kSchemaVersion) +
                               "; read commands never rewrite it: run 'ssmtune db migrate --db " +
                               path + "' (needs write access) first");
  return cache::TuningDb::open(path, cache::OpenMode::kReadOnly);
}

namespace {

// Opens `path` for writing; an older schema is migrated then, and said so
// on stderr (older builds cannot read the file afterwards).
Result<cache::TuningDb> open_writable(const std::string& path) {
  SSMTUNE_ASSIGN_OR_RETURN(int version, cache::TuningDb::schema_version_of(path));
  SSMTUNE_ASSIGN_OR_RETURN(auto db, cache::TuningDb::open(path, cache::OpenMode::kReadWrite));
  if (version > 0 && version < cache::kSchemaVersion)
    std::cerr << "ssmtune: migrated " << path << " from schema version " << version << " to "
              << cache::kSchemaVersion << "\n";
  return db;
}

}  // namespace

Result<cache::TuningDb> open_existing_for_write(const std::string& db_flag) {
  SSMTUNE_ASSIGN_OR_RETURN(const std::string path, local_db_path(db_flag));
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return Status::not_found("no tuning database at " + db_path_or_hint(path));
  if (std::filesystem::is_directory(path, ec))
    return Status::invalid_argument(path + " is a directory, not a tuning database file");
  return open_writable(path);
}

Result<cache::TuningDb> open_for_write(const std::string& db_flag) {
  SSMTUNE_ASSIGN_OR_RETURN(const std::string path, local_db_path(db_flag));
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Status::invalid_argument(path + " is a directory, not a tuning database file");
  return open_writable(path);
}

Status check_problem(cache::TuningDb& db, const std::string& key) {
  const std::string qualified = cache::qualified_key(key);
  SSMTUNE_RETURN_IF_ERROR(cache::check_problem_key(qualified));
  SSMTUNE_ASSIGN_OR_RETURN(bool present, db.has_problem(qualified));
  if (!present)
    return Status::not_found("no problem '" + qualified + "' in " + db.path() +
                             " ('ssmtune db list problems' shows those there are)");
  return Status::ok();
}

void add_family_option(CLI::App* sub, std::string& family) {
  sub->add_option("--family", family, "only this kernel family (fwd, ...)");
}

Status check_device(cache::TuningDb& db, const std::string& uuid) {
  SSMTUNE_ASSIGN_OR_RETURN(auto d, db.device(uuid));
  if (!d)
    return Status::not_found("no device '" + uuid + "' in " + db.path() +
                             " ('ssmtune db list devices' shows those there are)");
  return Status::ok();
}

bool no_extra_arguments(const CLI::App* cmd, const char* name) {
  const auto extra = cmd->remaining();
  if (extra.empty()) return true;
  std::string list;
  for (const auto& e : extra) list += (list.empty() ? "'" : " '") + e + "'";
  return report(name, Status::invalid_argument("unexpected arguments " + list + "; run 'ssmtune " +
                                               std::string(name) + " --help'"));
}

std::string iso_time(int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string one_line(const std::string& s, size_t n) {
  std::string out;
  for (char c : s) out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  if (out.size() > n) out = out.substr(0, n > 3 ? n - 3 : 0) + "...";
  return out;
}

nlohmann::json table_json(const Table& t) {
  std::ostringstream os;
  t.print(os, Format::kJson);
  return nlohmann::json::parse(os.str());
}

std::vector<std::string> output_names(const std::vector<Measurement>& ms) {
  std::vector<std::string> names;
  for (const auto& m : ms)
    for (const auto& e : m.errors)
      if (std::find(names.begin(), names.end(), e.output) == names.end()) names.push_back(e.output);
  return names;
}

namespace {

const OutputError kNoError{};

const OutputError* error_of(const Measurement& m, const std::string& output) {
  for (const auto& e : m.errors)
    if (e.output == output) return &e;
  return nullptr;
}

// The CSV cells of one output's error: its fields but the name.
struct CsvCells {
  std::vector<nlohmann::json>* row = nullptr;  // null: names only
  std::vector<std::string>* names = nullptr;
  std::string prefix;
  template <typename T>
  void operator()(const char* field, const T& v) {
    if (std::string(field) == "output") return;
    if (names != nullptr) names->push_back(prefix + field);
    if (row == nullptr) return;
    if constexpr (std::is_same_v<T, double>) {
      row->push_back(json_number(v));
    } else {
      row->push_back(v);
    }
  }
};

}  // namespace

std::vector<std::string> error_column_names(const std::vector<std::string>& outputs, Format f) {
  if (f == Format::kJson) return {"errors"};
  if (f == Format::kTable) return outputs;
  std::vector<std::string> names;
  for (const auto& o : outputs) visit_fields_of_error(kNoError, CsvCells{nullptr, &names, o + "."});
  return names;
}

void add_error_cells(std::vector<nlohmann::json>& row, const Measurement& m,
                     const std::vector<std::string>& outputs, Format f) {
  if (f == Format::kJson) {
    nlohmann::json errors = nlohmann::json::array();
    for (const auto& e : m.errors) errors.push_back(to_json(e));
    row.push_back(std::move(errors));
    return;
  }
  for (const auto& o : outputs) {
    const OutputError* e = error_of(m, o);
    if (f == Format::kTable) {
      row.push_back(e == nullptr ? nlohmann::json()
                                 : nlohmann::json(format_error(e->rel_l2) + " " + e->verdict));
      continue;
    }
    if (e != nullptr) {
      visit_fields_of_error(*e, CsvCells{&row, nullptr, ""});
    } else {
      std::vector<std::string> names;
      visit_fields_of_error(kNoError, CsvCells{nullptr, &names, ""});
      row.insert(row.end(), names.size(), nlohmann::json());
    }
  }
}

}  // namespace ssmtune::cli
