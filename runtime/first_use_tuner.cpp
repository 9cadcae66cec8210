// Tune on first use through a child `ssmtune tune`.
#include "runtime/first_use_tuner.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

extern char** environ;

namespace ssmtune {
namespace {

bool is_executable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Owns the spawn attributes and file actions.
struct SpawnSetup {
  posix_spawnattr_t attr{};
  posix_spawn_file_actions_t actions{};
  SpawnSetup() {
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_init(&actions);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

}  // namespace

Result<double> tune_budget_from_env() {
  const char* v = std::getenv("SSMTUNE_TUNE_ON_FIRST_USE");
  if (v == nullptr || *v == '\0' || std::strcmp(v, "off") == 0) return 0.0;
  char* end = nullptr;
  errno = 0;
  const double s = std::strtod(v, &end);
  if (errno != 0 || end == v || *end != '\0' || !(s >= 0) || s > 86400)
    return Status::invalid_argument(std::string("SSMTUNE_TUNE_ON_FIRST_USE must be seconds "
                                                "(a number from 0 to 86400) or 'off', got '") +
                                    v + "'");
  return s;
}

std::string tuner_executable() {
  if (const char* e = std::getenv("SSMTUNE_EXE"); e != nullptr && *e != '\0') return e;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&tuner_executable), &info) != 0 && info.dli_fname != nullptr) {
    std::string self = info.dli_fname;
    if (self.find('/') == std::string::npos) {  // the main program: dladdr gives argv[0]
      char buf[4096];
      const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
      if (n > 0) self.assign(buf, static_cast<size_t>(n));
    }
    const auto slash = self.rfind('/');
    if (slash != std::string::npos) {
      const std::string beside = self.substr(0, slash + 1) + "ssmtune";
      if (is_executable(beside)) return beside;
    }
  }
  return "ssmtune";
}

std::vector<std::string> first_use_tune_argv(const std::string& exe, const std::string& problem_key,
                                             const std::string& db_path, double seconds) {
  return {exe,    "tune",  "--problem",    problem_key,
          "--db", db_path, "--time-limit", std::to_string(seconds)};
}

Result<double> run_first_use_tune(const std::vector<std::string>& argv, double seconds,
                                  double grace_s) {
  if (argv.empty()) return Status::invalid_argument("tune on first use: empty command");
  const std::string what = "tune on first use (" + argv[0] + ")";
  SpawnSetup setup;
  // Its own process group, so that a kill reaches the tuner's worker too.
  posix_spawnattr_setflags(&setup.attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&setup.attr, 0);
  posix_spawn_file_actions_addopen(&setup.actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int rc =
      argv[0].find('/') == std::string::npos
          ? posix_spawnp(&pid, argv[0].c_str(), &setup.actions, &setup.attr, args.data(), environ)
          : posix_spawn(&pid, argv[0].c_str(), &setup.actions, &setup.attr, args.data(), environ);
  if (rc != 0)
    return Status::io_error(what + ": cannot start: " + std::strerror(rc) +
                            " (set SSMTUNE_EXE to the ssmtune program)");
  const double deadline = seconds + grace_s;
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR)
      return Status::io_error(what + ": waitpid: " + std::strerror(errno));
    if (seconds_since(t0) > deadline) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return Status::timeout(what + ": still running after " + std::to_string(deadline) +
                             " s; killed");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const double wall = seconds_since(t0);
  if (WIFSIGNALED(status))
    return Status::io_error(what + ": killed by signal " + std::to_string(WTERMSIG(status)));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return Status::io_error(what + ": exited with status " + std::to_string(WEXITSTATUS(status)));
  return wall;
}

}  // namespace ssmtune
