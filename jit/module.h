// A loaded cubin (Module) and the kernels in it (Kernel). A Kernel is a
// non-owning handle valid while its Module lives; launch() passes one
// trivially copyable params struct by value, the only argument every
// ssmtune kernel takes. Module is move-only; load/unload need a current
// context. Launching one Kernel from several threads at once is safe.
#pragma once

#include <string>
#include <type_traits>

#include "jit/driver.h"
#include "ssmtune/status.h"

namespace ssmtune::jit {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

class Kernel {
 public:
  Kernel() = default;
  const std::string& name() const { return name_; }
  CUfunction get() const { return fn_; }
  bool valid() const { return fn_ != nullptr; }

  // Raises the dynamic shared-memory limit (needed above 48 KiB).
  Status set_max_dynamic_shared(int bytes) const;
  Result<int> attribute(CUfunction_attribute attr) const;
  // Resident blocks per SM at this block size and dynamic shared memory.
  Result<int> occupancy(int block_threads, size_t dynamic_shared) const;

  template <typename Params>
  Status launch(Dim3 grid, Dim3 block, unsigned dynamic_shared, CUstream stream,
                const Params& params) const {
    static_assert(std::is_trivially_copyable_v<Params>, "kernel params must be trivially copyable");
    void* args[] = {const_cast<Params*>(&params)};
    return launch_raw(grid, block, dynamic_shared, stream, args);
  }
  Status launch_raw(Dim3 grid, Dim3 block, unsigned dynamic_shared, CUstream stream,
                    void** args) const;

 private:
  friend class Module;
  Kernel(const Driver* drv, CUfunction fn, std::string name)
      : drv_(drv), fn_(fn), name_(std::move(name)) {}
  const Driver* drv_ = nullptr;
  CUfunction fn_ = nullptr;
  std::string name_;
};

class Module {
 public:
  // Loads a cubin image into the current context.
  static Result<Module> load(const std::string& cubin);
  Module(Module&& o) noexcept : drv_(o.drv_), mod_(o.mod_) { o.mod_ = nullptr; }
  Module& operator=(Module&& o) noexcept;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module();

  // By lowered (mangled) name, as CompiledProgram's KernelImage gives it.
  Result<Kernel> kernel(const std::string& lowered_name) const;
  CUmodule get() const { return mod_; }

 private:
  Module(const Driver* drv, CUmodule mod) : drv_(drv), mod_(mod) {}
  const Driver* drv_ = nullptr;
  CUmodule mod_ = nullptr;
};

}  // namespace ssmtune::jit
