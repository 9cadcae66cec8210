#include "cache/db_path.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <optional>
#include <string>

namespace ssmtune::cache {
namespace {

// Sets an environment variable for one scope, restoring it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    if (value != nullptr)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST_CASE("the database path comes from --db, SSMTUNE_DB, XDG_CACHE_HOME or HOME", "[cache]") {
  ScopedEnv home("HOME", "/home/ada");
  ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
  {
    ScopedEnv db("SSMTUNE_DB", nullptr);
    CHECK(default_db_path() == "/home/ada/.cache/ssmtune/tuning.db");
    {
      ScopedEnv x("XDG_CACHE_HOME", "/var/cache/ada");
      CHECK(default_db_path() == "/var/cache/ada/ssmtune/tuning.db");
    }
    {
      ScopedEnv x("XDG_CACHE_HOME", "relative/cache");  // ignored, as the XDG spec says
      CHECK(default_db_path() == "/home/ada/.cache/ssmtune/tuning.db");
    }
    ScopedEnv empty("SSMTUNE_DB", "");
    CHECK(default_db_path() == "/home/ada/.cache/ssmtune/tuning.db");
  }
  ScopedEnv db("SSMTUNE_DB", "/data/shared.db");
  CHECK(default_db_path() == "/data/shared.db");
  CHECK(resolve_db_path("") == "/data/shared.db");
  CHECK(resolve_db_path("mine.db") == "mine.db");
}

}  // namespace
}  // namespace ssmtune::cache
