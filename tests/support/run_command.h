// Runs a shell command and captures its exit code and output, for CLI tests.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace ssmtune::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout (and stderr when merged)
};

// `merge_stderr`: append 2>&1 so the message lines are captured too.
inline CommandResult run_command(const std::string& cmd, bool merge_stderr = true) {
  CommandResult r;
  const std::string full = merge_stderr ? cmd + " 2>&1" : cmd;
  FILE* p = popen(full.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace ssmtune::testing
