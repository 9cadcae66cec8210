// Where the tuning database lives: --db, else $SSMTUNE_DB, else the user's
// cache directory ($XDG_CACHE_HOME/ssmtune/tuning.db or
// ~/.cache/ssmtune/tuning.db); and the fleet's layered form of --db and
// $SSMTUNE_DB, a ':'-separated list. Pure functions of the environment.
#pragma once

#include <string>
#include <vector>

#include "ssmtune/status.h"

namespace ssmtune::cache {

// $SSMTUNE_DB when set and non-empty, else $XDG_CACHE_HOME/ssmtune/tuning.db
// (when XDG_CACHE_HOME is an absolute path), else
// $HOME/.cache/ssmtune/tuning.db, else ./ssmtune-tuning.db. The directory is
// not created here: TuningDb::open does that when opening for write.
std::string default_db_path();

// `flag_value` (a --db option) when non-empty, else default_db_path(). The
// value may be a list (below): split it with split_db_paths.
std::string resolve_db_path(const std::string& flag_value);

// A database list "LOCAL:SHARED1:SHARED2...": the first path is the
// writable local database, the others read-only shared ones, looked up in
// that order after the local one (cache/db_stack.h). One path is a list of
// one. A path in the list cannot contain ':'.
struct DbPathList {
  std::string local;
  std::vector<std::string> shared;
  bool layered() const { return !shared.empty(); }
};

// Splits `list` at ':'. An empty element ("a::b", "a:", ":b") or a path
// listed twice is kInvalidArgument naming the list.
Result<DbPathList> split_db_paths(const std::string& list);
// split_db_paths(resolve_db_path(flag_value)).
Result<DbPathList> resolve_db_paths(const std::string& flag_value);

}  // namespace ssmtune::cache
