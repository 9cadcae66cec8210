// Device queries and the primary context owner.
#include "jit/device.h"

#include <cstdio>

#include "jit/compiler.h"

namespace ssmtune::jit {
namespace {

std::string format_uuid(const CUuuid& u) {
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  char buf[64];
  std::snprintf(buf, sizeof buf,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return buf;
}

}  // namespace

std::string DeviceInfo::arch() const { return arch_for(cc_major, cc_minor); }

double DeviceInfo::peak_bandwidth_gbs() const {
  // Double data rate: two transfers per memory clock.
  return 2.0 * memory_clock_khz * 1e3 * (memory_bus_bits / 8.0) / 1e9;
}

Result<DeviceInfo> query_device(int ordinal) {
  SSMTUNE_ASSIGN_OR_RETURN(const Driver* d, Driver::get());
  const Driver& drv = *d;
  int count = 0;
  SSMTUNE_CU(drv.cuDeviceGetCount(&count));
  if (ordinal < 0 || ordinal >= count)
    return Status::invalid_argument("device " + std::to_string(ordinal) + " does not exist (" +
                                    std::to_string(count) + " CUDA devices)");
  CUdevice dev = 0;
  SSMTUNE_CU(drv.cuDeviceGet(&dev, ordinal));
  DeviceInfo info;
  info.ordinal = ordinal;
  char name[256] = {};
  SSMTUNE_CU(drv.cuDeviceGetName(name, sizeof name - 1, dev));
  info.name = name;
  CUuuid uuid;
  SSMTUNE_CU(drv.cuDeviceGetUuid(&uuid, dev));
  info.uuid = format_uuid(uuid);
  SSMTUNE_CU(drv.cuDeviceTotalMem(&info.total_memory, dev));
  struct {
    CUdevice_attribute attr;
    int* out;
  } attrs[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &info.cc_major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &info.cc_minor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info.sm_count},
      {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &info.sm_clock_khz},
      {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, &info.memory_clock_khz},
      {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, &info.memory_bus_bits},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &info.l2_bytes},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &info.max_shared_per_block},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, &info.max_shared_per_sm},
      {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, &info.registers_per_sm},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, &info.max_threads_per_sm},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &info.max_threads_per_block},
      {CU_DEVICE_ATTRIBUTE_WARP_SIZE, &info.warp_size},
  };
  for (auto& a : attrs) SSMTUNE_CU(drv.cuDeviceGetAttribute(a.out, a.attr, dev));
  info.driver_version = drv.driver_version;
  info.nvrtc_version = nvrtc_version().to_string();
  return info;
}

Result<std::vector<DeviceInfo>> list_devices() {
  SSMTUNE_ASSIGN_OR_RETURN(const Driver* d, Driver::get());
  const Driver& drv = *d;
  int count = 0;
  SSMTUNE_CU(drv.cuDeviceGetCount(&count));
  std::vector<DeviceInfo> out;
  for (int i = 0; i < count; ++i) {
    SSMTUNE_ASSIGN_OR_RETURN(DeviceInfo info, query_device(i));
    out.push_back(std::move(info));
  }
  return out;
}

Result<Context> Context::create(int ordinal) {
  SSMTUNE_ASSIGN_OR_RETURN(const Driver* d, Driver::get());
  const Driver& drv = *d;
  int count = 0;
  SSMTUNE_CU(drv.cuDeviceGetCount(&count));
  if (count == 0) return Status::no_driver("the CUDA driver reports no GPU");
  if (ordinal < 0 || ordinal >= count)
    return Status::invalid_argument("device " + std::to_string(ordinal) + " does not exist (" +
                                    std::to_string(count) + " CUDA devices)");
  CUdevice dev = 0;
  SSMTUNE_CU(drv.cuDeviceGet(&dev, ordinal));
  CUcontext ctx = nullptr;
  SSMTUNE_CU(drv.cuDevicePrimaryCtxRetain(&ctx, dev));
  Context c(d, dev, ctx, ordinal);
  SSMTUNE_RETURN_IF_ERROR(c.make_current());
  return c;
}

Context::Context(Context&& o) noexcept
    : drv_(o.drv_), dev_(o.dev_), ctx_(o.ctx_), ordinal_(o.ordinal_) {
  o.ctx_ = nullptr;
}

Context& Context::operator=(Context&& o) noexcept {
  if (this != &o) {
    if (ctx_ != nullptr) drv_->cuDevicePrimaryCtxRelease(dev_);
    drv_ = o.drv_;
    dev_ = o.dev_;
    ctx_ = o.ctx_;
    ordinal_ = o.ordinal_;
    o.ctx_ = nullptr;
  }
  return *this;
}

Context::~Context() {
  if (ctx_ != nullptr) drv_->cuDevicePrimaryCtxRelease(dev_);
}

Status Context::make_current() const {
  const Driver& drv = *drv_;
  CUcontext now = nullptr;  // a query is cheaper than a switch: library calls ask every time
  if (drv.cuCtxGetCurrent(&now) == CUDA_SUCCESS && now == ctx_) return Status::ok();
  SSMTUNE_CU(drv.cuCtxSetCurrent(ctx_));
  return Status::ok();
}

Status Context::synchronize() const {
  const Driver& drv = *drv_;
  SSMTUNE_CU(drv.cuCtxSynchronize());
  return Status::ok();
}

}  // namespace ssmtune::jit
