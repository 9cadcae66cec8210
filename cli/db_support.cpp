// Shared plumbing of the `ssmtune db` subcommands.
#include "cli/db_support.h"

#include <ctime>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "cache/db_path.h"
#include "cli/commands.h"
#include "jit/compiler.h"
#include "jit/driver.h"
#include "jit/template_sources.h"
#include "tuner/fwd/problem.h"

namespace ssmtune::cli {

void add_db_options(CLI::App* sub, DbOptions& o, const char* format) {
  o.format = format;
  sub->add_option("--db", o.db,
                  "tuning database file (default: $SSMTUNE_DB, else "
                  "$XDG_CACHE_HOME/ssmtune/tuning.db or ~/.cache/ssmtune/tuning.db)");
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

Result<cache::Versions> current_versions(const VersionOptions& o) {
  cache::Versions v;
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

std::string describe(const cache::Versions& v) {
  std::string s;
  auto add = [&s](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  add(v.driver_version ? "driver " + jit::cuda_version_string(v.driver_version) : "any driver");
  add(v.nvrtc_version.empty() ? "any NVRTC" : "NVRTC " + v.nvrtc_version);
  add(v.template_hash.empty() ? "any templates" : "templates " + v.template_hash.substr(0, 8));
  return s;
}

Result<cache::TuningDb> open_for_read(const std::string& db_flag) {
  const std::string path = cache::resolve_db_path(db_flag);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return Status::not_found("no tuning database at " + db_path_or_hint(path));
  SSMTUNE_ASSIGN_OR_RETURN(int version, cache::TuningDb::schema_version_of(path));
  if (version > 0 && version < cache::kSchemaVersion) {
    SSMTUNE_ASSIGN_OR_RETURN(auto db, cache::TuningDb::open(path, cache::OpenMode::kReadWrite));
    std::cerr << "ssmtune db: migrated " << path << " from schema version " << version << " to "
              << cache::kSchemaVersion << "\n";
    return db;
  }
  return cache::TuningDb::open(path, cache::OpenMode::kReadOnly);
}

Result<cache::TuningDb> open_existing_for_write(const std::string& db_flag) {
  const std::string path = cache::resolve_db_path(db_flag);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return Status::not_found("no tuning database at " + db_path_or_hint(path));
  return cache::TuningDb::open(path, cache::OpenMode::kReadWrite);
}

Result<cache::TuningDb> open_for_write(const std::string& db_flag) {
  return cache::TuningDb::open(cache::resolve_db_path(db_flag), cache::OpenMode::kReadWrite);
}

Status check_problem(cache::TuningDb& db, const std::string& key) {
  auto p = FwdProblem::from_key(key);
  if (!p) return p.status();
  SSMTUNE_ASSIGN_OR_RETURN(bool present, db.has_problem(key));
  if (!present)
    return Status::not_found("no problem '" + key + "' in " + db.path() +
                             " ('ssmtune db list problems' shows those there are)");
  return Status::ok();
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

}  // namespace ssmtune::cli
