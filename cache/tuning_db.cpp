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

#include "tuner/fwd/config.h"
#include "tuner/fwd/problem.h"

namespace ssmtune::cache {
namespace {

namespace fs = std::filesystem;

constexpr int kWriteAttempts = 5;

// The 23 columns of a measurement, in Measurement's order.
constexpr char kMeasurementColumns[] =
    "device_uuid, problem_key, config_key, status, median_ms, spread_ms, min_ms, repeats, "
    "rel_l2, max_abs_rel, max_rel, nan_inf, unwritten, verdict, error_budget, detail, "
    "template_hash, driver_version, nvrtc_version, timestamp, registers, spill_bytes, "
    "shared_bytes";

constexpr char kBestColumns[] =
    "device_uuid, problem_key, config_key, median_ms, spread_ms, rel_l2, template_hash, "
    "driver_version, nvrtc_version, timestamp, rule";

Result<Measurement> read_measurement(const Statement& st) {
  Measurement m;
  m.device_uuid = st.column_text(0);
  m.problem_key = st.column_text(1);
  m.config_key = st.column_text(2);
  auto status = parse_measure_status(st.column_text(3));
  if (!status) return Status::corrupt("measurement row: " + status.status().message());
  m.status = *status;
  m.median_ms = st.column_double(4);
  m.spread_ms = st.column_double(5);
  m.min_ms = st.column_double(6);
  m.repeats = static_cast<int>(st.column_int(7));
  m.rel_l2 = st.column_double(8);
  m.max_abs_rel = st.column_double(9);
  m.max_rel = st.column_double(10);
  m.nan_inf = st.column_int(11);
  m.unwritten = st.column_int(12);
  m.verdict = st.column_text(13);
  m.error_budget = st.column_double(14);
  m.detail = st.column_text(15);
  m.template_hash = st.column_text(16);
  m.driver_version = static_cast<int>(st.column_int(17));
  m.nvrtc_version = st.column_text(18);
  m.timestamp = st.column_int(19);
  m.registers = static_cast<int>(st.column_int(20));
  m.spill_bytes = static_cast<int>(st.column_int(21));
  m.shared_bytes = static_cast<int>(st.column_int(22));
  return m;
}

BestEntry read_best(const Statement& st, const Versions& current) {
  BestEntry b;
  b.device_uuid = st.column_text(0);
  b.problem_key = st.column_text(1);
  b.config_key = st.column_text(2);
  b.median_ms = st.column_double(3);
  b.spread_ms = st.column_double(4);
  b.rel_l2 = st.column_double(5);
  b.template_hash = st.column_text(6);
  b.driver_version = static_cast<int>(st.column_int(7));
  b.nvrtc_version = st.column_text(8);
  b.timestamp = st.column_int(9);
  b.rule = st.column_text(10);
  b.stale = is_stale(b, current);
  return b;
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
  SSMTUNE_ASSIGN_OR_RETURN(Connection c, Connection::open(path, SQLITE_OPEN_READONLY));
  SSMTUNE_RETURN_IF_ERROR(c.set_busy_timeout(kBusyTimeoutMs));
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
    SSMTUNE_ASSIGN_OR_RETURN(Connection c, Connection::open(path, SQLITE_OPEN_READONLY));
    SSMTUNE_RETURN_IF_ERROR(c.set_busy_timeout(kBusyTimeoutMs));
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
                 "nvrtc_version) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (uuid) DO UPDATE "
                 "SET name = excluded.name, cc_major = excluded.cc_major, cc_minor = "
                 "excluded.cc_minor, sm_count = excluded.sm_count, driver_version = "
                 "excluded.driver_version, nvrtc_version = excluded.nvrtc_version"));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, d.uuid));
  SSMTUNE_RETURN_IF_ERROR(st.bind(2, d.name));
  SSMTUNE_RETURN_IF_ERROR(st.bind(3, d.cc_major));
  SSMTUNE_RETURN_IF_ERROR(st.bind(4, d.cc_minor));
  SSMTUNE_RETURN_IF_ERROR(st.bind(5, d.sm_count));
  SSMTUNE_RETURN_IF_ERROR(st.bind(6, d.driver_version));
  SSMTUNE_RETURN_IF_ERROR(st.bind(7, d.nvrtc_version));
  return st.run();
}

