// Schema creation, recognition and migrations.
#include "cache/schema.h"

#include <ctime>
#include <functional>
#include <vector>

#include "cache/keys.h"
#include "cache/record_rows.h"

namespace ssmtune::cache {
namespace {

// The tables every schema version since 2 has in this form (devices with
// total_memory since 4). REAL columns
// are nullable: NULL stands for NaN (sqlite has none), e.g. the error of a
// config that never ran.
constexpr char kCreateCommon[] = R"sql(
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE devices (
  uuid TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  cc_major INTEGER NOT NULL,
  cc_minor INTEGER NOT NULL,
  sm_count INTEGER NOT NULL,
  driver_version INTEGER NOT NULL,
  nvrtc_version TEXT NOT NULL,
  total_memory INTEGER NOT NULL DEFAULT 0
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

// The family-neutral tables of the current schema around the measurement
// columns, which come from visit_fields (record_rows.h). Problems and
// configs are (family, key, params); params is key_params (cache/keys.h).
std::string create_records_sql(const std::string& measurement_defs, const std::string& error_defs) {
  return R"sql(
CREATE TABLE problems (
  key TEXT PRIMARY KEY,
  family TEXT NOT NULL,
  params TEXT NOT NULL
);
CREATE INDEX problems_family ON problems(family);
CREATE TABLE configs (
  family TEXT NOT NULL,
  key TEXT NOT NULL,
  params TEXT NOT NULL,
  PRIMARY KEY (family, key)
);
CREATE TABLE measurements (
  id INTEGER PRIMARY KEY,
  )sql" + measurement_defs +
         R"sql(,
  FOREIGN KEY (device_uuid) REFERENCES devices(uuid),
  FOREIGN KEY (problem_key) REFERENCES problems(key),
  FOREIGN KEY (family, config_key) REFERENCES configs(family, key)
);
CREATE INDEX measurements_lookup
  ON measurements(device_uuid, problem_key, config_key, timestamp);
CREATE INDEX measurements_problem ON measurements(problem_key);
CREATE TABLE measurement_errors (
  measurement_id INTEGER NOT NULL REFERENCES measurements(id) ON DELETE CASCADE,
  )sql" + error_defs +
         R"sql(,
  PRIMARY KEY (measurement_id, output)
);
CREATE TABLE best (
  family TEXT NOT NULL,
  device_uuid TEXT NOT NULL REFERENCES devices(uuid),
  problem_key TEXT NOT NULL REFERENCES problems(key),
  config_key TEXT NOT NULL,
  median_ms REAL,
  spread_ms REAL,
  rel_l2 REAL,
  template_hash TEXT NOT NULL,
  driver_version INTEGER NOT NULL,
  nvrtc_version TEXT NOT NULL,
  timestamp INTEGER NOT NULL,
  rule TEXT NOT NULL,
  PRIMARY KEY (device_uuid, problem_key),
  FOREIGN KEY (family, config_key) REFERENCES configs(family, key)
);
)sql";
}

// Version 1 had no min_ms and no cubins table (cubins lived only in memory).
Status migrate_1_to_2(Connection& c) {
  return c.exec(R"sql(
ALTER TABLE measurements ADD COLUMN min_ms REAL;
CREATE TABLE cubins (
  key TEXT PRIMARY KEY,
  arch TEXT NOT NULL,
  cubin BLOB NOT NULL,
  kernels TEXT NOT NULL,
  log TEXT NOT NULL,
  created INTEGER NOT NULL
);
)sql");
}

