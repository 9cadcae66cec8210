// Move-only owner of a device allocation (cuMemAlloc), with typed copies.
// Needs a current context to allocate and free.
#pragma once

#include <cstddef>
#include <vector>

#include "jit/driver.h"
#include "ssmtune/status.h"

namespace ssmtune::jit {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  static Result<DeviceBuffer> allocate(size_t bytes);
  DeviceBuffer(DeviceBuffer&& o) noexcept : drv_(o.drv_), ptr_(o.ptr_), bytes_(o.bytes_) {
    o.ptr_ = 0;
    o.bytes_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  CUdeviceptr get() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  template <typename T>
  T* as() const {
    return reinterpret_cast<T*>(ptr_);
  }

  Status upload(const void* src, size_t bytes, size_t offset = 0) const;
  Status download(void* dst, size_t bytes, size_t offset = 0) const;
  // Every byte set to `value` (0xFF poisons floats to NaN).
  Status fill_bytes(unsigned char value, CUstream stream = nullptr) const;

  template <typename T>
  Status upload(const std::vector<T>& v) const {
    return upload(v.data(), v.size() * sizeof(T));
  }
  template <typename T>
  Status download(std::vector<T>& v) const {
    return download(v.data(), v.size() * sizeof(T));
  }

 private:
  DeviceBuffer(const Driver* drv, CUdeviceptr p, size_t bytes)
      : drv_(drv), ptr_(p), bytes_(bytes) {}
  Status check_range(size_t bytes, size_t offset) const;
  const Driver* drv_ = nullptr;
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

}  // namespace ssmtune::jit
