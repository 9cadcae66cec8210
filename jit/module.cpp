// Module loading and kernel launch.
#include "jit/module.h"

namespace ssmtune::jit {

Result<Module> Module::load(const std::string& cubin) {
  SSMTUNE_ASSIGN_OR_RETURN(const Driver* d, Driver::get());
  const Driver& drv = *d;
  if (cubin.empty()) return Status::invalid_argument("empty cubin image");
  CUmodule mod = nullptr;
  SSMTUNE_CU(drv.cuModuleLoadData(&mod, cubin.data()));
  return Module(d, mod);
}

Module& Module::operator=(Module&& o) noexcept {
  if (this != &o) {
    if (mod_ != nullptr) drv_->cuModuleUnload(mod_);
    drv_ = o.drv_;
    mod_ = o.mod_;
    o.mod_ = nullptr;
  }
  return *this;
}

Module::~Module() {
  if (mod_ != nullptr) drv_->cuModuleUnload(mod_);
}

Result<Kernel> Module::kernel(const std::string& lowered_name) const {
  const Driver& drv = *drv_;
  CUfunction fn = nullptr;
  Status s =
      drv.check(drv.cuModuleGetFunction(&fn, mod_, lowered_name.c_str()), "cuModuleGetFunction");
  if (!s) return s.with_context("kernel '" + lowered_name + "'");
  return Kernel(drv_, fn, lowered_name);
}

Status Kernel::set_max_dynamic_shared(int bytes) const {
  const Driver& drv = *drv_;
  SSMTUNE_CU(drv.cuFuncSetAttribute(fn_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes));
  return Status::ok();
}

Result<int> Kernel::attribute(CUfunction_attribute attr) const {
  const Driver& drv = *drv_;
  int v = 0;
  SSMTUNE_CU(drv.cuFuncGetAttribute(&v, attr, fn_));
  return v;
}

Result<int> Kernel::occupancy(int block_threads, size_t dynamic_shared) const {
  const Driver& drv = *drv_;
  int blocks = 0;
  SSMTUNE_CU(
      drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn_, block_threads, dynamic_shared));
  return blocks;
}

Status Kernel::launch_raw(Dim3 grid, Dim3 block, unsigned dynamic_shared, CUstream stream,
                          void** args) const {
  if (fn_ == nullptr) return Status::invalid_argument("launch of an empty kernel handle");
  if (grid.x == 0 || grid.y == 0 || grid.z == 0)
    return Status::invalid_argument("kernel '" + name_ + "': empty grid");
  const Driver& drv = *drv_;
  Status s = drv.check(drv.cuLaunchKernel(fn_, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                          dynamic_shared, stream, args, nullptr),
                       "cuLaunchKernel");
  if (!s) {
    return s.with_context("kernel '" + name_ + "' grid (" + std::to_string(grid.x) + "," +
                          std::to_string(grid.y) + "," + std::to_string(grid.z) + ") block (" +
                          std::to_string(block.x) + "," + std::to_string(block.y) + "," +
                          std::to_string(block.z) + ") smem " + std::to_string(dynamic_shared));
  }
  return Status::ok();
}

}  // namespace ssmtune::jit
