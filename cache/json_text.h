// JSON text in and out of the tuning database's export files: parsing that
// turns every failure (syntax, a number outside the double range, running
// out of memory) into a Status, and writing that never throws on a string
// that is not valid UTF-8 (such bytes become U+FFFD).
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ssmtune/status.h"

namespace ssmtune::cache {

// Deepest nesting accepted: an export is three levels deep; a file nested
// thousands of levels deep is refused before it can exhaust the stack.
inline constexpr int kMaxJsonDepth = 64;
// Memory a parsed document may take per byte of text (a small object's
// std::map node and strings): claimed before parsing, see the .cpp.
inline constexpr size_t kJsonMemoryFactor = 16;

// Parses `text`; `what` names it in errors ("e.json is not valid JSON: ...").
// Errors: kInvalidArgument (syntax, depth, numbers out of range),
// kIoError (not kJsonMemoryFactor times the text's size of memory to spare).
Result<nlohmann::json> parse_json_text(std::string_view text, const std::string& what);

// `j` as text (indented by `indent`, -1: one line), invalid UTF-8 replaced.
std::string dump_json_text(const nlohmann::json& j, int indent = 2);

}  // namespace ssmtune::cache
