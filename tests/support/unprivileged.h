// Running part of a test as a user without write access, also when the
// suite runs as root (as in CI): root bypasses file permissions, so a
// read-only directory is read-only only to another uid. drop_privileges()
// is for a forked child; as_user() wraps a shell command with setpriv.
#pragma once

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>

namespace ssmtune::testing {

// The uid/gid tests drop to when run as root ("nobody" on Debian).
inline constexpr int kUnprivilegedId = 65534;

inline bool running_as_root() { return ::geteuid() == 0; }

// In a forked child: give up root (groups, gid, uid). False when it failed.
inline bool drop_privileges() {
  if (!running_as_root()) return true;
  return ::setgroups(0, nullptr) == 0 && ::setgid(kUnprivilegedId) == 0 &&
         ::setuid(kUnprivilegedId) == 0 && ::geteuid() != 0;
}

// Runs `fn` in a child process without root; its return value is the
// child's exit code (-1 when the child could not drop root or crashed).
inline int run_unprivileged(const std::function<int()>& fn) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (!drop_privileges()) ::_exit(125);
    ::_exit(fn());
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status) == 125 ? -1 : WEXITSTATUS(status);
}

// `cmd` run as the unprivileged user: as is when not root, else through
// setpriv. Empty when root and setpriv is missing (the caller skips).
inline std::string as_user(const std::string& cmd) {
  if (!running_as_root()) return cmd;
  if (std::system("command -v setpriv >/dev/null 2>&1") != 0) return {};
  return "setpriv --reuid=" + std::to_string(kUnprivilegedId) +
         " --regid=" + std::to_string(kUnprivilegedId) + " --clear-groups -- " + cmd;
}

// Makes `dir` (and the files in it) readable and searchable by everyone,
// writable by nobody but root: the shared read-only database directory.
inline void make_read_only_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  for (const auto& e : fs::directory_iterator(dir)) ::chmod(e.path().c_str(), 0444);
  ::chmod(dir.c_str(), 0555);
}

}  // namespace ssmtune::testing
