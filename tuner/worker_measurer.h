// The production Measurer: runs configs in a worker process
// (`<exe> worker --problem KEY ...`, one GPU context), so a kernel that
// faults or hangs is recorded and the session goes on with a fresh worker.
// The line protocol is JSON: the worker greets with its device, template
// hash, seed and reference; each {"config", "target_ms"} request gets one
// Measurement (tuner/records_json.h) back.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tuner/measurer.h"
#include "tuner/worker_client.h"

namespace ssmtune {

struct WorkerOptions {
  std::string exe;                      // the ssmtune executable (see find_worker_exe)
  std::string db_path;                  // the tuning database: its cubin cache is shared
  uint64_t seed = 0;                    // input seed (0: the worker draws one)
  double max_error = 0;                 // > 0: tighter rel L2 budget
  double timeout_s = 60;                // one config may take this long before it is killed
  int gpu = 0;                          // device ordinal
  std::vector<std::string> extra_args;  // appended to the worker's command line
};

// The ssmtune executable a library tune runs workers from: $SSMTUNE_EXE,
// else `ssmtune` beside the running executable or the library, else on
// PATH; an error naming where it looked when none is found.
Result<std::string> find_worker_exe();

class WorkerMeasurer final : public Measurer {
 public:
  explicit WorkerMeasurer(WorkerOptions o) : o_(std::move(o)) {}
  Result<MeasurerInfo> start(const std::string& problem_key) override;
  Measurement measure(const std::string& config, double target_ms) override;
  void stop() override { worker_.reset(); }

 private:
  Status spawn();
  WorkerOptions o_;
  std::string problem_;
  std::optional<WorkerClient> worker_;
  std::optional<MeasurerInfo> info_;
};

nlohmann::json to_json(const jit::DeviceInfo& d);
jit::DeviceInfo device_from_json(const nlohmann::json& j);

}  // namespace ssmtune
