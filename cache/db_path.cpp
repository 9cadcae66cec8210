// Default tuning database location, and database lists.
#include "cache/db_path.h"

#include <algorithm>
#include <cstdlib>

namespace ssmtune::cache {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

}  // namespace

std::string default_db_path() {
  if (std::string p = env("SSMTUNE_DB"); !p.empty()) return p;
  // The XDG spec says to ignore a relative XDG_CACHE_HOME.
  if (std::string x = env("XDG_CACHE_HOME"); !x.empty() && x[0] == '/')
    return x + "/ssmtune/tuning.db";
  if (std::string h = env("HOME"); !h.empty()) return h + "/.cache/ssmtune/tuning.db";
  return "ssmtune-tuning.db";
}

std::string resolve_db_path(const std::string& flag_value) {
  return flag_value.empty() ? default_db_path() : flag_value;
}

Result<DbPathList> split_db_paths(const std::string& list) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t colon = std::min(list.find(':', start), list.size());
    parts.push_back(list.substr(start, colon - start));
    if (colon == list.size()) break;
    start = colon + 1;
  }
  const std::string how =
      " (a database list is LOCAL[:SHARED...]: the writable local database, then read-only "
      "shared ones; a path cannot contain ':')";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].empty())
      return Status::invalid_argument("tuning database list '" + list + "' has an empty path" +
                                      how);
    for (size_t j = 0; j < i; ++j)
      if (parts[j] == parts[i])
        return Status::invalid_argument("tuning database list '" + list + "' names " + parts[i] +
                                        " twice" + how);
  }
  DbPathList out;
  out.local = parts.front();
  out.shared.assign(parts.begin() + 1, parts.end());
  return out;
}

Result<DbPathList> resolve_db_paths(const std::string& flag_value) {
  return split_db_paths(resolve_db_path(flag_value));
}

}  // namespace ssmtune::cache
