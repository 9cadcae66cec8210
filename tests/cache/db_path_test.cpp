#include "cache/db_path.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

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
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
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

TEST_CASE("a database list is the local database, then read-only shared ones", "[cache][layers]") {
  auto one = split_db_paths("/home/ada/tuning.db");
  REQUIRE(one.is_ok());
  CHECK(one->local == "/home/ada/tuning.db");
  CHECK(one->shared.empty());
  CHECK_FALSE(one->layered());

  auto three = split_db_paths("local.db:/fsx/team.db:/fsx/fleet.db");
  REQUIRE(three.is_ok());
  CHECK(three->local == "local.db");
  CHECK(three->shared == std::vector<std::string>{"/fsx/team.db", "/fsx/fleet.db"});
  CHECK(three->layered());

  for (const char* bad : {"", ":", "a:", ":b", "a::b"}) {
    INFO(bad);
    auto r = split_db_paths(bad);
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().code() == Code::kInvalidArgument);
    CHECK(r.status().message().find("empty path") != std::string::npos);
  }
  auto twice = split_db_paths("a.db:b.db:a.db");
  REQUIRE_FALSE(twice.is_ok());
  CHECK(twice.status().message().find("names a.db twice") != std::string::npos);

  // SSMTUNE_DB may hold a list; --db replaces it whole.
  ScopedEnv db("SSMTUNE_DB", "mine.db:/fsx/shared.db");
  auto env = resolve_db_paths("");
  REQUIRE(env.is_ok());
  CHECK(env->local == "mine.db");
  CHECK(env->shared == std::vector<std::string>{"/fsx/shared.db"});
  auto flag = resolve_db_paths("other.db");
  REQUIRE(flag.is_ok());
  CHECK(flag->local == "other.db");
  CHECK(flag->shared.empty());
}

}  // namespace
}  // namespace ssmtune::cache
