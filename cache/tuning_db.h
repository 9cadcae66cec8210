// The sqlite tuning database: devices, problems, configs, every measurement,
// the best config per (device, problem), and compiled cubins; JSON export,
// import and merge for moving results between machines.
// Thread safety: one TuningDb per thread (it owns one connection). Several
// processes (and threads with their own TuningDb) may write one file at
// once: WAL, a busy timeout, BEGIN IMMEDIATE and a retry on SQLITE_BUSY.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/schema.h"
#include "cache/sqlite.h"
#include "jit/cubin_cache.h"
#include "ssmtune/status.h"
#include "tuner/records.h"
#include "tuner/store.h"

namespace ssmtune::cache {

enum class OpenMode {
  kReadWrite,  // creates the file (and its directory) if missing; migrates an older schema
  kReadOnly,   // the file must exist and hold the current schema; never written, also where
               // this process cannot write (cache/read_only_open.h)
};

// One problem key with what the database holds for it.
struct ProblemSummary {
  std::string key;  // with its family prefix
  std::string family;
  int64_t measurements = 0;
  int64_t ok = 0;       // measurements with status ok
  int64_t devices = 0;  // devices it was measured on
  int64_t best = 0;     // best entries (one per device)
};

struct DeviceSummary {
  DeviceRecord device;
  int64_t measurements = 0;
  int64_t problems = 0;
};

// What prune() removes. At least one criterion must be set.
struct PruneOptions {
  bool stale = false;                  // measurements and best entries stale against `versions`
  Versions versions;                   // for `stale`
  bool failed = false;                 // compile_failed, launch_failed and faulted measurements
  std::optional<int> older_than_days;  // measurements older than this many days
  int64_t now = 0;                     // unix seconds for older_than_days; 0: the clock
  bool dry_run = false;                // only count (works on a read-only database)
};

struct PruneReport {
  int64_t measurements = 0;
  int64_t best = 0;
};

enum class MergePolicy {
  kIncomingWins,  // import: on a (device, problem) conflict the file's best entry replaces ours
  kNewerWins,     // merge: the entry with the newer timestamp stays
};

struct ImportReport {
  int64_t devices_added = 0;
  int64_t measurements_added = 0;
  int64_t measurements_skipped = 0;  // already present (same device, problem, config, time, hash)
  int64_t best_added = 0;
  int64_t best_replaced = 0;
  int64_t best_kept = 0;  // ours kept: newer than the file's (kNewerWins)
};

// FwdProblem keys without a family prefix are taken as forward keys ("fwd:"
// prepended) wherever the database is given one (records, filters,
// lookups); the keys it returns always carry their prefix. A record's
// `family` must be its problem key's (empty: filled in).
class TuningDb final : public TuningStore {
 public:
  // Opens (kReadWrite: creates) the database at `path`. A file that is not
  // sqlite, is corrupt, is another program's sqlite database or was written
  // by a newer ssmtune is refused with a message and left byte-identical:
  // it is inspected read-only before WAL is enabled or anything is created.
  static Result<TuningDb> open(const std::string& path, OpenMode mode);
  // The schema version of the file at `path` without changing it: 0 when it
  // is missing or empty; the errors of open() otherwise.
  static Result<int> schema_version_of(const std::string& path);

  TuningDb(TuningDb&&) noexcept = default;
  TuningDb& operator=(TuningDb&&) noexcept = default;
  TuningDb(const TuningDb&) = delete;
  TuningDb& operator=(const TuningDb&) = delete;
  ~TuningDb() override = default;

  const std::string& path() const { return path_; }
  bool read_only() const { return read_only_; }
  // PRAGMA integrity_check: ok, or kCorrupt with sqlite's findings.
  Status check_integrity();

  // --- Devices, problems, configs
  // Every write checks its records first (cache/record_checks.h): a value
  // out of range, a key that does not parse or a config illegal for its
  // problem is kInvalidArgument naming the field, and nothing is written.

