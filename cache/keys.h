// Problem and config keys as the database stores them: "family:body" for
// problems ("fwd:b8.d1536.l2048.n16.g1.bf16.vB.vC"), a family's own key for
// configs. Keys written before families existed have no prefix and are
// forward keys. The checks and the generic parameters of a key live here,
// in one place, until the family registry can parse every family's keys.
#pragma once

#include <string>

#include "ssmtune/status.h"

namespace ssmtune::cache {

// The forward family's name, the family of unprefixed (legacy) keys.
inline constexpr char kLegacyFamily[] = "fwd";

// "fwd:" + key for a key without a family prefix; other keys unchanged.
std::string qualified_key(const std::string& problem_key);
// The text after the family prefix ("b8.d1536..." of "fwd:b8.d1536...").
std::string key_body(const std::string& problem_key);

// A qualified problem key the database accepts: a family name of lower-case
// letters, digits and '_', then a body of dot-separated tokens (printable,
// no spaces). Forward keys are parsed and validated in full.
Status check_problem_key(const std::string& problem_key);
// A config key of `family` (as check_problem_key; forward keys parsed in full).
Status check_config_key(const std::string& family, const std::string& config_key);

// The parameters column of a problem or config row: the key's body as a
// JSON array of its dot-separated tokens, e.g. ["b8","d1536","l2048",...].
std::string key_params(const std::string& body);

}  // namespace ssmtune::cache
