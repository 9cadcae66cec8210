// Opening the tuning database, and its devices, measurements, best entries
// and pruning. Export and import are in db_json.cpp, cubins in
// db_cubins.cpp.
#include "cache/tuning_db.h"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <random>
#include <thread>

#include "cache/keys.h"
#include "cache/read_only_open.h"
#include "cache/record_checks.h"
#include "cache/record_rows.h"

namespace ssmtune::cache {
namespace {

namespace fs = std::filesystem;

constexpr int kWriteAttempts = 5;

constexpr char kBestColumns[] =
    "family, device_uuid, problem_key, config_key, median_ms, spread_ms, rel_l2, template_hash, "
    "driver_version, nvrtc_version, timestamp, rule";

BestEntry read_best(const Statement& st, const Versions& current) {
  BestEntry b;
  b.family = st.column_text(0);
  b.device_uuid = st.column_text(1);
  b.problem_key = st.column_text(2);
  b.config_key = st.column_text(3);
  b.median_ms = st.column_double(4);
  b.spread_ms = st.column_double(5);
  b.rel_l2 = st.column_double(6);
  b.template_hash = st.column_text(7);
  b.driver_version = st.column_int(8);
  b.nvrtc_version = st.column_text(9);
  b.timestamp = st.column_int(10);
  b.rule = st.column_text(11);
  b.stale = is_stale(b, current);
  return b;
}

// Columns uuid, name, cc_major, cc_minor, sm_count, driver_version,
// nvrtc_version, total_memory from `first`.
DeviceRecord read_device(const Statement& st, int first) {
  return {st.column_text(first),     st.column_text(first + 1), st.column_int(first + 2),
          st.column_int(first + 3),  st.column_int(first + 4),  st.column_int(first + 5),
          st.column_text(first + 6), st.column_int(first + 7)};
}

// The family of a record with problem key `key` (qualified), checked
// against the record's own `family` field when that is set.
Result<std::string> record_family(const std::string& family, const std::string& key) {
  const std::string of_key = family_of_key(key);
  if (!family.empty() && family != of_key)
    return Status::invalid_argument("family '" + family + "' does not match problem key '" + key +
                                    "'");
  return of_key;
}

// "(?1 = 0 OR driver_version = ?1) AND ..." with the versions bound at
// parameters `first`, first + 1, first + 2; an empty field matches all.
std::string current_clause(int first) {
  const std::string d = "?" + std::to_string(first), n = "?" + std::to_string(first + 1),
                    t = "?" + std::to_string(first + 2);
  return "(" + d + " = 0 OR driver_version = " + d + ") AND (" + n +
         " = '' OR nvrtc_version = " + n + ") AND (" + t + " = '' OR template_hash = " + t + ")";
}

Status bind_versions(Statement& st, int first, const Versions& v) {
  SSMTUNE_RETURN_IF_ERROR(st.bind(first, v.driver_version));
  SSMTUNE_RETURN_IF_ERROR(st.bind(first + 1, v.nvrtc_version));
  return st.bind(first + 2, v.template_hash);
}

void backoff(int attempt) {
  thread_local std::minstd_rand rng(std::random_device{}());
  const int ms = 20 * attempt + static_cast<int>(rng() % 50);
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

}  // namespace

// --- Opening

Result<int> TuningDb::schema_version_of(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return 0;
  if (fs::is_directory(path, ec))
    return Status::io_error(path + " is a directory, not a tuning database file");
  SSMTUNE_ASSIGN_OR_RETURN(Connection c, open_read_only(path, kBusyTimeoutMs));
  return read_schema_version(c, path);
}

Result<TuningDb> TuningDb::open(const std::string& path, OpenMode mode) {
  if (path.empty()) return Status::invalid_argument("empty tuning database path");
  std::error_code ec;
  const bool exists = fs::exists(path, ec);
  if (mode == OpenMode::kReadOnly) {
    if (!exists) return Status::not_found("no tuning database at " + path);
    SSMTUNE_ASSIGN_OR_RETURN(int version, schema_version_of(path));
    if (version == 0) return Status::not_found(path + " is empty: no tuning database there yet");
    if (version < kSchemaVersion)
      return Status::unsupported(path + " has schema version " + std::to_string(version) +
                                 ", older than this build's " + std::to_string(kSchemaVersion) +
                                 "; open it for writing once to migrate it");
    SSMTUNE_ASSIGN_OR_RETURN(Connection c, open_read_only(path, kBusyTimeoutMs));
    return TuningDb(std::move(c), path, true);
  }

  // Inspect read-only first: refuse a foreign or corrupt file before
  // anything (WAL, the schema) could change it.
  if (exists) {
    SSMTUNE_ASSIGN_OR_RETURN(int version, schema_version_of(path));
    (void)version;
  } else {
    const fs::path parent = fs::path(path).parent_path();
    if (!parent.empty() && !fs::exists(parent, ec)) {
      fs::create_directories(parent, ec);
      if (ec)
        return Status::io_error("cannot create the directory " + parent.string() +
                                " for the tuning database: " + ec.message());
    }
  }
  SSMTUNE_ASSIGN_OR_RETURN(Connection c,
                           Connection::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE));
  SSMTUNE_RETURN_IF_ERROR(c.set_busy_timeout(kBusyTimeoutMs));
  // Switching to WAL takes an exclusive lock for a moment; a process
  // creating the same file at once can hold it.
  Status s;
  for (int attempt = 0; attempt < kWriteAttempts; ++attempt) {
    if (attempt > 0) backoff(attempt);
    auto mode_now = c.query_text("PRAGMA journal_mode=WAL");
    s = mode_now.status();
    if (s.is_ok() || !is_busy(s)) break;
  }
  SSMTUNE_RETURN_IF_ERROR(s.with_context("enabling WAL on " + path));
  // WAL with synchronous=NORMAL survives a killed process; only a power
  // loss can drop the last commits, never corrupt the file.
  SSMTUNE_RETURN_IF_ERROR(c.exec("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON"));
  for (int attempt = 0; attempt < kWriteAttempts; ++attempt) {
    if (attempt > 0) backoff(attempt);
    s = ensure_schema(c, path);
    if (s.is_ok() || !is_busy(s)) break;
  }
  SSMTUNE_RETURN_IF_ERROR(s);
  return TuningDb(std::move(c), path, false);
}

Status TuningDb::check_integrity() {
  SSMTUNE_ASSIGN_OR_RETURN(Statement st, c_.prepare("PRAGMA integrity_check"));
  std::string findings;
  for (;;) {
    SSMTUNE_ASSIGN_OR_RETURN(bool row, st.step());
    if (!row) break;
    findings += (findings.empty() ? "" : "; ") + st.column_text(0);
  }
  if (findings == "ok") return Status::ok();
  return Status::corrupt(path_ + " failed the integrity check: " + findings);
}

Status TuningDb::write_transaction(const std::function<Status()>& fn, bool commit) {
  if (read_only_) return Status::invalid_argument(path_ + " was opened read-only");
  Status s;
  for (int attempt = 0; attempt < kWriteAttempts; ++attempt) {
    if (attempt > 0) backoff(attempt);
    auto tx = Transaction::begin(c_);
    if (!tx) {
      s = tx.status();
    } else {
      s = fn();
      if (s.is_ok() && commit) s = tx->commit();
    }
    if (s.is_ok() || !is_busy(s)) return s;
  }
  return s.with_context("gave up after " + std::to_string(kWriteAttempts) + " attempts");
}

// --- Devices, problems, configs

Status TuningDb::write_device(const DeviceRecord& d) {
  SSMTUNE_ASSIGN_OR_RETURN(
      Statement st,
      c_.prepare("INSERT INTO devices (uuid, name, cc_major, cc_minor, sm_count, driver_version, "
                 "nvrtc_version, total_memory) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON "
                 "CONFLICT (uuid) DO UPDATE SET name = excluded.name, cc_major = "
                 "excluded.cc_major, cc_minor = excluded.cc_minor, sm_count = excluded.sm_count, "
                 "driver_version = excluded.driver_version, nvrtc_version = "
                 "excluded.nvrtc_version, total_memory = CASE WHEN excluded.total_memory > 0 "
                 "THEN excluded.total_memory ELSE devices.total_memory END"));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, d.uuid));
  SSMTUNE_RETURN_IF_ERROR(st.bind(2, d.name));
  SSMTUNE_RETURN_IF_ERROR(st.bind(3, d.cc_major));
  SSMTUNE_RETURN_IF_ERROR(st.bind(4, d.cc_minor));
  SSMTUNE_RETURN_IF_ERROR(st.bind(5, d.sm_count));
  SSMTUNE_RETURN_IF_ERROR(st.bind(6, d.driver_version));
  SSMTUNE_RETURN_IF_ERROR(st.bind(7, d.nvrtc_version));
  SSMTUNE_RETURN_IF_ERROR(st.bind(8, d.total_memory));
  return st.run();
}

