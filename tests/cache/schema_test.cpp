// The schema's migrations, on databases as older versions of ssmtune wrote
// them: a version 2 file made as the version 2 code made it (its schema
// SQL and its INSERTs, with ok, inaccurate, stale, faulted, pruned and
// compile-failed rows and best entries) keeps every row and value through
// the migration to version 3, ends with the same tables as a new database,
// and a version 3 file is opened without being rewritten.
#include "cache/schema.h"

#include <sqlite3.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "cache/db_fixtures.h"
#include "cache/keys.h"
#include "cache/tuning_db.h"

namespace ssmtune::cache {
namespace {

using testing::TempDir;

// Version 2 as it shipped (cache/schema.cpp at bb434b2).
constexpr char kSchemaV2[] = R"sql(
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE devices (
  uuid TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  cc_major INTEGER NOT NULL,
  cc_minor INTEGER NOT NULL,
  sm_count INTEGER NOT NULL,
  driver_version INTEGER NOT NULL,
  nvrtc_version TEXT NOT NULL
);
CREATE TABLE problems (
  key TEXT PRIMARY KEY,
  family TEXT NOT NULL,
  batch INTEGER NOT NULL,
  dim INTEGER NOT NULL,
  seqlen INTEGER NOT NULL,
  dstate INTEGER NOT NULL,
  groups INTEGER NOT NULL,
  dtype TEXT NOT NULL,
  variable_b INTEGER NOT NULL,
  variable_c INTEGER NOT NULL,
  has_d INTEGER NOT NULL,
  has_z INTEGER NOT NULL,
  has_delta_bias INTEGER NOT NULL,
  delta_softplus INTEGER NOT NULL,
  return_last_state INTEGER NOT NULL,
  has_initial_state INTEGER NOT NULL
);
CREATE INDEX problems_family ON problems(family);
CREATE TABLE configs (
  key TEXT PRIMARY KEY,
  algo TEXT NOT NULL,
  chunk INTEGER NOT NULL,
  d_step INTEGER NOT NULL,
  acc TEXT NOT NULL,
  threads INTEGER NOT NULL,
  items INTEGER NOT NULL,
  n_split INTEGER NOT NULL,
  exp_mode TEXT NOT NULL,
  poly_share INTEGER NOT NULL
);
CREATE TABLE measurements (
  id INTEGER PRIMARY KEY,
  device_uuid TEXT NOT NULL REFERENCES devices(uuid),
  problem_key TEXT NOT NULL REFERENCES problems(key),
  config_key TEXT NOT NULL REFERENCES configs(key),
  status TEXT NOT NULL CHECK (status IN ('ok', 'pruned', 'compile_failed', 'launch_failed',
                                         'faulted', 'inaccurate')),
  median_ms REAL,
  spread_ms REAL,
  min_ms REAL,
  repeats INTEGER NOT NULL,
  rel_l2 REAL,
  max_abs_rel REAL,
  max_rel REAL,
  nan_inf INTEGER NOT NULL,
  unwritten INTEGER NOT NULL,
  verdict TEXT NOT NULL,
  error_budget REAL,
  detail TEXT NOT NULL,
  template_hash TEXT NOT NULL,
  driver_version INTEGER NOT NULL,
  nvrtc_version TEXT NOT NULL,
  timestamp INTEGER NOT NULL,
  registers INTEGER NOT NULL,
  spill_bytes INTEGER NOT NULL,
  shared_bytes INTEGER NOT NULL
);
CREATE INDEX measurements_lookup
  ON measurements(device_uuid, problem_key, config_key, timestamp);
CREATE INDEX measurements_problem ON measurements(problem_key);
CREATE TABLE best (
  device_uuid TEXT NOT NULL REFERENCES devices(uuid),
  problem_key TEXT NOT NULL REFERENCES problems(key),
  config_key TEXT NOT NULL REFERENCES configs(key),
  median_ms REAL,
  spread_ms REAL,
  rel_l2 REAL,
  template_hash TEXT NOT NULL,
  driver_version INTEGER NOT NULL,
  nvrtc_version TEXT NOT NULL,
  timestamp INTEGER NOT NULL,
  rule TEXT NOT NULL,
  PRIMARY KEY (device_uuid, problem_key)
);
CREATE TABLE cubins (
  key TEXT PRIMARY KEY,
  arch TEXT NOT NULL,
  cubin BLOB NOT NULL,
  kernels TEXT NOT NULL,
  log TEXT NOT NULL,
  created INTEGER NOT NULL
);
)sql";

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

Connection raw(const std::string& path) {
  auto c = Connection::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  REQUIRE(c.is_ok());
  return std::move(c).value();
}

// One version 2 measurement row: its columns as the version 2 code bound
// them (Measurement of cache/records.h at bb434b2, in its order).
struct V2Row {
  std::string device, problem, config, status;
  double median_ms, spread_ms, min_ms;
  int64_t repeats;
  double rel_l2, max_abs_rel, max_rel;
  int64_t nan_inf, unwritten;
  std::string verdict;
  double error_budget;
  std::string detail, template_hash;
  int64_t driver_version;
  std::string nvrtc_version;
  int64_t timestamp, registers, spill_bytes, shared_bytes;
};

// The version 2 code's upsert_problem: the parsed problem as columns.
void v2_problem(Connection& c, const std::string& key) {
  auto p = FwdProblem::from_key(key);
  REQUIRE(p.is_ok());
  auto st = c.prepare(
      "INSERT INTO problems (key, family, batch, dim, seqlen, dstate, groups, dtype, variable_b, "
      "variable_c, has_d, has_z, has_delta_bias, delta_softplus, return_last_state, "
      "has_initial_state) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
      "?15, ?16) ON CONFLICT (key) DO NOTHING");
  REQUIRE(st.is_ok());
  REQUIRE(st->bind(1, key).is_ok());
  REQUIRE(st->bind(2, p->family_key()).is_ok());
  const int64_t sizes[] = {p->batch, p->dim, p->seqlen, p->dstate, p->groups};
  for (int i = 0; i < 5; ++i) REQUIRE(st->bind(3 + i, sizes[i]).is_ok());
  REQUIRE(st->bind(8, to_string(p->dtype)).is_ok());
  const bool flags[] = {p->variable_b,
                        p->variable_c,
                        p->has_d,
                        p->has_z,
                        p->has_delta_bias,
                        p->delta_softplus,
                        p->return_last_state,
                        p->has_initial_state};
  for (int i = 0; i < 8; ++i) REQUIRE(st->bind(9 + i, int64_t{flags[i]}).is_ok());
  REQUIRE(st->run().is_ok());
}

// The version 2 code's upsert_config.
void v2_config(Connection& c, const std::string& key) {
  auto k = FwdConfig::from_key(key);
  REQUIRE(k.is_ok());
  auto st = c.prepare(
      "INSERT INTO configs (key, algo, chunk, d_step, acc, threads, items, n_split, exp_mode, "
      "poly_share) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT (key) DO NOTHING");
  REQUIRE(st.is_ok());
  REQUIRE(st->bind(1, key).is_ok());
  REQUIRE(st->bind(2, to_string(k->algo)).is_ok());
  REQUIRE(st->bind(3, k->chunk).is_ok());
  REQUIRE(st->bind(4, k->d_step).is_ok());
  REQUIRE(st->bind(5, to_string(k->acc)).is_ok());
  REQUIRE(st->bind(6, k->threads).is_ok());
  REQUIRE(st->bind(7, k->items).is_ok());
  REQUIRE(st->bind(8, k->n_split).is_ok());
  REQUIRE(st->bind(9, to_string(k->exp_mode)).is_ok());
  REQUIRE(st->bind(10, k->poly_share).is_ok());
  REQUIRE(st->run().is_ok());
}

void v2_measurement(Connection& c, const V2Row& r) {
  v2_problem(c, r.problem);
  v2_config(c, r.config);
  auto st = c.prepare(
      "INSERT INTO measurements (device_uuid, problem_key, config_key, status, median_ms, "
      "spread_ms, min_ms, repeats, rel_l2, max_abs_rel, max_rel, nan_inf, unwritten, verdict, "
      "error_budget, detail, template_hash, driver_version, nvrtc_version, timestamp, registers, "
      "spill_bytes, shared_bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
      "?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23)");
  REQUIRE(st.is_ok());
  int i = 0;
  REQUIRE(st->bind(++i, r.device).is_ok());
  REQUIRE(st->bind(++i, r.problem).is_ok());
  REQUIRE(st->bind(++i, r.config).is_ok());
  REQUIRE(st->bind(++i, r.status).is_ok());
  for (double v : {r.median_ms, r.spread_ms, r.min_ms}) REQUIRE(st->bind(++i, v).is_ok());
  REQUIRE(st->bind(++i, r.repeats).is_ok());
  for (double v : {r.rel_l2, r.max_abs_rel, r.max_rel}) REQUIRE(st->bind(++i, v).is_ok());
  REQUIRE(st->bind(++i, r.nan_inf).is_ok());
  REQUIRE(st->bind(++i, r.unwritten).is_ok());
  REQUIRE(st->bind(++i, r.verdict).is_ok());
  REQUIRE(st->bind(++i, r.error_budget).is_ok());
  REQUIRE(st->bind(++i, r.detail).is_ok());
  REQUIRE(st->bind(++i, r.template_hash).is_ok());
  REQUIRE(st->bind(++i, r.driver_version).is_ok());
  REQUIRE(st->bind(++i, r.nvrtc_version).is_ok());
  for (int64_t v : {r.timestamp, r.registers, r.spill_bytes, r.shared_bytes})
    REQUIRE(st->bind(++i, v).is_ok());
  REQUIRE(st->run().is_ok());
}

void v2_best(Connection& c, const BestEntry& b) {
  v2_problem(c, b.problem_key);
  v2_config(c, b.config_key);
  auto st = c.prepare(
      "INSERT OR REPLACE INTO best (device_uuid, problem_key, config_key, median_ms, spread_ms, "
      "rel_l2, template_hash, driver_version, nvrtc_version, timestamp, rule) VALUES (?1, ?2, "
      "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
  REQUIRE(st.is_ok());
  REQUIRE(st->bind(1, b.device_uuid).is_ok());
  REQUIRE(st->bind(2, b.problem_key).is_ok());
  REQUIRE(st->bind(3, b.config_key).is_ok());
  REQUIRE(st->bind(4, b.median_ms).is_ok());
  REQUIRE(st->bind(5, b.spread_ms).is_ok());
  REQUIRE(st->bind(6, b.rel_l2).is_ok());
  REQUIRE(st->bind(7, b.template_hash).is_ok());
  REQUIRE(st->bind(8, b.driver_version).is_ok());
  REQUIRE(st->bind(9, b.nvrtc_version).is_ok());
  REQUIRE(st->bind(10, b.timestamp).is_ok());
  REQUIRE(st->bind(11, b.rule).is_ok());
  REQUIRE(st->run().is_ok());
}

bool same_number(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// Every table's columns, foreign keys and indexes, as sqlite reports them.
std::string schema_shape(Connection& c) {
  std::string out;
  auto tables = c.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  REQUIRE(tables.is_ok());
  std::vector<std::string> names;
  while (*tables->step()) names.push_back(tables->column_text(0));
  for (const auto& t : names) {
    for (const char* pragma : {"table_info", "foreign_key_list", "index_list"}) {
      auto st = c.prepare(std::string("SELECT * FROM pragma_") + pragma + "('" + t + "')");
      REQUIRE(st.is_ok());
      std::vector<std::string> rows;
      while (*st->step()) {
        std::string row;
        for (int i = 0; i < st->column_count(); ++i)
          // index_list's seq and auto-index names differ only by creation order
          if (!(std::string(pragma) == "index_list" && i == 0)) row += st->column_text(i) + "|";
        rows.push_back(row);
      }
      std::sort(rows.begin(), rows.end());
      out += t + " " + pragma + ":\n";
      for (const auto& r : rows) out += "  " + r + "\n";
    }
  }
  return out;
}

TEST_CASE("a version 2 database migrates to the current version keeping every row and value",
          "[cache][migration]") {
  TempDir dir;
  const std::string path = dir.file("v2.db");
  const auto d0 = testing::sample_device(0), d1 = testing::sample_device(1);
  const std::string p0 = key_body(testing::problem_key(0));  // with z
  const std::string p1 = key_body(testing::problem_key(1));
  const std::string hash = "0123456789abcdef0123456789abcdef";
  // clang-format off
  const std::vector<V2Row> rows = {
      // ok
      {d0.uuid, p0, testing::config_key(0), "ok", 0.112, 0.001, 0.110, 31, 3.1e-6, 9e-6, 4e-5, 0,
       0, "inside", 2e-5, "", hash, 13000, "13.0", 1700000000, 64, 0, 4096},
      // inaccurate (outside its budget), an infinite max_rel
      {d0.uuid, p0, testing::config_key(1), "inaccurate", 0.05, 0.002, 0.049, 31, 4e-3, 1e-2, kInf,
       0, 0, "outside", 2e-5, "", hash, 13000, "13.0", 1700000001, 80, 8, 8192},
      // stale: an older driver and templates
      {d1.uuid, p0, testing::config_key(0), "ok", 0.2, 0.003, 0.19, 20, 2e-6, 5e-6, 1e-5, 0, 0,
       "at-limit", 2e-5, "", "oldhash", 12040, "12.4", 1600000000, 64, 0, 4096},
      // faulted after running (sums over the outputs, NaN median and error)
      {d0.uuid, p1, testing::config_key(2), "faulted", kNaN, kNaN, kNaN, 0, kNaN, kNaN, kNaN, 7, 3,
       "defect", 2e-5, "CUDA_ERROR_ILLEGAL_ADDRESS, \"launch 3\"\nline 2", hash, 13000, "13.0",
       1700000002, 72, 0, 0},
      // faulted in the parent (the worker died): only the identity
      {d0.uuid, p1, testing::config_key(3), "faulted", 0, 0, 0, 0, 0, 0, 0, 0, 0, "", 0,
       "worker: killed after 60 s", hash, 13000, "13.0", 1700000003, 0, 0, 0},
      // pruned and compile_failed: never ran
      {d0.uuid, p1, testing::config_key(4), "pruned", 0, 0, 0, 0, 0, 0, 0, 0, 0, "", 0,
       "needs 300000 bytes of shared memory", hash, 13000, "13.0", 1700000004, 0, 0, 0},
      {d0.uuid, p1, testing::config_key(5), "compile_failed", 0, 0, 0, 0, 0, 0, 0, 0, 0, "", 0,
       "error: expected a ';'", hash, 13000, "13.0", 1700000005, 0, 0, 0},
      // launch_failed as the v2 worker reported it (the default score: inside)
      {d0.uuid, p1, testing::config_key(6), "launch_failed", 0, 0, 0, 0, 0, 0, 0, 0, 0, "inside",
       0, "too many resources requested", hash, 13000, "13.0", 1700000006, 255, 0, 0},
  };
  // clang-format on
  BestEntry b0 = testing::sample_best(d0.uuid, p0, testing::config_key(0), 1700000100, hash,
                                      "tie with x; more accurate");
  b0.median_ms = 0.112;
  b0.rel_l2 = 3.1e-6;
  BestEntry b1 = testing::sample_best(d1.uuid, p0, testing::config_key(0), 1600000100, "oldhash",
                                      "fastest inside budget");
  b1.driver_version = 12040;
  b1.nvrtc_version = "12.4";
  b1.spread_ms = kNaN;
  {
    Connection c = raw(path);
    REQUIRE(c.exec(kSchemaV2).is_ok());
    REQUIRE(c.exec("INSERT INTO meta (key, value) VALUES ('application', 'ssmtune'), "
                   "('created', '1600000000'), ('schema_version', '2')")
                .is_ok());
    for (const auto& d : {d0, d1}) {
      auto st = c.prepare("INSERT INTO devices VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
      REQUIRE(st.is_ok());
      REQUIRE(st->bind(1, d.uuid).is_ok());
      REQUIRE(st->bind(2, d.name).is_ok());
      REQUIRE(st->bind(3, d.cc_major).is_ok());
      REQUIRE(st->bind(4, d.cc_minor).is_ok());
      REQUIRE(st->bind(5, d.sm_count).is_ok());
      REQUIRE(st->bind(6, d.driver_version).is_ok());
      REQUIRE(st->bind(7, d.nvrtc_version).is_ok());
      REQUIRE(st->run().is_ok());
    }
    for (const auto& r : rows) v2_measurement(c, r);
    v2_best(c, b0);
    v2_best(c, b1);
    REQUIRE(c.exec("INSERT INTO cubins VALUES ('cubin-key', 'sm_90', x'7f454c46', '[]', 'log', "
                   "1700000000)")
                .is_ok());
    REQUIRE(c.exec("PRAGMA journal_mode=WAL").is_ok());
  }
  REQUIRE(*TuningDb::schema_version_of(path) == 2);

  {
    auto db = TuningDb::open(path, OpenMode::kReadWrite);
    INFO(db.status().to_string());
    REQUIRE(db.is_ok());
    CHECK(db->check_integrity().is_ok());
    CHECK(*TuningDb::schema_version_of(path) == kSchemaVersion);

    // Devices and cubins as they were.
    auto ds = db->devices();
    REQUIRE(ds->size() == 2);
    for (const auto& s : *ds) {
      const auto& want = s.device.uuid == d0.uuid ? d0 : d1;
      CHECK(s.device.name == want.name);
      CHECK(s.device.sm_count == want.sm_count);
      CHECK(s.device.driver_version == want.driver_version);
      CHECK(s.device.nvrtc_version == want.nvrtc_version);
    }
    auto cubin = db->get_cubin("cubin-key");
    REQUIRE(cubin->has_value());
    CHECK((*cubin)->cubin ==
          "\x7f"
          "ELF");

    // Every measurement, every value.
    auto ms = db->measurements();
    REQUIRE(ms->size() == rows.size());
    for (const Measurement& m : *ms) {
      auto it = std::find_if(rows.begin(), rows.end(), [&](const V2Row& r) {
        return m.device_uuid == r.device && m.config_key == r.config;
      });
      REQUIRE(it != rows.end());
      const V2Row& r = *it;
      INFO("row " << it - rows.begin() << " (" << r.status << ")");
      CHECK(m.family == "fwd");
      CHECK(m.device_uuid == r.device);
      CHECK(m.problem_key == "fwd:" + r.problem);
      CHECK(m.config_key == r.config);
      CHECK(to_string(m.status) == r.status);
      CHECK(same_number(m.median_ms, r.median_ms));
      CHECK(same_number(m.spread_ms, r.spread_ms));
      CHECK(same_number(m.min_ms, r.min_ms));
      CHECK(m.repeats == r.repeats);
      CHECK(same_number(m.rel_l2, r.rel_l2));
      CHECK(same_number(m.error_budget, r.error_budget));
      CHECK(m.verdict == r.verdict);
      CHECK(m.nan_inf == r.nan_inf);
      CHECK(m.unwritten == r.unwritten);
      CHECK(m.detail == r.detail);
      CHECK(m.template_hash == r.template_hash);
      CHECK(m.driver_version == r.driver_version);
      CHECK(m.nvrtc_version == r.nvrtc_version);
      CHECK(m.timestamp == r.timestamp);
      CHECK(m.registers == r.registers);
      CHECK(m.spill_bytes == r.spill_bytes);
      CHECK(m.shared_bytes == r.shared_bytes);
      // The error of out, unless the row held none (never ran).
      const bool ran = !(r.rel_l2 == 0 && r.max_abs_rel == 0 && r.max_rel == 0 && r.nan_inf == 0 &&
                         r.unwritten == 0 && r.error_budget == 0 && r.verdict.empty());
      REQUIRE(m.errors.size() == (ran ? 1u : 0u));
      if (!ran) continue;
      const OutputError& e = m.errors[0];
      CHECK(e.output == "out");
      CHECK(same_number(e.rel_l2, r.rel_l2));
      CHECK(same_number(e.max_abs_rel, r.max_abs_rel));
      CHECK(same_number(e.max_rel, r.max_rel));
      CHECK(e.nan_inf == r.nan_inf);
      CHECK(e.unwritten == r.unwritten);
      CHECK(same_number(e.budget, r.error_budget));
      CHECK(e.verdict == r.verdict);
    }
    // Rows that never ran: the parent-side fault, pruned, compile_failed.
    size_t without = 0;
    for (const auto& m : *ms) without += m.errors.empty();
    CHECK(without == 3);

    // Best entries, stale one included.
    auto best = db->list_best({});
    REQUIRE(best->size() == 2);
    for (const auto& got : *best) {
      const BestEntry& want = got.device_uuid == d0.uuid ? b0 : b1;
      CHECK(got.family == "fwd");
      CHECK(got.problem_key == "fwd:" + want.problem_key);
      CHECK(got.config_key == want.config_key);
      CHECK(same_number(got.median_ms, want.median_ms));
      CHECK(same_number(got.spread_ms, want.spread_ms));
      CHECK(same_number(got.rel_l2, want.rel_l2));
      CHECK(got.template_hash == want.template_hash);
      CHECK(got.driver_version == want.driver_version);
      CHECK(got.nvrtc_version == want.nvrtc_version);
      CHECK(got.timestamp == want.timestamp);
      CHECK(got.rule == want.rule);
    }
    CHECK((*db->best(d1.uuid, p0, testing::sample_versions()))->stale);

    // Problems and configs: every key, with its family and parameters.
    auto ps = db->problems();
    REQUIRE(ps->size() == 2);
    for (const auto& p : *ps) {
      CHECK(p.family == "fwd");
      CHECK((p.key == "fwd:" + p0 || p.key == "fwd:" + p1));
    }
    CHECK((*ps)[0].measurements + (*ps)[1].measurements == 8);
    Connection c = raw(path);
    CHECK(*c.query_int("SELECT count(*) FROM configs WHERE family = 'fwd'") == 7);
    CHECK(*c.query_text("SELECT params FROM problems WHERE key = 'fwd:" + p1 + "'") ==
          key_params(p1));
    CHECK(*c.query_int("SELECT count(*) FROM pragma_foreign_key_check") == 0);
    // The measurement ids are kept.
    CHECK(*c.query_int("SELECT min(id) FROM measurements") == 1);
    CHECK(*c.query_int("SELECT max(id) FROM measurements") == 8);

    // The same tables, columns, keys and indexes as a new database.
    {
      auto fresh = TuningDb::open(dir.file("fresh.db"), OpenMode::kReadWrite);
      REQUIRE(fresh.is_ok());
    }
    Connection f = raw(dir.file("fresh.db"));
    CHECK(schema_shape(c) == schema_shape(f));

    // A migrated database takes new rows of every kind.
    auto m = testing::sample_measurement(d0.uuid, testing::problem_key(0), testing::config_key(0),
                                         0.1, 1e-6, 1750000000);
    REQUIRE(db->add_measurement(m).is_ok());
    CHECK(testing::same(db->measurements({.limit = 1})->at(0), m));
  }

  // Opening a version 3 file (for writing or reading) does not rewrite it.
  {
    Connection c = raw(path);
    REQUIRE(c.exec("PRAGMA wal_checkpoint(TRUNCATE)").is_ok());
  }
  const std::string before = testing::read_file(path);
  for (OpenMode mode : {OpenMode::kReadWrite, OpenMode::kReadOnly}) {
    auto db = TuningDb::open(path, mode);
    REQUIRE(db.is_ok());
    CHECK(db->measurements()->size() == rows.size() + 1);
  }
  CHECK(testing::read_file(path) == before);
}

TEST_CASE("a version 2 database that is in use by a newer writer is migrated once",
          "[cache][migration]") {
  // Two connections racing to migrate: the second finds version 3 under the
  // lock and leaves it.
  TempDir dir;
  const std::string path = dir.file("v2.db");
  {
    Connection c = raw(path);
    REQUIRE(c.exec(kSchemaV2).is_ok());
    REQUIRE(c.exec("INSERT INTO meta (key, value) VALUES ('application', 'ssmtune'), "
                   "('schema_version', '2')")
                .is_ok());
  }
  Connection a = raw(path), b = raw(path);
  REQUIRE(ensure_schema(a, path).is_ok());
  REQUIRE(ensure_schema(b, path).is_ok());
  CHECK(*read_schema_version(b, path) == kSchemaVersion);
}

TEST_CASE("a version 3 database migrates to 4: devices keep their rows, memory unknown",
          "[cache][migration]") {
  TempDir dir;
  const std::string path = dir.file("v3.db");
  const DeviceRecord d0 = testing::sample_device(0);
  {
    auto db = TuningDb::open(path, OpenMode::kReadWrite);
    REQUIRE(db.is_ok());
    REQUIRE(db->upsert_device(d0).is_ok());
    REQUIRE(db->add_measurement(testing::sample_measurement(d0.uuid, testing::problem_key(0),
                                                            testing::config_key(0), 0.3))
                .is_ok());
    REQUIRE(
        db->set_best(testing::sample_best(d0.uuid, testing::problem_key(0), testing::config_key(0)))
            .is_ok());
  }
  {  // Back to version 3 as it shipped: devices without total_memory.
    auto c = Connection::open(path, SQLITE_OPEN_READWRITE);
    REQUIRE(c.is_ok());
    REQUIRE(c->exec("ALTER TABLE devices DROP COLUMN total_memory; UPDATE meta SET value = '3' "
                    "WHERE key = 'schema_version'")
                .is_ok());
  }
  REQUIRE(*TuningDb::schema_version_of(path) == 3);
  // Read-only: refused as older, not migrated.
  auto ro = TuningDb::open(path, OpenMode::kReadOnly);
  REQUIRE_FALSE(ro.is_ok());
  CHECK(ro.status().code() == Code::kUnsupported);
  REQUIRE(*TuningDb::schema_version_of(path) == 3);

  auto db = TuningDb::open(path, OpenMode::kReadWrite);
  INFO(db.status().to_string());
  REQUIRE(db.is_ok());
  CHECK(*TuningDb::schema_version_of(path) == 4);
  CHECK(db->check_integrity().is_ok());
  auto dev = db->device(d0.uuid);
  REQUIRE(dev.is_ok());
  REQUIRE(dev->has_value());
  CHECK((*dev)->name == d0.name);
  CHECK((*dev)->sm_count == d0.sm_count);
  CHECK((*dev)->total_memory == 0);
  auto best = db->best(d0.uuid, testing::problem_key(0), testing::sample_versions());
  REQUIRE(best.is_ok());
  REQUIRE(best->has_value());
  CHECK((*best)->config_key == testing::config_key(0));
  auto ms = db->measurements();
  REQUIRE(ms.is_ok());
  CHECK(ms->size() == 1);

  // The memory is learnt when the device is seen again, and an unknown
  // (0, e.g. from an old export) never overwrites a known one.
  DeviceRecord seen = d0;
  seen.total_memory = int64_t{150754820096};
  REQUIRE(db->upsert_device(seen).is_ok());
  REQUIRE(db->upsert_device(d0).is_ok());
  auto again = db->device(d0.uuid);
  REQUIRE(again.is_ok());
  CHECK((*again)->total_memory == seen.total_memory);
  // And it survives export and import.
  auto j = db->export_json();
  REQUIRE(j.is_ok());
  CHECK((*j)["devices"][0]["total_memory"] == seen.total_memory);
  auto other = TuningDb::open(dir.file("other.db"), OpenMode::kReadWrite);
  REQUIRE(other.is_ok());
  REQUIRE(other->import_json(*j, MergePolicy::kIncomingWins).is_ok());
  auto imported = other->device(d0.uuid);
  REQUIRE(imported.is_ok());
  CHECK((*imported)->total_memory == seen.total_memory);
}

}  // namespace
}  // namespace ssmtune::cache
