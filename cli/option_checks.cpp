// Number checks on CLI11 options.
#include "cli/option_checks.h"

#include <cmath>
#include <string>

namespace ssmtune::cli {
namespace {

bool all_digits(const std::string& s, size_t from) {
  if (from >= s.size()) return false;
  for (size_t i = from; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

// "0100" -> "100": CLI11 would read a leading zero as octal.
void strip_leading_zeros(std::string& s, size_t from) {
  size_t i = from;
  while (i + 1 < s.size() && s[i] == '0') ++i;
  s.erase(from, i - from);
}

CLI::Validator decimal_integer(bool is_unsigned) {
  return CLI::Validator(
      [is_unsigned](std::string& s) -> std::string {
        const size_t from = !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0;
        if (!all_digits(s, from)) return "'" + s + "' is not a decimal integer";
        if (is_unsigned && s[0] == '-') return "'" + s + "' is negative";
        strip_leading_zeros(s, from);
        return {};
      },
      "", "decimal");
}

CLI::Validator finite_number() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        try {
          size_t used = 0;
          const double v = std::stod(s, &used);
          if (used != s.size()) return "'" + s + "' is not a number";
          if (!std::isfinite(v)) return "'" + s + "' is not a finite number";
        } catch (...) {
          return "'" + s + "' is not a number";
        }
        return {};
      },
      "", "finite");
}

void walk(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    const std::string type = opt->get_type_name();
    if (type.rfind("UINT", 0) == 0) {
      opt->transform(decimal_integer(true));
    } else if (type.rfind("INT", 0) == 0) {
      opt->transform(decimal_integer(false));
    } else if (type.rfind("FLOAT", 0) == 0) {
      opt->check(finite_number());
    }
  }
  for (CLI::App* sub : app.get_subcommands({})) walk(*sub);
}

}  // namespace

void add_number_checks(CLI::App& app) { walk(app); }

const CLI::Validator& non_negative() {
  static const CLI::Validator kNonNegative(
      [](std::string& s) -> std::string {
        try {
          if (std::stod(s) < 0) return "must be >= 0 (got " + s + ")";
        } catch (...) {
          return "'" + s + "' is not a number";
        }
        return {};
      },
      "", ">=0");
  return kNonNegative;
}

}  // namespace ssmtune::cli