Status TuningDb::upsert_device(const DeviceRecord& d) {
  if (d.uuid.empty()) return Status::invalid_argument("device record without a UUID");
  SSMTUNE_RETURN_IF_ERROR(check_device_record(d, "device " + d.uuid));
  return write_transaction([&] { return write_device(d); });
}

Result<std::optional<DeviceRecord>> TuningDb::device(const std::string& uuid) {
  SSMTUNE_ASSIGN_OR_RETURN(
      Statement st,
      c_.prepare("SELECT uuid, name, cc_major, cc_minor, sm_count, driver_version, nvrtc_version, "
                 "total_memory FROM devices WHERE uuid = ?1"));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, uuid));
  SSMTUNE_ASSIGN_OR_RETURN(bool row, st.step());
  if (!row) return std::optional<DeviceRecord>();
  return std::optional<DeviceRecord>(read_device(st, 0));
}

Result<std::vector<std::string>> TuningDb::class_peers(const DeviceRecord& self) {
  SSMTUNE_ASSIGN_OR_RETURN(auto all, devices());
  std::vector<std::string> out;
  for (const auto& d : all)
    if (d.device.uuid != self.uuid && same_class(d.device, self)) out.push_back(d.device.uuid);
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::vector<DeviceSummary>> TuningDb::devices() {
  SSMTUNE_ASSIGN_OR_RETURN(
      Statement st,
      c_.prepare("SELECT d.uuid, d.name, d.cc_major, d.cc_minor, d.sm_count, d.driver_version, "
                 "d.nvrtc_version, d.total_memory, count(m.id), count(DISTINCT m.problem_key) "
                 "FROM devices d "
                 "LEFT JOIN measurements m ON m.device_uuid = d.uuid GROUP BY d.uuid "
                 "ORDER BY d.name, d.uuid"));
  std::vector<DeviceSummary> out;
  for (;;) {
    SSMTUNE_ASSIGN_OR_RETURN(bool row, st.step());
    if (!row) break;
    DeviceSummary s;
    s.device = read_device(st, 0);
    s.measurements = st.column_int(8);
    s.problems = st.column_int(9);
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::vector<ProblemSummary>> TuningDb::problems(const std::string& family) {
  SSMTUNE_ASSIGN_OR_RETURN(
      Statement st,
      c_.prepare("SELECT p.key, p.family, count(m.id), coalesce(sum(m.status = 'ok'), 0), "
                 "count(DISTINCT m.device_uuid), (SELECT count(*) FROM best b WHERE "
                 "b.problem_key = p.key) FROM problems p LEFT JOIN measurements m ON "
                 "m.problem_key = p.key WHERE (?1 = '' OR p.family = ?1) GROUP BY p.key "
                 "ORDER BY p.key"));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, family));
  std::vector<ProblemSummary> out;
  for (;;) {
    SSMTUNE_ASSIGN_OR_RETURN(bool row, st.step());
    if (!row) break;
    out.push_back({st.column_text(0), st.column_text(1), st.column_int(2), st.column_int(3),
                   st.column_int(4), st.column_int(5)});
  }
  return out;
}

Result<bool> TuningDb::has_problem(const std::string& key) {
  SSMTUNE_ASSIGN_OR_RETURN(Statement st, c_.prepare("SELECT 1 FROM problems WHERE key = ?1"));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, qualified_key(key)));
  return st.step();
}

