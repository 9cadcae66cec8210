// Device tensors.
#include "tuner/device_tensors.h"

#include "jit/driver.h"
#include "tuner/accuracy.h"

namespace ssmtune {

TensorArg describe(const jit::DeviceBuffer& buf, DType dtype, const std::vector<int64_t>& shape) {
  TensorArg t;
  t.data = reinterpret_cast<const void*>(buf.get());
  t.dtype = dtype;
  t.rank = static_cast<int>(shape.size());
  int64_t stride = 1;
  for (int i = t.rank - 1; i >= 0; --i) {
    t.shape[i] = shape[static_cast<size_t>(i)];
    t.stride[i] = stride;
    stride *= shape[static_cast<size_t>(i)];
  }
  return t;
}

Result<jit::DeviceBuffer> upload_values(const std::vector<double>& values, DType dtype) {
  const auto bytes = encode(values, dtype);
  SSMTUNE_ASSIGN_OR_RETURN(jit::DeviceBuffer buf, jit::DeviceBuffer::allocate(bytes.size()));
  SSMTUNE_RETURN_IF_ERROR(buf.upload(bytes.data(), bytes.size()));
  return buf;
}

Status fill_pattern(const jit::DeviceBuffer& buf, DType dtype, CUstream stream) {
  if (buf.bytes() == 0) return Status::ok();
  SSMTUNE_ASSIGN_OR_RETURN(const jit::Driver* d, jit::Driver::get());
  const jit::Driver& drv = *d;
  if (dtype == DType::kF32) {
    SSMTUNE_CU(drv.cuMemsetD32Async(buf.get(), kPoisonF32, buf.bytes() / 4, stream));
  } else {
    const uint16_t v = dtype == DType::kF16 ? kPoisonF16 : kPoisonBF16;
    SSMTUNE_CU(drv.cuMemsetD16Async(buf.get(), v, buf.bytes() / 2, stream));
  }
  return Status::ok();
}

Result<std::vector<unsigned char>> bytes_of(const jit::DeviceBuffer& buf) {
  std::vector<unsigned char> v(buf.bytes());
  if (!v.empty()) SSMTUNE_RETURN_IF_ERROR(buf.download(v.data(), v.size()));
  return v;
}

}  // namespace ssmtune
