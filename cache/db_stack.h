// A fleet's stack of tuning databases: the writable local database over
// read-only shared ones (a --db / $SSMTUNE_DB list, cache/db_path.h). As
// the tuning session's store it writes (devices, measurements, best
// entries) to the local database only and reads best entries local first,
// then each shared layer; selection walks layers() (runtime/selector.h).
// Thread safety: as TuningDb, one stack per thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cache/db_path.h"
#include "cache/tuning_db.h"
#include "tuner/store.h"

namespace ssmtune::cache {

// One layer as lookups see it: its connection (owned by the stack) and
// whether it is a shared, read-only one.
struct DbLayer {
  TuningDb* db = nullptr;
  bool shared = false;
};

class DbStack final : public TuningStore {
 public:
  // Opens every shared path of `paths` read-only (never migrated nor
  // written, also in a read-only directory). A missing file, a directory,
  // an empty file or an older schema is an error naming the shared path;
  // nothing is skipped.
  static Result<std::vector<TuningDb>> open_shared(const DbPathList& paths);
  // The local database opened with `local_mode`, then open_shared().
  static Result<DbStack> open(const DbPathList& paths, OpenMode local_mode);

  // `local` may be absent (a read with no local file yet).
  DbStack(std::optional<TuningDb> local, std::vector<TuningDb> shared)
      : local_(std::move(local)), shared_(std::move(shared)) {}
  DbStack(DbStack&&) noexcept = default;
  DbStack& operator=(DbStack&&) noexcept = default;
  DbStack(const DbStack&) = delete;
  DbStack& operator=(const DbStack&) = delete;
  ~DbStack() override = default;

  bool has_local() const { return local_.has_value(); }
  TuningDb& local() { return *local_; }  // requires has_local()
  // The local layer (when present) first, then the shared ones in order.
  std::vector<DbLayer> layers();
  // More than one layer: lookups name the layer a result came from.
  bool layered() const { return shared_.size() + (local_ ? 1 : 0) > 1; }

  // --- TuningStore: writes and measurements are the local database's
  // (kInvalidArgument without one).
  Status upsert_device(const DeviceRecord& d) override;
  Result<std::vector<Measurement>> measurements(const MeasurementFilter& f) override;
  Status add_measurements(const std::vector<Measurement>& ms) override;
  Status set_best(const BestEntry& b) override;
  // The first current (not stale) entry, local first then each shared
  // layer; else the first stale one; nullopt when no layer has one.
  Result<std::optional<BestEntry>> best(const std::string& device_uuid,
                                        const std::string& problem_key,
                                        const Versions& current) override;
  // Every layer's peers of `self`'s class, once each, sorted.
  Result<std::vector<std::string>> class_peers(const DeviceRecord& self) override;

 private:
  Result<TuningDb*> writable();
  std::optional<TuningDb> local_;
  std::vector<TuningDb> shared_;
};

}  // namespace ssmtune::cache