Status TuningDb::require_device(const std::string& uuid) {
  SSMTUNE_ASSIGN_OR_RETURN(Statement st, c_.prepare("SELECT 1 FROM devices WHERE uuid = ?1"));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, uuid));
  SSMTUNE_ASSIGN_OR_RETURN(bool row, st.step());
  if (!row)
    return Status::invalid_argument("device '" + uuid +
                                    "' is not in the tuning database (upsert_device first)");
  return Status::ok();
}

// `key` is qualified.
Status TuningDb::upsert_problem(const std::string& key) {
  SSMTUNE_RETURN_IF_ERROR(check_problem_key(key));
  SSMTUNE_ASSIGN_OR_RETURN(Statement st,
                           c_.prepare("INSERT INTO problems (key, family, params) VALUES (?1, ?2, "
                                      "?3) ON CONFLICT (key) DO NOTHING"));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, key));
  SSMTUNE_RETURN_IF_ERROR(st.bind(2, family_of_key(key)));
  SSMTUNE_RETURN_IF_ERROR(st.bind(3, key_params(key_body(key))));
  return st.run();
}

Status TuningDb::upsert_config(const std::string& family, const std::string& key) {
  SSMTUNE_RETURN_IF_ERROR(check_config_key(family, key));
  SSMTUNE_ASSIGN_OR_RETURN(Statement st,
                           c_.prepare("INSERT INTO configs (family, key, params) VALUES (?1, ?2, "
                                      "?3) ON CONFLICT (family, key) DO NOTHING"));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, family));
  SSMTUNE_RETURN_IF_ERROR(st.bind(2, key));
  SSMTUNE_RETURN_IF_ERROR(st.bind(3, key_params(key)));
  return st.run();
}

