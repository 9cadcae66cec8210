// `ssmtune devices`: the GPUs the driver sees, with what the tuner keys on.
#include <iostream>

#include "cli/commands.h"
#include "cli/table.h"
#include "jit/compiler.h"
#include "jit/device.h"

namespace ssmtune::cli {

void add_devices_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("devices", "List CUDA devices (needs a driver)");
  auto format = std::make_shared<std::string>("table");
  cmd->add_option("--format", *format, "table, json or csv")->capture_default_str();
  cmd->callback([format] {
    auto fmt = parse_format(*format);
    if (!report("devices", fmt.status())) return;
    auto devices = jit::list_devices();
    if (!report("devices", devices.status())) return;
    Table t({"ordinal", "name", "uuid", "arch", "sms", "memory_gib", "sm_clock_mhz",
             "memory_clock_mhz", "l2_mib", "smem_per_block_kib", "driver", "nvrtc"});
    for (const auto& d : *devices) {
      t.add_row({d.ordinal, d.name, d.uuid, d.arch(), d.sm_count,
                 static_cast<double>(d.total_memory) / (1 << 30), d.sm_clock_khz / 1000,
                 d.memory_clock_khz / 1000, d.l2_bytes / double(1 << 20),
                 d.max_shared_per_block / 1024, jit::cuda_version_string(d.driver_version),
                 d.nvrtc_version});
    }
    t.print(std::cout, *fmt);
    if (devices->empty()) report("devices", Status::no_driver("the CUDA driver reports no GPU"));
  });
}

}  // namespace ssmtune::cli
