// Where the tuning database lives: --db, else $SSMTUNE_DB, else the user's
// cache directory ($XDG_CACHE_HOME/ssmtune/tuning.db or
// ~/.cache/ssmtune/tuning.db). Pure functions of the environment.
#pragma once

#include <string>

namespace ssmtune::cache {

// $SSMTUNE_DB when set and non-empty, else $XDG_CACHE_HOME/ssmtune/tuning.db
// (when XDG_CACHE_HOME is an absolute path), else
// $HOME/.cache/ssmtune/tuning.db, else ./ssmtune-tuning.db. The directory is
// not created here: TuningDb::open does that when opening for write.
std::string default_db_path();

// `flag_value` (a --db option) when non-empty, else default_db_path().
std::string resolve_db_path(const std::string& flag_value);

}  // namespace ssmtune::cache
