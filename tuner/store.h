// What a tuning session needs of a results store: devices, measurements and
// best entries. cache::TuningDb (sqlite) implements it; tests use an
// in-memory one. Keeping the interface here lets tuner/ record results
// without depending on cache/.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ssmtune/status.h"
#include "tuner/records.h"

namespace ssmtune {

// Which measurements measurements() returns; empty fields match anything.
struct MeasurementFilter {
  std::string family;
  std::string device_uuid;
  std::string problem_key;
  std::string config_key;
  std::optional<MeasureStatus> status;
  std::optional<Versions> current;  // only entries not stale against these
  int64_t limit = 0;                // 0: all; else the newest `limit`
};

class TuningStore {
 public:
  virtual ~TuningStore() = default;
  // Inserts or updates (name, driver, NVRTC may change) the device row.
  virtual Status upsert_device(const DeviceRecord& d) = 0;
  // Oldest first (the newest `limit` when limited), with their errors.
  virtual Result<std::vector<Measurement>> measurements(const MeasurementFilter& f) = 0;
  // All or none. The device must have been upserted; a timestamp of 0 is
  // replaced by the clock.
  virtual Status add_measurements(const std::vector<Measurement>& ms) = 0;
  Status add_measurement(const Measurement& m) { return add_measurements({m}); }
  // Replaces the (device, problem) entry.
  virtual Status set_best(const BestEntry& b) = 0;
  // The entry with `stale` computed against `current`; nullopt when none.
  virtual Result<std::optional<BestEntry>> best(const std::string& device_uuid,
                                                const std::string& problem_key,
                                                const Versions& current) = 0;
  // The UUIDs of the other devices of `self`'s class (same_class) that the
  // store holds, sorted: an identical GPU's results serve this one. A store
  // without device records has none.
  virtual Result<std::vector<std::string>> class_peers(const DeviceRecord& self) {
    (void)self;
    return std::vector<std::string>{};
  }
};

}  // namespace ssmtune