  // Inserts or updates (name, driver, NVRTC may change) the device row.
  Status upsert_device(const DeviceRecord& d) override;
  Result<std::optional<DeviceRecord>> device(const std::string& uuid);
  Result<std::vector<DeviceSummary>> devices();
  // Of one family when `family` is set; by key.
  Result<std::vector<ProblemSummary>> problems(const std::string& family = "");
  Result<bool> has_problem(const std::string& key);

  // --- Measurements
  // Validates the keys, upserts the problem and config rows and inserts the
  // measurements with their errors, all or none, in one transaction. The
  // device must have been upserted. A timestamp of 0 is replaced by the clock.
  Status add_measurements(const std::vector<Measurement>& ms) override;
  using TuningStore::add_measurement;
  // Oldest first (the newest `limit` when limited), with their errors in
  // the order they were recorded.
  Result<std::vector<Measurement>> measurements(const MeasurementFilter& f) override;
  Result<std::vector<Measurement>> measurements() { return measurements(MeasurementFilter{}); }

  // --- Best entries
  // Replaces the (device, problem) entry (upserting its problem and config
  // rows). `stale` is ignored; a timestamp of 0 is replaced by the clock.
  Status set_best(const BestEntry& b) override;
  // The entry with `stale` computed against `current`; nullopt when none.
  Result<std::optional<BestEntry>> best(const std::string& device_uuid,
                                        const std::string& problem_key,
                                        const Versions& current) override;
  // Every entry (of one device when `device_uuid` is set, of one family
  // when `family` is), by device, problem.
  Result<std::vector<std::string>> class_peers(const DeviceRecord& self) override;
  Result<std::vector<BestEntry>> list_best(const Versions& current,
                                           const std::string& device_uuid = "",
                                           const std::string& family = "");

  // --- Maintenance
  Result<PruneReport> prune(const PruneOptions& o);

  // --- Cubins (the JIT layer's cache; SqliteCubinCache wraps these)
  Status put_cubin(const jit::CompiledProgram& p);
  Result<std::optional<jit::CompiledProgram>> get_cubin(const std::string& key);
  Result<int64_t> cubin_count();

  // --- Moving results between machines (cubins stay: they are per arch
  // and rebuilt on demand)
  // {"application": "ssmtune", "format": 2, "devices": [...],
  //  "measurements": [...], "best": [...]}: measurements as
  // tuner/records_json.h writes them (family, ..., "errors": [per output]),
  // best entries with their family. Non-finite numbers are written as null
  // (NaN) or "inf"/"-inf" so the file is plain JSON.
  Result<nlohmann::json> export_json();
  // In one transaction; an input error names the entry and changes nothing.
  // Format 1 files (forward only, written before schema 3) are read as the
  // migration reads a version 2 database. Measurements are deduplicated by (device, problem,
  // config, timestamp, template hash); best entries conflict per (device, problem).
  Result<ImportReport> import_json(const nlohmann::json& j, MergePolicy policy);

 private:
  TuningDb(Connection c, std::string path, bool read_only)
      : c_(std::move(c)), path_(std::move(path)), read_only_(read_only) {}
  // Runs `fn` in a BEGIN IMMEDIATE transaction and commits (or, with
  // `commit` false, rolls back), retrying the whole transaction when another
  // writer kept the lock past the busy timeout. `fn` must be repeatable.
  Status write_transaction(const std::function<Status()>& fn, bool commit = true);
  Status require_device(const std::string& uuid);
  Status write_device(const DeviceRecord& d);
  Status insert_measurement(const Measurement& m);
  Status upsert_problem(const std::string& key);
  Status upsert_config(const std::string& family, const std::string& key);
  Status insert_best(const BestEntry& b);

  Connection c_;
  std::string path_;
  bool read_only_ = false;
};

// How long a statement waits for another connection's lock before it fails
// with SQLITE_BUSY (after which a write transaction is retried a few times).
inline constexpr int kBusyTimeoutMs = 30000;

}  // namespace ssmtune::cache
