// Each subcommand registers itself on the top-level CLI11 app and runs
// through a callback that sets the process exit code. Errors go to stderr
// as one "ssmtune <cmd>: <message>" line.
#pragma once

#include <CLI/CLI.hpp>

#include "ssmtune/status.h"

namespace ssmtune::cli {

// Exit code a command's callback leaves for main().
int& exit_code();
// Prints "ssmtune <command>: <status>" to stderr and sets the exit code
// (cli/exit_codes.h: exit_code_for(s.code()), or `code`). Returns false when
// `s` is an error.
bool report(const char* command, const Status& s);
bool report(const char* command, const Status& s, int code);
// As report(), for errors in an input file's contents: invalid arguments
// exit with kExitBadInput rather than kExitUsage.
bool report_input(const char* command, const Status& s);

void add_devices_command(CLI::App& app);
void add_compile_command(CLI::App& app);
void add_check_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_tune_command(CLI::App& app);
void add_worker_command(CLI::App& app);
void add_explain_command(CLI::App& app);
void add_db_command(CLI::App& app);
void add_report_command(CLI::App& app);

}  // namespace ssmtune::cli
