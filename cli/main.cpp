// The ssmtune command: tune, bench, check, db, devices, compile.
#include <iostream>

#include "cli/commands.h"

namespace ssmtune::cli {

int& exit_code() {
  static int code = 0;
  return code;
}

bool report(const char* command, const Status& s) {
  if (s.is_ok()) return true;
  std::cerr << "ssmtune " << command << ": " << s.to_string() << "\n";
  exit_code() = s.code() == Code::kInvalidArgument ? 2 : 1;
  return false;
}

}  // namespace ssmtune::cli

int main(int argc, char** argv) {
  CLI::App app{"ssmtune: JIT autotuner and runtime for the Mamba selective scan"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "ssmtune 0.1.0");
  ssmtune::cli::add_devices_command(app);
  ssmtune::cli::add_compile_command(app);
  ssmtune::cli::add_check_command(app);
  ssmtune::cli::add_bench_command(app);
  ssmtune::cli::add_tune_command(app);
  ssmtune::cli::add_worker_command(app);
  ssmtune::cli::add_explain_command(app);
  ssmtune::cli::add_db_command(app);
  ssmtune::cli::add_report_command(app);
  auto known = [&app](const std::string& name) {
    for (const auto* sub : app.get_subcommands({}))
      if (sub->get_name() == name) return true;
    return false;
  };
  if (argc > 1 && argv[1][0] != '-' && !known(argv[1])) {
    std::cerr << "ssmtune: unknown command '" << argv[1]
              << "'; run 'ssmtune --help' for the list\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return ssmtune::cli::exit_code();
}