Status TuningDb::upsert_device(const DeviceRecord& d) {
  if (d.uuid.empty()) return Status::invalid_argument("device record without a UUID");
  return write_transaction([&] { return write_device(d); });
}

Result<std::optional<DeviceRecord>> TuningDb::device(const std::string& uuid) {
  SSMTUNE_ASSIGN_OR_RETURN(
      Statement st, c_.prepare("SELECT uuid, name, cc_major, cc_minor, sm_count, "
                               "driver_version, nvrtc_version FROM devices WHERE uuid = ?1"));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, uuid));
  SSMTUNE_ASSIGN_OR_RETURN(bool row, st.step());
  if (!row) return std::optional<DeviceRecord>();
  return std::optional<DeviceRecord>(
      DeviceRecord{st.column_text(0), st.column_text(1), static_cast<int>(st.column_int(2)),
                   static_cast<int>(st.column_int(3)), static_cast<int>(st.column_int(4)),
                   static_cast<int>(st.column_int(5)), st.column_text(6)});
}

Result<std::vector<DeviceSummary>> TuningDb::devices() {
  SSMTUNE_ASSIGN_OR_RETURN(
      Statement st,
      c_.prepare("SELECT d.uuid, d.name, d.cc_major, d.cc_minor, d.sm_count, d.driver_version, "
                 "d.nvrtc_version, count(m.id), count(DISTINCT m.problem_key) FROM devices d "
                 "LEFT JOIN measurements m ON m.device_uuid = d.uuid GROUP BY d.uuid "
                 "ORDER BY d.name, d.uuid"));
  std::vector<DeviceSummary> out;
  for (;;) {
    SSMTUNE_ASSIGN_OR_RETURN(bool row, st.step());
    if (!row) break;
    DeviceSummary s;
    s.device = {st.column_text(0),
                st.column_text(1),
                static_cast<int>(st.column_int(2)),
                static_cast<int>(st.column_int(3)),
                static_cast<int>(st.column_int(4)),
                static_cast<int>(st.column_int(5)),
                st.column_text(6)};
    s.measurements = st.column_int(7);
    s.problems = st.column_int(8);
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::vector<ProblemSummary>> TuningDb::problems() {
  SSMTUNE_ASSIGN_OR_RETURN(
      Statement st, c_.prepare("SELECT p.key, count(m.id), coalesce(sum(m.status = 'ok'), 0), "
                               "count(DISTINCT m.device_uuid), (SELECT count(*) FROM best b WHERE "
                               "b.problem_key = p.key) FROM problems p LEFT JOIN measurements m ON "
                               "m.problem_key = p.key GROUP BY p.key ORDER BY p.key"));
  std::vector<ProblemSummary> out;
  for (;;) {
    SSMTUNE_ASSIGN_OR_RETURN(bool row, st.step());
    if (!row) break;
    out.push_back({st.column_text(0), st.column_int(1), st.column_int(2), st.column_int(3),
                   st.column_int(4)});
  }
  return out;
}

Result<bool> TuningDb::has_problem(const std::string& key) {
  SSMTUNE_ASSIGN_OR_RETURN(Statement st, c_.prepare("SELECT 1 FROM problems WHERE key = ?1"));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, key));
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

Status TuningDb::upsert_problem(const std::string& key) {
  auto p = FwdProblem::from_key(key);
  if (!p) return p.status();
  SSMTUNE_ASSIGN_OR_RETURN(
      Statement st,
      c_.prepare("INSERT INTO problems (key, family, batch, dim, seqlen, dstate, groups, dtype, "
                 "variable_b, variable_c, has_d, has_z, has_delta_bias, delta_softplus, "
                 "return_last_state, has_initial_state) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
                 "?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16) ON CONFLICT (key) DO NOTHING"));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, key));
  SSMTUNE_RETURN_IF_ERROR(st.bind(2, p->family_key()));
  SSMTUNE_RETURN_IF_ERROR(st.bind(3, p->batch));
  SSMTUNE_RETURN_IF_ERROR(st.bind(4, p->dim));
  SSMTUNE_RETURN_IF_ERROR(st.bind(5, p->seqlen));
  SSMTUNE_RETURN_IF_ERROR(st.bind(6, p->dstate));
  SSMTUNE_RETURN_IF_ERROR(st.bind(7, p->groups));
  SSMTUNE_RETURN_IF_ERROR(st.bind(8, to_string(p->dtype)));
  const bool flags[] = {p->variable_b,
                        p->variable_c,
                        p->has_d,
                        p->has_z,
                        p->has_delta_bias,
                        p->delta_softplus,
                        p->return_last_state,
                        p->has_initial_state};
  for (int i = 0; i < 8; ++i) SSMTUNE_RETURN_IF_ERROR(st.bind(9 + i, int64_t{flags[i]}));
  return st.run();
}

