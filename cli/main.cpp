// The ssmtune command: tune, bench, check, db, devices, compile.
// Every command body runs inside one handler here, so no exception escapes
// as an abort: each becomes one line on stderr and an exit code from
// cli/exit_codes.h; a failed write to stdout is reported too.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/option_checks.h"

namespace ssmtune::cli {

int& exit_code() {
  static int code = 0;
  return code;
}

bool report(const char* command, const Status& s) {
  return report(command, s, exit_code_for(s.code()));
}

bool report(const char* command, const Status& s, int code) {
  if (s.is_ok()) return true;
  std::cerr << "ssmtune " << command << ": " << s.to_string() << "\n";
  exit_code() = code;
  return false;
}

bool report_input(const char* command, const Status& s) {
  return report(command, s,
                s.code() == Code::kInvalidArgument ? kExitBadInput : exit_code_for(s.code()));
}

}  // namespace ssmtune::cli

namespace {

// Flushes stdout; a failure (disk full, a closed pipe's EIO) is an I/O error.
int finish(int code) {
  errno = 0;
  std::cout.flush();
  const bool failed = !std::cout.good() || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (failed) {
    const int e = errno;
    std::cerr << "ssmtune: cannot write to standard output"
              << (e != 0 ? std::string(": ") + std::strerror(e) : std::string()) << "\n";
    return code == 0 ? ssmtune::cli::kExitIoError : code;
  }
  return code;
}

int run(int argc, char** argv) {
  using namespace ssmtune::cli;
  CLI::App app{"ssmtune: JIT autotuner and runtime for the Mamba selective scan"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "ssmtune 0.1.0");
  app.footer(
      "Exit codes: 0 ok, 1 internal error, 2 usage, 3 bad input, 4 not found, 5 corrupt "
      "database, 6 no GPU, 7 I/O error.");
  add_devices_command(app);
  add_compile_command(app);
  add_check_command(app);
  add_bench_command(app);
  add_tune_command(app);
  add_worker_command(app);
  add_explain_command(app);
  add_db_command(app);
  add_report_command(app);
  add_number_checks(app);
  auto known = [&app](const std::string& name) {
    for (const auto* sub : app.get_subcommands({}))
      if (sub->get_name() == name) return true;
    return false;
  };
  if (argc > 1 && argv[1][0] != '-' && !known(argv[1])) {
    std::cerr << "ssmtune: unknown command '" << argv[1]
              << "'; run 'ssmtune --help' for the list\n";
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with code 0; every real parse
    // error is a usage error in one line (CLI11's own codes are 100 and up).
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "ssmtune: " << e.what() << " (run with --help)\n";
    return kExitUsage;
  }
  return exit_code();
}

}  // namespace

int main(int argc, char** argv) {
  int code;
  try {
    code = run(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "ssmtune: out of memory\n";
    code = ssmtune::cli::kExitInternal;
  } catch (const nlohmann::json::exception& e) {
    std::cerr << "ssmtune: internal error (JSON): " << e.what() << "\n";
    code = ssmtune::cli::kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << "ssmtune: internal error: " << e.what() << "\n";
    code = ssmtune::cli::kExitInternal;
  } catch (...) {
    std::cerr << "ssmtune: internal error: an unknown exception\n";
    code = ssmtune::cli::kExitInternal;
  }
  return finish(code);
}
