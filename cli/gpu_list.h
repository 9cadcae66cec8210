// `ssmtune tune --gpus all|0,2,...`: which GPUs a tune spreads its shapes
// over, checked against the device count. A pure function.
#pragma once

#include <string>
#include <vector>

#include "ssmtune/status.h"

namespace ssmtune::cli {

// "all": every ordinal below `device_count`; else a comma-separated list of
// decimal ordinals, in the order given. An empty list or element, a
// non-number, a duplicate or an ordinal at or above `device_count` is
// kInvalidArgument naming it; `device_count` 0 is kNoDriver (no GPU).
Result<std::vector<int>> parse_gpu_list(const std::string& text, int device_count);

}  // namespace ssmtune::cli
