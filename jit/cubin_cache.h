// Where compiled programs are kept between compilations, keyed by the hash
// of everything that can change the cubin (source, headers, name
// expressions, options, NVRTC version, arch). The in-memory LRU here serves
// one process; the sqlite tuning database implements the same interface to
// share cubins between processes. Implementations must be thread-safe.
#pragma once

#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "jit/resource_report.h"

namespace ssmtune::jit {

// One kernel of a compiled program.
struct KernelImage {
  std::string name_expression;  // as given, e.g. "ssm::fwd_kernel<...>"
  std::string lowered_name;     // mangled symbol for cuModuleGetFunction
  ResourceUsage resources;
};

struct CompiledProgram {
  std::string key;    // cache key (32 hex digits)
  std::string arch;   // "sm_90"
  std::string cubin;  // the ELF image, bytes
  std::vector<KernelImage> kernels;
  std::string log;             // NVRTC log (holds the ptxas report)
  double compile_seconds = 0;  // wall time of nvrtcCompileProgram; 0 when cached
  bool from_cache = false;

  const KernelImage* find(const std::string& name_expression) const;
};

class CubinCache {
 public:
  virtual ~CubinCache() = default;
  virtual std::optional<CompiledProgram> get(const std::string& key) = 0;
  virtual void put(const CompiledProgram& program) = 0;
};

// Least-recently-used in-memory cache, bounded by total cubin bytes.
class MemoryCubinCache final : public CubinCache {
 public:
  explicit MemoryCubinCache(size_t max_bytes = size_t{256} << 20) : max_bytes_(max_bytes) {}

  std::optional<CompiledProgram> get(const std::string& key) override;
  void put(const CompiledProgram& program) override;

  size_t hits() const;
  size_t misses() const;
  size_t entries() const;

 private:
  using List = std::list<CompiledProgram>;
  mutable std::mutex mu_;
  size_t max_bytes_;
  size_t bytes_ = 0;
  size_t hits_ = 0;
  size_t misses_ = 0;
  List lru_;  // front: most recent
  std::unordered_map<std::string, List::iterator> index_;
};

}  // namespace ssmtune::jit
