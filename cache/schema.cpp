// Schema creation, recognition and migrations.
#include "cache/schema.h"

#include <ctime>
#include <vector>

namespace ssmtune::cache {
namespace {

// The current schema. REAL columns are nullable: NULL stands for NaN
// (sqlite has none), e.g. the error of a config that never ran.
constexpr char kCreateSchema[] = R"sql(
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

struct Migration {
  int from;  // migrates from this version to from + 1
  Status (*run)(Connection&);
};
constexpr Migration kMigrations[] = {{1, migrate_1_to_2}};
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
  SSMTUNE_RETURN_IF_ERROR(c.exec(kCreateSchema));
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