// --- Measurements

Status TuningDb::insert_measurement(const Measurement& given) {
  Measurement m = given;
  m.problem_key = qualified_key(m.problem_key);
  SSMTUNE_ASSIGN_OR_RETURN(m.family, record_family(m.family, m.problem_key));
  if (m.timestamp == 0) m.timestamp = int64_t{std::time(nullptr)};
  SSMTUNE_RETURN_IF_ERROR(require_device(m.device_uuid));
  SSMTUNE_RETURN_IF_ERROR(upsert_problem(m.problem_key));
  SSMTUNE_RETURN_IF_ERROR(upsert_config(m.family, m.config_key));
  const int n = measurement_column_count();
  SSMTUNE_ASSIGN_OR_RETURN(
      Statement st, c_.prepare("INSERT INTO measurements (" + measurement_columns() + ") VALUES (" +
                               placeholders(1, n) + ")"));
  SSMTUNE_RETURN_IF_ERROR(bind_measurement(st, 1, m));
  SSMTUNE_RETURN_IF_ERROR(st.run());
  if (m.errors.empty()) return Status::ok();
  const int64_t id = c_.last_insert_rowid();
  SSMTUNE_ASSIGN_OR_RETURN(
      Statement err,
      c_.prepare("INSERT INTO measurement_errors (measurement_id, " + error_columns() +
                 ") VALUES (?1, " + placeholders(2, error_column_count()) + ")"));
  for (const OutputError& e : m.errors) {
    if (e.output.empty()) return Status::invalid_argument("an error without an output name");
    SSMTUNE_RETURN_IF_ERROR(err.reset());
    SSMTUNE_RETURN_IF_ERROR(err.bind(1, id));
    SSMTUNE_RETURN_IF_ERROR(bind_error(err, 2, e));
    Status s = err.run();
    if (!s.is_ok() && s.message().find("UNIQUE") != std::string::npos)
      return Status::invalid_argument("output '" + e.output + "' has two errors");
    SSMTUNE_RETURN_IF_ERROR(s);
  }
  return Status::ok();
}

Status TuningDb::add_measurements(const std::vector<Measurement>& ms) {
  for (size_t i = 0; i < ms.size(); ++i)
    SSMTUNE_RETURN_IF_ERROR(check_measurement(ms[i], "measurement " + std::to_string(i), true));
  return write_transaction([&]() -> Status {
    for (size_t i = 0; i < ms.size(); ++i)
      SSMTUNE_RETURN_IF_ERROR(
          insert_measurement(ms[i]).with_context("measurement " + std::to_string(i)));
    return Status::ok();
  });
}

