// Device allocations.
#include "jit/device_buffer.h"

#include <string>

namespace ssmtune::jit {

Result<DeviceBuffer> DeviceBuffer::allocate(size_t bytes) {
  SSMTUNE_ASSIGN_OR_RETURN(const Driver* d, Driver::get());
  const Driver& drv = *d;
  if (bytes == 0) return DeviceBuffer(d, 0, 0);
  CUdeviceptr p = 0;
  Status s = drv.check(drv.cuMemAlloc(&p, bytes), "cuMemAlloc");
  if (!s) return s.with_context("allocating " + std::to_string(bytes) + " bytes");
  return DeviceBuffer(d, p, bytes);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_ != 0) drv_->cuMemFree(ptr_);
    drv_ = o.drv_;
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = 0;
    o.bytes_ = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != 0) drv_->cuMemFree(ptr_);
}

Status DeviceBuffer::check_range(size_t bytes, size_t offset) const {
  if (offset > bytes_ || bytes > bytes_ - offset)
    return Status::invalid_argument("copy of " + std::to_string(bytes) + " bytes at offset " +
                                    std::to_string(offset) + " overruns a buffer of " +
                                    std::to_string(bytes_));
  return Status::ok();
}

Status DeviceBuffer::upload(const void* src, size_t bytes, size_t offset) const {
  SSMTUNE_RETURN_IF_ERROR(check_range(bytes, offset));
  if (bytes == 0) return Status::ok();
  const Driver& drv = *drv_;
  SSMTUNE_CU(drv.cuMemcpyHtoD(ptr_ + offset, src, bytes));
  return Status::ok();
}

Status DeviceBuffer::download(void* dst, size_t bytes, size_t offset) const {
  SSMTUNE_RETURN_IF_ERROR(check_range(bytes, offset));
  if (bytes == 0) return Status::ok();
  const Driver& drv = *drv_;
  SSMTUNE_CU(drv.cuMemcpyDtoH(dst, ptr_ + offset, bytes));
  return Status::ok();
}

Status DeviceBuffer::fill_bytes(unsigned char value, CUstream stream) const {
  if (bytes_ == 0) return Status::ok();
  const Driver& drv = *drv_;
  SSMTUNE_CU(drv.cuMemsetD8Async(ptr_, value, bytes_, stream));
  return Status::ok();
}

}  // namespace ssmtune::jit