Status TuningDb::upsert_config(const std::string& key) {
  auto k = FwdConfig::from_key(key);
  if (!k) return k.status();
  SSMTUNE_ASSIGN_OR_RETURN(
      Statement st,
      c_.prepare("INSERT INTO configs (key, algo, chunk, d_step, acc, threads, items, n_split, "
                 "exp_mode, poly_share) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) "
                 "ON CONFLICT (key) DO NOTHING"));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, key));
  SSMTUNE_RETURN_IF_ERROR(st.bind(2, to_string(k->algo)));
  SSMTUNE_RETURN_IF_ERROR(st.bind(3, k->chunk));
  SSMTUNE_RETURN_IF_ERROR(st.bind(4, k->d_step));
  SSMTUNE_RETURN_IF_ERROR(st.bind(5, to_string(k->acc)));
  SSMTUNE_RETURN_IF_ERROR(st.bind(6, k->threads));
  SSMTUNE_RETURN_IF_ERROR(st.bind(7, k->items));
  SSMTUNE_RETURN_IF_ERROR(st.bind(8, k->n_split));
  SSMTUNE_RETURN_IF_ERROR(st.bind(9, to_string(k->exp_mode)));
  SSMTUNE_RETURN_IF_ERROR(st.bind(10, k->poly_share));
  return st.run();
}

// --- Measurements

Status TuningDb::insert_measurement(const Measurement& m) {
  SSMTUNE_RETURN_IF_ERROR(require_device(m.device_uuid));
  SSMTUNE_RETURN_IF_ERROR(upsert_problem(m.problem_key));
  SSMTUNE_RETURN_IF_ERROR(upsert_config(m.config_key));
  SSMTUNE_ASSIGN_OR_RETURN(
      Statement st, c_.prepare(std::string("INSERT INTO measurements (") + kMeasurementColumns +
                               ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
                               "?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23)"));
  int i = 0;
  SSMTUNE_RETURN_IF_ERROR(st.bind(++i, m.device_uuid));
  SSMTUNE_RETURN_IF_ERROR(st.bind(++i, m.problem_key));
  SSMTUNE_RETURN_IF_ERROR(st.bind(++i, m.config_key));
  SSMTUNE_RETURN_IF_ERROR(st.bind(++i, to_string(m.status)));
  SSMTUNE_RETURN_IF_ERROR(st.bind(++i, m.median_ms));
  SSMTUNE_RETURN_IF_ERROR(st.bind(++i, m.spread_ms));
  SSMTUNE_RETURN_IF_ERROR(st.bind(++i, m.min_ms));
  SSMTUNE_RETURN_IF_ERROR(st.bind(++i, m.repeats));
  SSMTUNE_RETURN_IF_ERROR(st.bind(++i, m.rel_l2));
  SSMTUNE_RETURN_IF_ERROR(st.bind(++i, m.max_abs_rel));
  SSMTUNE_RETURN_IF_ERROR(st.bind(++i, m.max_rel));
  SSMTUNE_RETURN_IF_ERROR(st.bind(++i, m.nan_inf));
  SSMTUNE_RETURN_IF_ERROR(st.bind(++i, m.unwritten));
  SSMTUNE_RETURN_IF_ERROR(st.bind(++i, m.verdict));
  SSMTUNE_RETURN_IF_ERROR(st.bind(++i, m.error_budget));
  SSMTUNE_RETURN_IF_ERROR(st.bind(++i, m.detail));
  SSMTUNE_RETURN_IF_ERROR(st.bind(++i, m.template_hash));
  SSMTUNE_RETURN_IF_ERROR(st.bind(++i, m.driver_version));
  SSMTUNE_RETURN_IF_ERROR(st.bind(++i, m.nvrtc_version));
  SSMTUNE_RETURN_IF_ERROR(
      st.bind(++i, m.timestamp != 0 ? m.timestamp : int64_t{std::time(nullptr)}));
  SSMTUNE_RETURN_IF_ERROR(st.bind(++i, m.registers));
  SSMTUNE_RETURN_IF_ERROR(st.bind(++i, m.spill_bytes));
  SSMTUNE_RETURN_IF_ERROR(st.bind(++i, m.shared_bytes));
  return st.run();
}

