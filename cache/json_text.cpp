// Exception-free JSON parsing and writing for export files.
#include "cache/json_text.h"

#include <cstdlib>
#include <new>

namespace ssmtune::cache {

Result<nlohmann::json> parse_json_text(std::string_view text, const std::string& what) {
  // Out of memory half way, nlohmann's destructor of the partial document
  // allocates and terminates the process. So the memory the document may
  // take is claimed (and released) first: a file too large for this
  // process is refused before parsing starts.
  // (volatile: the compiler may not drop an allocation that is never used.)
  void* volatile probe = std::malloc(text.size() * kJsonMemoryFactor + (size_t{1} << 20));
  std::free(probe);
  if (probe == nullptr) {
    return Status::io_error(what + ": too large for the memory this process may use (" +
                            std::to_string(text.size()) + " bytes; parsing needs about " +
                            std::to_string(kJsonMemoryFactor) + " times that)");
  }
  // Nesting is counted by a parser callback, before the parser recurses
  // into values (nlohmann builds containers iteratively, but dump and
  // comparisons recurse).
  int depth = 0;
  bool too_deep = false;
  auto cb = [&](int d, nlohmann::json::parse_event_t ev, nlohmann::json&) {
    if (ev == nlohmann::json::parse_event_t::object_start ||
        ev == nlohmann::json::parse_event_t::array_start) {
      depth = d + 1;
      if (depth > kMaxJsonDepth) too_deep = true;
    }
    return !too_deep;
  };
  try {
    auto j = nlohmann::json::parse(text.begin(), text.end(), cb);
    if (too_deep)
      return Status::invalid_argument(what + " nests deeper than " + std::to_string(kMaxJsonDepth) +
                                      " levels");
    return j;
  } catch (const nlohmann::json::exception& e) {
    if (too_deep)
      return Status::invalid_argument(what + " nests deeper than " + std::to_string(kMaxJsonDepth) +
                                      " levels");
    return Status::invalid_argument(what + " is not valid JSON: " + e.what());
  } catch (const std::bad_alloc&) {
    return Status::io_error(what + ": out of memory while parsing (" + std::to_string(text.size()) +
                            " bytes)");
  }
}

std::string dump_json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ssmtune::cache
