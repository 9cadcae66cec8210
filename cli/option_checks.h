// Checks applied to the options of every ssmtune command when they are
// parsed: integers are decimal only (CLI11 would read 0100 as octal and
// 0x10 as hex), unsigned ones are not negative, floating-point ones are
// finite; and the validators a command adds to one option (non-negative).
#pragma once

#include <CLI/CLI.hpp>

namespace ssmtune::cli {

// Walks `app` and its subcommands, adding the integer and number checks to
// every option whose type is INT, UINT or FLOAT. Call once, after every
// command has added its options.
void add_number_checks(CLI::App& app);

// A validator for an option that must be >= 0 (a budget, a timeout, a limit).
const CLI::Validator& non_negative();

}  // namespace ssmtune::cli
