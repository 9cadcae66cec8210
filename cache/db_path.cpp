// Default tuning database location.
#include "cache/db_path.h"

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

}  // namespace ssmtune::cache