// The measurement columns of version 3 as released. Frozen: a later version
// migrates from these (the current ones come from visit_fields).
constexpr char kV3MeasurementDefs[] = R"sql(family TEXT NOT NULL,
  device_uuid TEXT NOT NULL,
  problem_key TEXT NOT NULL,
  config_key TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('ok', 'pruned', 'compile_failed', 'launch_failed', 'faulted', 'inaccurate')),
  median_ms REAL,
  spread_ms REAL,
  min_ms REAL,
  repeats INTEGER NOT NULL,
  rel_l2 REAL,
  error_budget REAL,
  verdict TEXT NOT NULL,
  nan_inf INTEGER NOT NULL,
  unwritten INTEGER NOT NULL,
  detail TEXT NOT NULL,
  template_hash TEXT NOT NULL,
  driver_version INTEGER NOT NULL,
  nvrtc_version TEXT NOT NULL,
  timestamp INTEGER NOT NULL,
  registers INTEGER NOT NULL,
  spill_bytes INTEGER NOT NULL,
  shared_bytes INTEGER NOT NULL)sql";
constexpr char kV3ErrorDefs[] = R"sql(output TEXT NOT NULL,
  rel_l2 REAL,
  max_abs_rel REAL,
  max_rel REAL,
  nan_inf INTEGER NOT NULL,
  unwritten INTEGER NOT NULL,
  budget REAL,
  verdict TEXT NOT NULL)sql";

// Rows of `sql` (one text column) through `fn`.
Status for_each_text(Connection& c, const std::string& sql,
                     const std::function<Status(const std::string&)>& fn) {
  SSMTUNE_ASSIGN_OR_RETURN(Statement st, c.prepare(sql));
  for (;;) {
    SSMTUNE_ASSIGN_OR_RETURN(bool row, st.step());
    if (!row) return Status::ok();
    SSMTUNE_RETURN_IF_ERROR(fn(st.column_text(0)));
  }
}