Status TuningDb::add_measurement(const Measurement& m) {
  return write_transaction([&] { return insert_measurement(m); });
}

Status TuningDb::add_measurements(const std::vector<Measurement>& ms) {
  return write_transaction([&]() -> Status {
    for (size_t i = 0; i < ms.size(); ++i)
      SSMTUNE_RETURN_IF_ERROR(
          insert_measurement(ms[i]).with_context("measurement " + std::to_string(i)));
    return Status::ok();
  });
}

Result<std::vector<Measurement>> TuningDb::measurements(const MeasurementFilter& f) {
  std::string sql = std::string("SELECT ") + kMeasurementColumns +
                    " FROM measurements WHERE (?1 = '' OR device_uuid = ?1) AND (?2 = '' OR "
                    "problem_key = ?2) AND (?3 = '' OR config_key = ?3) AND (?4 = '' OR status "
                    "= ?4)";
  if (f.current) sql += " AND " + current_clause(5);
  sql += f.limit > 0 ? " ORDER BY timestamp DESC, id DESC LIMIT " + std::to_string(f.limit)
                     : " ORDER BY timestamp, id";
  SSMTUNE_ASSIGN_OR_RETURN(Statement st, c_.prepare(sql));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, f.device_uuid));
  SSMTUNE_RETURN_IF_ERROR(st.bind(2, f.problem_key));
  SSMTUNE_RETURN_IF_ERROR(st.bind(3, f.config_key));
  SSMTUNE_RETURN_IF_ERROR(st.bind(4, f.status ? to_string(*f.status) : ""));
  if (f.current) SSMTUNE_RETURN_IF_ERROR(bind_versions(st, 5, *f.current));
  std::vector<Measurement> out;
  for (;;) {
    SSMTUNE_ASSIGN_OR_RETURN(bool row, st.step());
    if (!row) break;
    SSMTUNE_ASSIGN_OR_RETURN(Measurement m, read_measurement(st));
    out.push_back(std::move(m));
  }
  if (f.limit > 0) std::reverse(out.begin(), out.end());
  return out;
}

Result<bool> TuningDb::has_measurement(const std::string& device_uuid,
                                       const std::string& problem_key,
                                       const std::string& config_key,
                                       const std::string& template_hash, int driver_version,
                                       const std::string& nvrtc_version) {
  SSMTUNE_ASSIGN_OR_RETURN(
      Statement st,
      c_.prepare("SELECT 1 FROM measurements WHERE device_uuid = ?1 AND problem_key = ?2 AND "
                 "config_key = ?3 AND template_hash = ?4 AND driver_version = ?5 AND "
                 "nvrtc_version = ?6 LIMIT 1"));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, device_uuid));
  SSMTUNE_RETURN_IF_ERROR(st.bind(2, problem_key));
  SSMTUNE_RETURN_IF_ERROR(st.bind(3, config_key));
  SSMTUNE_RETURN_IF_ERROR(st.bind(4, template_hash));
  SSMTUNE_RETURN_IF_ERROR(st.bind(5, driver_version));
  SSMTUNE_RETURN_IF_ERROR(st.bind(6, nvrtc_version));
  return st.step();
}

// --- Best entries

