// The tuning database's schema: the tables of the current version, the
// check that a file is an ssmtune database of a version this build reads,
// and the migrations from each older version.
// Functions over one Connection; not thread-safe beyond that connection.
#pragma once

#include <string>

#include "cache/sqlite.h"
#include "ssmtune/status.h"

namespace ssmtune::cache {

// Bump when the schema changes, and add a migration from the previous
// version to schema.cpp's table of migrations.
//   1: devices, problems, configs, measurements, best
//   2: measurements.min_ms; the cubins table (the JIT layer's shared cache)
//   3: family-neutral: problems and configs as (family, key, params); the
//      measurement columns those of visit_fields (tuner/records.h); an error
//      per named output in measurement_errors; best.family. A field added
//      to visit_fields or visit_fields_of_error changes the schema too.
//   4: devices.total_memory (bytes; 0 for rows migrated from 3: unknown),
//      part of the device class (tuner/records.h same_class)
inline constexpr int kSchemaVersion = 4;

// The schema version of the database on `c`: 0 when it has no tables at all
// (a new or empty file). Refuses, without writing anything, a file that is
// not sqlite or is corrupt (kCorrupt), an sqlite database that is not
// ssmtune's (kCorrupt, "not an ssmtune tuning database") and one written by
// a newer ssmtune (kUnsupported). `path` is for the messages.
Result<int> read_schema_version(Connection& c, const std::string& path);

// In one write transaction: creates the current schema in an empty
// database, or migrates an older one step by step. Safe against another
// process doing the same at once (the version is re-read under the lock).
Status ensure_schema(Connection& c, const std::string& path);

}  // namespace ssmtune::cache