// Version 2 was forward-only: problem keys without a family prefix and the
// forward parameters as columns, one error (of `out`) per measurement. Every
// row is kept: keys get "fwd:", configs the family "fwd", and each
// measurement's error fields one measurement_errors row for "out" (unless
// the row holds no error at all: a pruned or failed config that never ran).
// Its headline rel_l2, error_budget, verdict, nan_inf and unwritten stay
// (nan_inf and unwritten were already sums over the outputs).
Status migrate_2_to_3(Connection& c) {
  // The old tables keep their rows under new names (sqlite renames the
  // foreign keys that point at them) while the new ones are filled; the
  // foreign keys are checked at commit.
  SSMTUNE_RETURN_IF_ERROR(c.exec(R"sql(
PRAGMA defer_foreign_keys = ON;
DROP INDEX IF EXISTS problems_family;
DROP INDEX IF EXISTS measurements_lookup;
DROP INDEX IF EXISTS measurements_problem;
ALTER TABLE measurements RENAME TO measurements_v2;
ALTER TABLE best RENAME TO best_v2;
ALTER TABLE problems RENAME TO problems_v2;
ALTER TABLE configs RENAME TO configs_v2;
)sql"));
  SSMTUNE_RETURN_IF_ERROR(c.exec(create_records_sql(kV3MeasurementDefs, kV3ErrorDefs)));
  // Every key any row uses (version 1 had no foreign keys on best).
  SSMTUNE_ASSIGN_OR_RETURN(
      Statement problem,
      c.prepare("INSERT INTO problems (key, family, params) VALUES (?1, ?2, ?3)"));
  SSMTUNE_RETURN_IF_ERROR(for_each_text(
      c,
      "SELECT key FROM problems_v2 UNION SELECT problem_key FROM measurements_v2 UNION SELECT "
      "problem_key FROM best_v2",
      [&](const std::string& key) -> Status {
        SSMTUNE_RETURN_IF_ERROR(problem.reset());
        SSMTUNE_RETURN_IF_ERROR(problem.bind(1, qualified_key(key)));
        SSMTUNE_RETURN_IF_ERROR(problem.bind(2, kLegacyFamily));
        SSMTUNE_RETURN_IF_ERROR(problem.bind(3, key_params(key_body(key))));
        return problem.run();
      }));
  SSMTUNE_ASSIGN_OR_RETURN(
      Statement config, c.prepare("INSERT INTO configs (family, key, params) VALUES (?1, ?2, ?3)"));
  SSMTUNE_RETURN_IF_ERROR(for_each_text(
      c,
      "SELECT key FROM configs_v2 UNION SELECT config_key FROM measurements_v2 UNION SELECT "
      "config_key FROM best_v2",
      [&](const std::string& key) -> Status {
        SSMTUNE_RETURN_IF_ERROR(config.reset());
        SSMTUNE_RETURN_IF_ERROR(config.bind(1, kLegacyFamily));
        SSMTUNE_RETURN_IF_ERROR(config.bind(2, key));
        SSMTUNE_RETURN_IF_ERROR(config.bind(3, key_params(key)));
        return config.run();
      }));
  SSMTUNE_RETURN_IF_ERROR(c.exec(R"sql(
INSERT INTO measurements (id, family, device_uuid, problem_key, config_key, status, median_ms,
  spread_ms, min_ms, repeats, rel_l2, error_budget, verdict, nan_inf, unwritten, detail,
  template_hash, driver_version, nvrtc_version, timestamp, registers, spill_bytes, shared_bytes)
SELECT id, 'fwd', device_uuid, 'fwd:' || problem_key, config_key, status, median_ms,
  spread_ms, min_ms, repeats, rel_l2, error_budget, verdict, nan_inf, unwritten, detail,
  template_hash, driver_version, nvrtc_version, timestamp, registers, spill_bytes, shared_bytes
FROM measurements_v2;
INSERT INTO measurement_errors (measurement_id, output, rel_l2, max_abs_rel, max_rel, nan_inf,
  unwritten, budget, verdict)
SELECT id, 'out', rel_l2, max_abs_rel, max_rel, nan_inf, unwritten, error_budget, verdict
FROM measurements_v2
WHERE NOT (rel_l2 IS 0 AND max_abs_rel IS 0 AND max_rel IS 0 AND nan_inf = 0 AND unwritten = 0
           AND error_budget IS 0 AND verdict = '');
INSERT INTO best (family, device_uuid, problem_key, config_key, median_ms, spread_ms, rel_l2,
  template_hash, driver_version, nvrtc_version, timestamp, rule)
SELECT 'fwd', device_uuid, 'fwd:' || problem_key, config_key, median_ms, spread_ms, rel_l2,
  template_hash, driver_version, nvrtc_version, timestamp, rule
FROM best_v2;
DROP TABLE measurements_v2;
DROP TABLE best_v2;
DROP TABLE problems_v2;
DROP TABLE configs_v2;
)sql"));
  SSMTUNE_ASSIGN_OR_RETURN(int64_t broken,
                           c.query_int("SELECT count(*) FROM pragma_foreign_key_check"));
  if (broken > 0)
    return Status::corrupt(std::to_string(broken) +
                           " rows refer to devices, problems or configs that are not there");
  return Status::ok();
}

// Version 3 did not know a device's memory: its rows keep 0 (unknown),
// which matches any memory in the device class.
Status migrate_3_to_4(Connection& c) {
  return c.exec("ALTER TABLE devices ADD COLUMN total_memory INTEGER NOT NULL DEFAULT 0");
}

struct Migration {
  int from;  // migrates from this version to from + 1
  Status (*run)(Connection&);
};
constexpr Migration kMigrations[] = {{1, migrate_1_to_2}, {2, migrate_2_to_3}, {3, migrate_3_to_4}};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kSchemaVersion - 1,
              "every older schema version needs a migration");

Status set_version(Connection& c, int version) {
  SSMTUNE_ASSIGN_OR_RETURN(Statement st,
                           c.prepare("INSERT INTO meta (key, value) VALUES ('schema_version', ?1) "
                                     "ON CONFLICT (key) DO UPDATE SET value = excluded.value"));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, std::to_string(version)));
  return st.run();
}