Status TuningDb::insert_best(const BestEntry& b) {
  SSMTUNE_RETURN_IF_ERROR(require_device(b.device_uuid));
  SSMTUNE_RETURN_IF_ERROR(upsert_problem(b.problem_key));
  SSMTUNE_RETURN_IF_ERROR(upsert_config(b.config_key));
  SSMTUNE_ASSIGN_OR_RETURN(Statement st,
                           c_.prepare(std::string("INSERT OR REPLACE INTO best (") + kBestColumns +
                                      ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, b.device_uuid));
  SSMTUNE_RETURN_IF_ERROR(st.bind(2, b.problem_key));
  SSMTUNE_RETURN_IF_ERROR(st.bind(3, b.config_key));
  SSMTUNE_RETURN_IF_ERROR(st.bind(4, b.median_ms));
  SSMTUNE_RETURN_IF_ERROR(st.bind(5, b.spread_ms));
  SSMTUNE_RETURN_IF_ERROR(st.bind(6, b.rel_l2));
  SSMTUNE_RETURN_IF_ERROR(st.bind(7, b.template_hash));
  SSMTUNE_RETURN_IF_ERROR(st.bind(8, b.driver_version));
  SSMTUNE_RETURN_IF_ERROR(st.bind(9, b.nvrtc_version));
  SSMTUNE_RETURN_IF_ERROR(
      st.bind(10, b.timestamp != 0 ? b.timestamp : int64_t{std::time(nullptr)}));
  SSMTUNE_RETURN_IF_ERROR(st.bind(11, b.rule));
  return st.run();
}

Status TuningDb::set_best(const BestEntry& b) {
  return write_transaction([&] { return insert_best(b); });
}

Result<std::optional<BestEntry>> TuningDb::best(const std::string& device_uuid,
                                                const std::string& problem_key,
                                                const Versions& current) {
  SSMTUNE_ASSIGN_OR_RETURN(Statement st,
                           c_.prepare(std::string("SELECT ") + kBestColumns +
                                      " FROM best WHERE device_uuid = ?1 AND problem_key = ?2"));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, device_uuid));
  SSMTUNE_RETURN_IF_ERROR(st.bind(2, problem_key));
  SSMTUNE_ASSIGN_OR_RETURN(bool row, st.step());
  if (!row) return std::optional<BestEntry>();
  return std::optional<BestEntry>(read_best(st, current));
}

Result<std::vector<BestEntry>> TuningDb::list_best(const Versions& current,
                                                   const std::string& device_uuid) {
  SSMTUNE_ASSIGN_OR_RETURN(Statement st,
                           c_.prepare(std::string("SELECT ") + kBestColumns +
                                      " FROM best WHERE (?1 = '' OR device_uuid = ?1) ORDER BY "
                                      "device_uuid, problem_key"));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, device_uuid));
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
  PruneReport report;
  Status s = write_transaction(
      [&]() -> Status {
        report = {};
        if (o.failed) {
          SSMTUNE_RETURN_IF_ERROR(
              c_.exec("DELETE FROM measurements WHERE status IN ('compile_failed', "
                      "'launch_failed', 'faulted')"));
          report.measurements += c_.changes();
        }
        if (o.older_than_days) {
          const int64_t now = o.now != 0 ? o.now : int64_t{std::time(nullptr)};
          SSMTUNE_ASSIGN_OR_RETURN(Statement st,
                                   c_.prepare("DELETE FROM measurements WHERE timestamp < ?1"));
          SSMTUNE_RETURN_IF_ERROR(st.bind(1, now - int64_t{*o.older_than_days} * 86400));
          SSMTUNE_RETURN_IF_ERROR(st.run());
          report.measurements += c_.changes();
        }
        if (o.stale) {
          for (const char* table : {"measurements", "best"}) {
            SSMTUNE_ASSIGN_OR_RETURN(
                Statement st, c_.prepare(std::string("DELETE FROM ") + table + " WHERE NOT (" +
                                         current_clause(1) + ")"));
            SSMTUNE_RETURN_IF_ERROR(bind_versions(st, 1, v));
            SSMTUNE_RETURN_IF_ERROR(st.run());
            (std::string(table) == "best" ? report.best : report.measurements) += c_.changes();
          }
        }
        return Status::ok();
      },
      !o.dry_run);
  SSMTUNE_RETURN_IF_ERROR(s);
  return report;
}

}  // namespace ssmtune::cache
