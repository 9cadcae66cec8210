// In-memory LRU cubin cache.
#include "jit/cubin_cache.h"

namespace ssmtune::jit {

const KernelImage* CompiledProgram::find(const std::string& name_expression) const {
  for (const auto& k : kernels)
    if (k.name_expression == name_expression) return &k;
  return nullptr;
}

std::optional<CompiledProgram> MemoryCubinCache::get(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(key);
  if (it == index_.end()) {
    ++misses_;
    return std::nullopt;
  }
  ++hits_;
  lru_.splice(lru_.begin(), lru_, it->second);
  return *it->second;
}

void MemoryCubinCache::put(const CompiledProgram& program) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(program.key);
  if (it != index_.end()) {
    bytes_ -= it->second->cubin.size();
    lru_.erase(it->second);
    index_.erase(it);
  }
  lru_.push_front(program);
  lru_.front().from_cache = false;
  index_[program.key] = lru_.begin();
  bytes_ += program.cubin.size();
  while (bytes_ > max_bytes_ && lru_.size() > 1) {
    bytes_ -= lru_.back().cubin.size();
    index_.erase(lru_.back().key);
    lru_.pop_back();
  }
}

size_t MemoryCubinCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}
size_t MemoryCubinCache::misses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return misses_;
}
size_t MemoryCubinCache::entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lru_.size();
}

}  // namespace ssmtune::jit
