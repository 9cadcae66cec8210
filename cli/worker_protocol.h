// The line protocol between `ssmtune tune` and its evaluation worker
// process (`ssmtune worker`), one JSON object per line: the worker greets
// with its device, then answers each {"config", "target_ms"} request with an
// evaluation result. Running configs in a separate process is what keeps a
// faulting kernel (illegal address, hang) from ending or poisoning a tune.
#pragma once

#include <nlohmann/json.hpp>

#include "jit/device.h"
#include "ssmtune/status.h"
#include "tuner/evaluator.h"
#include "tuner/records.h"

namespace ssmtune::cli {

nlohmann::json to_json(const jit::DeviceInfo& d);
jit::DeviceInfo device_from_json(const nlohmann::json& j);

// A result as the worker sends it: the result fields of a Measurement in
// its JSON form (tuner/records_json.h: status, times, an error per scored
// output, resources; not the device, keys and versions, which the parent
// knows) and "config". `ref` is the evaluator's reference (for the
// last_state budget).
nlohmann::json to_json(const EvalResult& r, const HostOutputs& ref);

// Reads a worker's result into `m`, keeping m's device, keys, versions and
// timestamp. An unreadable reply is an error naming the field.
Status read_worker_result(const nlohmann::json& reply, Measurement& m);

}  // namespace ssmtune::cli