Result<std::vector<Measurement>> TuningDb::measurements(const MeasurementFilter& f) {
  // One statement (a consistent snapshot): the selected measurements joined
  // with their errors, one row per error (or one with NULLs for none).
  std::string where =
      "(?1 = '' OR device_uuid = ?1) AND (?2 = '' OR problem_key = ?2) AND (?3 = '' OR "
      "config_key = ?3) AND (?4 = '' OR status = ?4) AND (?5 = '' OR family = ?5)";
  if (f.current) where += " AND " + current_clause(6);
  std::string selected = "SELECT * FROM measurements WHERE " + where;
  if (f.limit > 0) selected += " ORDER BY timestamp DESC, id DESC LIMIT " + std::to_string(f.limit);
  const int n = measurement_column_count();
  SSMTUNE_ASSIGN_OR_RETURN(
      Statement st,
      c_.prepare("SELECT m.id, " + measurement_columns("m.") + ", e.measurement_id, " +
                 error_columns("e.") + " FROM (" + selected +
                 ") m LEFT JOIN measurement_errors e ON e.measurement_id = m.id ORDER BY "
                 "m.timestamp, m.id, e.rowid"));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, f.device_uuid));
  SSMTUNE_RETURN_IF_ERROR(
      st.bind(2, f.problem_key.empty() ? std::string() : qualified_key(f.problem_key)));
  SSMTUNE_RETURN_IF_ERROR(st.bind(3, f.config_key));
  SSMTUNE_RETURN_IF_ERROR(st.bind(4, f.status ? to_string(*f.status) : ""));
  SSMTUNE_RETURN_IF_ERROR(st.bind(5, f.family));
  if (f.current) SSMTUNE_RETURN_IF_ERROR(bind_versions(st, 6, *f.current));
  std::vector<Measurement> out;
  int64_t last_id = 0;
  for (;;) {
    SSMTUNE_ASSIGN_OR_RETURN(bool row, st.step());
    if (!row) break;
    const int64_t id = st.column_int(0);
    if (out.empty() || id != last_id) {
      SSMTUNE_ASSIGN_OR_RETURN(Measurement m, read_measurement(st, 1));
      out.push_back(std::move(m));
      last_id = id;
    }
    if (!st.column_is_null(1 + n)) out.back().errors.push_back(read_error(st, 2 + n));
  }
  return out;
}

// --- Best entries

Status TuningDb::insert_best(const BestEntry& given) {
  const std::string key = qualified_key(given.problem_key);
  SSMTUNE_ASSIGN_OR_RETURN(const std::string family, record_family(given.family, key));
  SSMTUNE_RETURN_IF_ERROR(require_device(given.device_uuid));
  SSMTUNE_RETURN_IF_ERROR(upsert_problem(key));
  SSMTUNE_RETURN_IF_ERROR(upsert_config(family, given.config_key));
  SSMTUNE_ASSIGN_OR_RETURN(Statement st,
                           c_.prepare(std::string("INSERT OR REPLACE INTO best (") + kBestColumns +
                                      ") VALUES (" + placeholders(1, 12) + ")"));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, family));
  SSMTUNE_RETURN_IF_ERROR(st.bind(2, given.device_uuid));
  SSMTUNE_RETURN_IF_ERROR(st.bind(3, key));
  SSMTUNE_RETURN_IF_ERROR(st.bind(4, given.config_key));
  SSMTUNE_RETURN_IF_ERROR(st.bind(5, given.median_ms));
  SSMTUNE_RETURN_IF_ERROR(st.bind(6, given.spread_ms));
  SSMTUNE_RETURN_IF_ERROR(st.bind(7, given.rel_l2));
  SSMTUNE_RETURN_IF_ERROR(st.bind(8, given.template_hash));
  SSMTUNE_RETURN_IF_ERROR(st.bind(9, given.driver_version));
  SSMTUNE_RETURN_IF_ERROR(st.bind(10, given.nvrtc_version));
  SSMTUNE_RETURN_IF_ERROR(
      st.bind(11, given.timestamp != 0 ? given.timestamp : int64_t{std::time(nullptr)}));
  SSMTUNE_RETURN_IF_ERROR(st.bind(12, given.rule));
  return st.run();
}

Status TuningDb::set_best(const BestEntry& b) {
  SSMTUNE_RETURN_IF_ERROR(check_best_entry(b, "best entry", true));
  return write_transaction([&] { return insert_best(b); });
}

Result<std::optional<BestEntry>> TuningDb::best(const std::string& device_uuid,
                                                const std::string& problem_key,
                                                const Versions& current) {
  SSMTUNE_ASSIGN_OR_RETURN(Statement st,
                           c_.prepare(std::string("SELECT ") + kBestColumns +
                                      " FROM best WHERE device_uuid = ?1 AND problem_key = ?2"));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, device_uuid));
  SSMTUNE_RETURN_IF_ERROR(st.bind(2, qualified_key(problem_key)));
  SSMTUNE_ASSIGN_OR_RETURN(bool row, st.step());
  if (!row) return std::optional<BestEntry>();
  return std::optional<BestEntry>(read_best(st, current));
}

