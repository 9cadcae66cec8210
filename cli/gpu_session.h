// What every GPU subcommand sets up first: device 0's context and info, and
// a compiler over the embedded (or SSMTUNE_TEMPLATE_DIR) templates with an
// in-memory cubin cache. Fails with one clear line without a driver.
#pragma once

#include <memory>

#include "jit/compiler.h"
#include "jit/device.h"

namespace ssmtune::cli {

struct GpuSession {
  jit::Context context;
  jit::DeviceInfo device;
  std::unique_ptr<jit::MemoryCubinCache> cache;
  std::unique_ptr<jit::Compiler> compiler;

  // `cache` may be given (e.g. the tuning database's); else an in-memory one.
  static Result<GpuSession> open(int ordinal = 0, jit::CubinCache* cache = nullptr);
};

}  // namespace ssmtune::cli
