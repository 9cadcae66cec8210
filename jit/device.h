// GPUs as the Driver API sees them: the facts the tuner keys its database
// on (name, UUID, compute capability, driver) and the limits it prunes by
// (SMs, shared memory, registers), plus the retained primary context.
// DeviceInfo is a value. Context is move-only; make_current() must be called
// on each host thread before it issues work (cuCtxSetCurrent is per thread).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "jit/driver.h"
#include "ssmtune/status.h"

namespace ssmtune::jit {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  std::string uuid;  // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  size_t total_memory = 0;   // bytes
  int sm_clock_khz = 0;      // peak
  int memory_clock_khz = 0;  // peak
  int memory_bus_bits = 0;
  int l2_bytes = 0;
  int max_shared_per_block = 0;  // opt-in maximum for dynamic shared memory
  int max_shared_per_sm = 0;
  int registers_per_sm = 0;
  int max_threads_per_sm = 0;
  int max_threads_per_block = 0;
  int warp_size = 32;
  int driver_version = 0;     // e.g. 13000
  std::string nvrtc_version;  // e.g. "13.0"

  std::string arch() const;           // "sm_90"
  double peak_bandwidth_gbs() const;  // from memory clock and bus width (a lead, not a measurement)
};

// Every device, or kNoDriver when there is no usable driver.
Result<std::vector<DeviceInfo>> list_devices();
Result<DeviceInfo> query_device(int ordinal);

// The device's primary context, retained for the life of this object.
class Context {
 public:
  static Result<Context> create(int ordinal);
  Context(Context&& o) noexcept;
  Context& operator=(Context&& o) noexcept;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context();

  Status make_current() const;
  Status synchronize() const;
  int ordinal() const { return ordinal_; }
  CUcontext get() const { return ctx_; }
  const Driver& driver() const { return *drv_; }

 private:
  Context(const Driver* drv, CUdevice dev, CUcontext ctx, int ordinal)
      : drv_(drv), dev_(dev), ctx_(ctx), ordinal_(ordinal) {}
  const Driver* drv_ = nullptr;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  int ordinal_ = -1;
};

}  // namespace ssmtune::jit
