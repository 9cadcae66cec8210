// The JSON form of a Measurement and its per-output errors, written and read
// through visit_fields / visit_fields_of_error: the one conversion that the
// database export/import and the tune worker protocol share. Non-finite
// numbers are plain JSON: NaN is null, infinities are "inf" / "-inf".
#pragma once

#include <initializer_list>
#include <string>

#include <nlohmann/json.hpp>

#include "ssmtune/status.h"
#include "tuner/records.h"

namespace ssmtune {

// A double as JSON (null for NaN, "inf" / "-inf" for infinities), and back
// (kInvalidArgument naming `where` for anything else).
nlohmann::json json_number(double v);
Result<double> number_from_json(const nlohmann::json& j, const std::string& where);

// Every visited field plus "errors": [{output, rel_l2, ...}, ...].
nlohmann::json to_json(const OutputError& e);
nlohmann::json to_json(const Measurement& m);

// Reads the fields `j` holds into `m` (absent ones keep m's values; unknown
// keys are ignored). A field of the wrong type, a field named in `required`
// that is absent, or a bad "errors" array is kInvalidArgument naming
// `where` and the field ("measurements[3].status: expected a string").
Status measurement_from_json(const nlohmann::json& j, const std::string& where, Measurement& m,
                             std::initializer_list<const char*> required = {});
Status output_error_from_json(const nlohmann::json& j, const std::string& where, OutputError& e);

}  // namespace ssmtune
