// The local-over-shared database stack.
#include "cache/db_stack.h"

namespace ssmtune::cache {

Result<std::vector<TuningDb>> DbStack::open_shared(const DbPathList& paths) {
  std::vector<TuningDb> out;
  for (size_t i = 0; i < paths.shared.size(); ++i) {
    const std::string& p = paths.shared[i];
    const std::string where = "shared tuning database " + p + " (layer " + std::to_string(i + 2) +
                              " of the database list; shared layers are read-only and must exist)";
    auto db = TuningDb::open(p, OpenMode::kReadOnly);
    if (!db) return db.status().with_context(where);
    out.push_back(std::move(*db));
  }
  return out;
}

Result<DbStack> DbStack::open(const DbPathList& paths, OpenMode local_mode) {
  SSMTUNE_ASSIGN_OR_RETURN(TuningDb local, TuningDb::open(paths.local, local_mode));
  SSMTUNE_ASSIGN_OR_RETURN(std::vector<TuningDb> shared, open_shared(paths));
  return DbStack(std::move(local), std::move(shared));
}

std::vector<DbLayer> DbStack::layers() {
  std::vector<DbLayer> out;
  if (local_) out.push_back({&*local_, false});
  for (TuningDb& s : shared_) out.push_back({&s, true});
  return out;
}

Result<TuningDb*> DbStack::writable() {
  if (!local_) return Status::invalid_argument("no local tuning database to write to");
  return &*local_;
}

Status DbStack::upsert_device(const DeviceRecord& d) {
  SSMTUNE_ASSIGN_OR_RETURN(TuningDb * db, writable());
  return db->upsert_device(d);
}

Result<std::vector<Measurement>> DbStack::measurements(const MeasurementFilter& f) {
  SSMTUNE_ASSIGN_OR_RETURN(TuningDb * db, writable());
  return db->measurements(f);
}

Status DbStack::add_measurements(const std::vector<Measurement>& ms) {
  SSMTUNE_ASSIGN_OR_RETURN(TuningDb * db, writable());
  return db->add_measurements(ms);
}

Status DbStack::set_best(const BestEntry& b) {
  SSMTUNE_ASSIGN_OR_RETURN(TuningDb * db, writable());
  return db->set_best(b);
}

Result<std::optional<BestEntry>> DbStack::best(const std::string& device_uuid,
                                               const std::string& problem_key,
                                               const Versions& current) {
  std::optional<BestEntry> first_stale;
  for (const DbLayer& layer : layers()) {
    SSMTUNE_ASSIGN_OR_RETURN(auto e, layer.db->best(device_uuid, problem_key, current));
    if (!e) continue;
    if (!e->stale) return e;
    if (!first_stale) first_stale = std::move(e);
  }
  return first_stale;
}

Result<std::vector<std::string>> DbStack::class_peers(const DeviceRecord& self) {
  std::vector<std::string> out;
  for (const DbLayer& layer : layers()) {
    SSMTUNE_ASSIGN_OR_RETURN(auto peers, layer.db->class_peers(self));
    out.insert(out.end(), peers.begin(), peers.end());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace ssmtune::cache