Status create(Connection& c) {
  SSMTUNE_RETURN_IF_ERROR(c.exec(kCreateCommon));
  SSMTUNE_RETURN_IF_ERROR(
      c.exec(create_records_sql(measurement_column_defs(), error_column_defs())));
  SSMTUNE_ASSIGN_OR_RETURN(Statement st,
                           c.prepare("INSERT INTO meta (key, value) VALUES ('application', "
                                     "'ssmtune'), ('created', ?1)"));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, std::to_string(std::time(nullptr))));
  SSMTUNE_RETURN_IF_ERROR(st.run());
  return set_version(c, kSchemaVersion);
}

}  // namespace

Result<int> read_schema_version(Connection& c, const std::string& path) {
  // The first read of sqlite_master checks the file header: a file that is
  // not sqlite fails here, before anything could be written.
  auto tables_st = c.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  std::vector<std::string> tables;
  Status s = tables_st.status();
  if (s.is_ok()) {
    for (;;) {
      auto row = tables_st->step();
      if (!row) {
        s = row.status();
        break;
      }
      if (!*row) break;
      tables.push_back(tables_st->column_text(0));
    }
  }
  if (!s.is_ok()) {
    if (s.code() == Code::kCorrupt)
      return Status::corrupt(path +
                             " is not an ssmtune tuning database: the file is not an sqlite "
                             "database or is corrupt (" +
                             s.message() + "); it was left untouched");
    return s.with_context("reading " + path);
  }
  if (tables.empty()) return 0;
  bool has_meta = false;
  std::string list;
  for (const auto& t : tables) {
    has_meta |= t == "meta";
    list += (list.empty() ? "" : ", ") + t;
  }
  auto foreign = [&](const std::string& why) {
    return Status::corrupt(path + " is an sqlite database but not an ssmtune tuning database (" +
                           why + "); it was left untouched");
  };
  if (!has_meta) return foreign("no meta table; its tables: " + list);
  auto app = c.query_text("SELECT value FROM meta WHERE key = 'application'");
  if (!app) return foreign("unreadable meta table: " + app.status().message());
  if (*app != "ssmtune") return foreign("meta.application is '" + *app + "', not 'ssmtune'");
  SSMTUNE_ASSIGN_OR_RETURN(std::string text,
                           c.query_text("SELECT value FROM meta WHERE key = 'schema_version'"));
  int version = 0;
  try {
    size_t used = 0;
    version = std::stoi(text, &used);
    if (used != text.size()) version = 0;
  } catch (...) {
    version = 0;
  }
  if (version < 1)
    return Status::corrupt(path + ": meta.schema_version is '" + text +
                           "', not a version number; it was left untouched");
  if (version > kSchemaVersion)
    return Status::unsupported(path + " was written by a newer ssmtune (schema version " +
                               std::to_string(version) + "; this build reads up to " +
                               std::to_string(kSchemaVersion) +
                               "); upgrade ssmtune to use it. It was left untouched");
  return version;
}

Status ensure_schema(Connection& c, const std::string& path) {
  // The common case needs no write lock (a writer may hold it for a while).
  SSMTUNE_ASSIGN_OR_RETURN(int current, read_schema_version(c, path));
  if (current == kSchemaVersion) return Status::ok();
  SSMTUNE_ASSIGN_OR_RETURN(Transaction tx, Transaction::begin(c));
  SSMTUNE_ASSIGN_OR_RETURN(int version, read_schema_version(c, path));
  if (version == kSchemaVersion) return Status::ok();  // rolls back the empty transaction
  if (version == 0) {
    SSMTUNE_RETURN_IF_ERROR(create(c).with_context("creating the schema in " + path));
  } else {
    for (const Migration& m : kMigrations) {
      if (m.from < version) continue;
      SSMTUNE_RETURN_IF_ERROR(m.run(c).with_context("migrating " + path + " from schema version " +
                                                    std::to_string(m.from)));
      SSMTUNE_RETURN_IF_ERROR(set_version(c, m.from + 1));
    }
  }
  return tx.commit();
}

}  // namespace ssmtune::cache
