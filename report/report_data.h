// Fills the report's Model from the tuning database: the one file of report/
// that reads it (schema changes land here). Stale flags are computed against
// the caller's current versions.
#pragma once

#include <string>

#include "cache/tuning_db.h"
#include "report/report_model.h"
#include "ssmtune/status.h"

namespace ssmtune::report {

// Everything the database holds. `versions_text` describes `current` for the
// page ("driver 13.0, NVRTC 13.0, templates 0123abcd").
Result<Model> load_model(cache::TuningDb& db, const Versions& current,
                         const std::string& versions_text);

}  // namespace ssmtune::report
