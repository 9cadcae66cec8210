// The line protocol between `ssmtune tune` and its evaluation worker
// process (`ssmtune worker`), one JSON object per line: the worker greets
// with its device, then answers each {"config", "target_ms"} request with an
// evaluation result. Running configs in a separate process is what keeps a
// faulting kernel (illegal address, hang) from ending or poisoning a tune.
#pragma once

#include <nlohmann/json.hpp>

#include "jit/device.h"
#include "tuner/evaluator.h"

namespace ssmtune::cli {

nlohmann::json to_json(const jit::DeviceInfo& d);
jit::DeviceInfo device_from_json(const nlohmann::json& j);

nlohmann::json to_json(const EvalResult& r);

// What the parent needs of a result (the full record goes to the database).
struct WorkerResult {
  std::string status;  // EvalStatus names, or "faulted"
  std::string detail;
  double median_ms = 0, spread_ms = 0, min_ms = 0;
  int repeats = 0;
  double rel_l2 = 0, max_abs_rel = 0, max_rel = 0, budget = 0;
  int64_t nan_inf = 0, unwritten = 0;
  std::string verdict;
  int registers = 0, spill_bytes = 0, shared_bytes = 0;
};
WorkerResult worker_result_from_json(const nlohmann::json& j);

}  // namespace ssmtune::cli