Result<std::vector<BestEntry>> TuningDb::list_best(const Versions& current,
                                                   const std::string& device_uuid,
                                                   const std::string& family) {
  SSMTUNE_ASSIGN_OR_RETURN(Statement st,
                           c_.prepare(std::string("SELECT ") + kBestColumns +
                                      " FROM best WHERE (?1 = '' OR device_uuid = ?1) AND (?2 = '' "
                                      "OR family = ?2) ORDER BY device_uuid, problem_key"));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, device_uuid));
  SSMTUNE_RETURN_IF_ERROR(st.bind(2, family));
  std::vector<BestEntry> out;
  for (;;) {
    SSMTUNE_ASSIGN_OR_RETURN(bool row, st.step());
    if (!row) break;
    out.push_back(read_best(st, current));
  }
  return out;
}

// --- Maintenance

Result<PruneReport> TuningDb::prune(const PruneOptions& o) {
  if (!o.stale && !o.failed && !o.older_than_days)
    return Status::invalid_argument("nothing to prune: ask for stale, failed or older entries");
  const Versions& v = o.versions;
  if (o.stale && v.driver_version == 0 && v.nvrtc_version.empty() && v.template_hash.empty())
    return Status::invalid_argument("pruning stale entries needs the current versions");
  if (o.older_than_days && *o.older_than_days < 0)
    return Status::invalid_argument("older-than must be a number of days >= 0");
  // One condition per table, so a row matching several criteria counts
  // once; a dry run counts with SELECT (it works on a read-only database).
  // Deleting a measurement deletes its errors (ON DELETE CASCADE).
  const int64_t now = o.now != 0 ? o.now : int64_t{std::time(nullptr)};
  std::string m_where, b_where;
  auto either = [](std::string& w, const std::string& c) { w += (w.empty() ? "" : " OR ") + c; };
  if (o.failed) either(m_where, "status IN ('compile_failed', 'launch_failed', 'faulted')");
  if (o.older_than_days) either(m_where, "timestamp < ?4");
  if (o.stale) {
    either(m_where, "NOT (" + current_clause(1) + ")");
    either(b_where, "NOT (" + current_clause(1) + ")");
  }
  auto run = [&](const char* table, const std::string& where, bool count) -> Result<int64_t> {
    if (where.empty()) return int64_t{0};
    SSMTUNE_ASSIGN_OR_RETURN(
        Statement st, c_.prepare(std::string(count ? "SELECT count(*) FROM " : "DELETE FROM ") +
                                 table + " WHERE " + where));
    // Parameters 1-3: versions; 4: the age cut-off (unused ones are unbound).
    if (o.stale) SSMTUNE_RETURN_IF_ERROR(bind_versions(st, 1, v));
    if (o.older_than_days && std::string(table) == "measurements")
      SSMTUNE_RETURN_IF_ERROR(st.bind(4, now - int64_t{*o.older_than_days} * 86400));
    if (count) {
      SSMTUNE_ASSIGN_OR_RETURN(bool row, st.step());
      return row ? st.column_int(0) : int64_t{0};
    }
    SSMTUNE_RETURN_IF_ERROR(st.run());
    return c_.changes();
  };
  PruneReport report;
  if (o.dry_run) {
    SSMTUNE_ASSIGN_OR_RETURN(Transaction tx, Transaction::begin(c_, Transaction::Kind::kDeferred));
    SSMTUNE_ASSIGN_OR_RETURN(report.measurements, run("measurements", m_where, true));
    SSMTUNE_ASSIGN_OR_RETURN(report.best, run("best", b_where, true));
    return report;
  }
  Status s = write_transaction([&]() -> Status {
    report = {};
    SSMTUNE_ASSIGN_OR_RETURN(report.measurements, run("measurements", m_where, false));
    SSMTUNE_ASSIGN_OR_RETURN(report.best, run("best", b_where, false));
    return Status::ok();
  });
  SSMTUNE_RETURN_IF_ERROR(s);
  return report;
}

}  // namespace ssmtune::cache
