// Tune on first use: the budget from the environment, the child's command
// line, and running a stand-in tuner (success, failure, a hang that is killed).
#include "runtime/first_use_tuner.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace ssmtune {
namespace {

namespace fs = std::filesystem;

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    had_ = std::getenv(name) != nullptr;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      ::setenv(name_, old_.c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// A shell script standing in for `ssmtune`, in a fresh directory.
fs::path write_script(const std::string& name, const std::string& body) {
  const fs::path dir =
      fs::temp_directory_path() / ("ssmtune_first_use_" + std::to_string(::getpid()) + "_" + name);
  fs::create_directories(dir);
  const fs::path exe = dir / "ssmtune";
  std::ofstream(exe) << "#!/bin/sh\n" << body << "\n";
  fs::permissions(exe, fs::perms::owner_all);
  return exe;
}

TEST_CASE("tune budget: unset and off mean 0, numbers are read, junk is an error", "[runtime]") {
  {
    ScopedEnv e("SSMTUNE_TUNE_ON_FIRST_USE", nullptr);
    CHECK(*tune_budget_from_env() == 0.0);
  }
  {
    ScopedEnv e("SSMTUNE_TUNE_ON_FIRST_USE", "off");
    CHECK(*tune_budget_from_env() == 0.0);
  }
  {
    ScopedEnv e("SSMTUNE_TUNE_ON_FIRST_USE", "12.5");
    CHECK(*tune_budget_from_env() == 12.5);
  }
  for (const char* bad : {"soon", "-3", "5s", "1e9"}) {
    ScopedEnv e("SSMTUNE_TUNE_ON_FIRST_USE", bad);
    auto r = tune_budget_from_env();
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().message().find(bad) != std::string::npos);
  }
}

TEST_CASE("tuner executable: $SSMTUNE_EXE wins", "[runtime]") {
  ScopedEnv e("SSMTUNE_EXE", "/opt/x/ssmtune");
  CHECK(tuner_executable() == "/opt/x/ssmtune");
}

TEST_CASE("the child runs tune for the problem key against the database", "[runtime]") {
  const auto argv =
      first_use_tune_argv("/bin/ssmtune", "b1.d2.l3.n4.g1.fp32.vB.vC", "/tmp/t.db", 7);
  REQUIRE(argv.size() == 8);
  CHECK(argv[1] == "tune");
  CHECK(argv[3] == "b1.d2.l3.n4.g1.fp32.vB.vC");
  CHECK(argv[5] == "/tmp/t.db");
  CHECK(std::stod(argv[7]) == 7.0);
}

TEST_CASE("a stand-in tuner gets the arguments; failures and hangs are errors", "[runtime]") {
  const fs::path log =
      fs::temp_directory_path() / ("ssmtune_first_use_" + std::to_string(::getpid()) + ".log");
  const fs::path ok = write_script("ok", "echo \"$@\" > " + log.string() + "\necho table");
  auto wall = run_first_use_tune(first_use_tune_argv(ok.string(), "KEY", "DB", 3), 3);
  REQUIRE(wall.is_ok());
  CHECK(*wall >= 0);
  std::ifstream in(log);
  const std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(got.rfind("tune --problem KEY --db DB --time-limit 3", 0) == 0);

  const fs::path fail = write_script("fail", "exit 3");
  auto f = run_first_use_tune({fail.string()}, 1);
  REQUIRE_FALSE(f.is_ok());
  CHECK(f.status().message().find("exited with status 3") != std::string::npos);

  const fs::path hang = write_script("hang", "sleep 30");
  auto h = run_first_use_tune({hang.string()}, 0.1, 0.2);
  REQUIRE_FALSE(h.is_ok());
  CHECK(h.status().code() == Code::kTimeout);

  auto missing = run_first_use_tune({"/nonexistent/ssmtune"}, 1);
  REQUIRE_FALSE(missing.is_ok());
  for (const auto& p : {ok, fail, hang}) fs::remove_all(p.parent_path());
  fs::remove(log);
}

}  // namespace
}  // namespace ssmtune
