// Cubin cache over the tuning database's cubins table.
#include "cache/sqlite_cubin_cache.h"

#include "cache/db_stack.h"

namespace ssmtune::cache {

Result<std::unique_ptr<SqliteCubinCache>> SqliteCubinCache::open(const std::string& path) {
  SSMTUNE_ASSIGN_OR_RETURN(DbPathList paths, split_db_paths(path));
  SSMTUNE_ASSIGN_OR_RETURN(TuningDb db, TuningDb::open(paths.local, OpenMode::kReadWrite));
  SSMTUNE_ASSIGN_OR_RETURN(std::vector<TuningDb> shared, DbStack::open_shared(paths));
  return std::make_unique<SqliteCubinCache>(std::move(db), std::move(shared));
}

void SqliteCubinCache::record(const Status& s) {
  if (s.is_ok()) return;
  ++errors_;
  last_error_ = s;
}

std::optional<jit::CompiledProgram> SqliteCubinCache::get(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto found = db_.get_cubin(key);
  record(found.status());
  for (size_t i = 0; i < shared_.size() && (!found || !found->has_value()); ++i) {
    found = shared_[i].get_cubin(key);
    record(found.status());
  }
  if (!found || !found->has_value()) {
    ++misses_;
    return std::nullopt;
  }
  ++hits_;
  return std::move(*found).value();
}

void SqliteCubinCache::put(const jit::CompiledProgram& program) {
  std::lock_guard<std::mutex> lock(mu_);
  record(db_.put_cubin(program));
}

size_t SqliteCubinCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}
size_t SqliteCubinCache::misses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return misses_;
}
size_t SqliteCubinCache::errors() const {
  std::lock_guard<std::mutex> lock(mu_);
  return errors_;
}
Status SqliteCubinCache::last_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

}  // namespace ssmtune::cache
