// Measurements and their per-output errors as sqlite rows, generated from
// the field descriptions of tuner/records.h (visit_fields and
// visit_fields_of_error): the column definitions of the current schema, the
// column lists, the INSERT binds and the row reads. A field added there
// appears here without further code (the schema version still needs a bump
// and a migration: see cache/schema.h).
#pragma once

#include <string>

#include "cache/sqlite.h"
#include "ssmtune/status.h"
#include "tuner/records.h"

namespace ssmtune::cache {

// "family, device_uuid, ..., shared_bytes", optionally each with `prefix`
// ("m." gives "m.family, m.device_uuid, ...").
std::string measurement_columns(const std::string& prefix = "");
int measurement_column_count();
// "output, rel_l2, ..., verdict".
std::string error_columns(const std::string& prefix = "");
int error_column_count();
// Column definitions for CREATE TABLE: "family TEXT NOT NULL, ...";
// doubles are nullable REAL (NULL stands for NaN), the status is checked
// against the MeasureStatus names.
std::string measurement_column_defs();
std::string error_column_defs();
// "?first, ?first+1, ..." for `n` parameters.
std::string placeholders(int first, int n);

// Binds the visited fields at parameters first, first + 1, ...
Status bind_measurement(Statement& st, int first, const Measurement& m);
Status bind_error(Statement& st, int first, const OutputError& e);
// Reads the visited fields from columns first, first + 1, ... (errors left
// empty). A bad status is kCorrupt.
Result<Measurement> read_measurement(const Statement& st, int first);
OutputError read_error(const Statement& st, int first);

}  // namespace ssmtune::cache
