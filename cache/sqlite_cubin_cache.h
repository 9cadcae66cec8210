// The JIT layer's cubin cache kept in the tuning database, so compiled
// programs are shared between processes and survive them. Thread-safe: one
// connection of its own, guarded by a mutex, so the compiler's worker
// threads may call get() and put() at once. Over a database list
// (cache/db_path.h) get() reads the local database, then each shared one;
// put() writes the local one only.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cache/tuning_db.h"
#include "jit/cubin_cache.h"

namespace ssmtune::cache {

class SqliteCubinCache final : public jit::CubinCache {
 public:
  // Opens its own connection to the database at `path` (created if
  // missing); `path` may be a database list: its shared layers are opened
  // read-only and must exist.
  static Result<std::unique_ptr<SqliteCubinCache>> open(const std::string& path);
  // Takes over `db` (and the read-only `shared` layers), which no one else
  // may use afterwards.
  explicit SqliteCubinCache(TuningDb db, std::vector<TuningDb> shared = {})
      : db_(std::move(db)), shared_(std::move(shared)) {}

  // A database error is a miss (get) or a dropped entry (put): compiling
  // again is always correct. Each is counted and the last one kept.
  std::optional<jit::CompiledProgram> get(const std::string& key) override;
  void put(const jit::CompiledProgram& program) override;

  size_t hits() const;
  size_t misses() const;
  size_t errors() const;
  Status last_error() const;

 private:
  void record(const Status& s);  // with mu_ held
  mutable std::mutex mu_;
  TuningDb db_;
  std::vector<TuningDb> shared_;
  size_t hits_ = 0;
  size_t misses_ = 0;
  size_t errors_ = 0;
  Status last_error_;
};

}  // namespace ssmtune::cache
