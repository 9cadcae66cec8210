// Reads the JSON that bench/compare.py writes ({"meta": {...}, "shapes":
// [...]}) into one entry per shape: the device, the ssmtune problem key the
// shape corresponds to, and the mamba_ssm and ssmtune medians.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ssmtune/status.h"

namespace ssmtune::report {

struct BenchEntry {
  std::string device_name;  // meta.device, e.g. "NVIDIA H200"
  std::string problem_key;  // b.d.l.n.g.dtype.vB.vC (+ .D.z.bias.sp with --full)
  double mamba_ms = 0;      // 0: not timed
  double ssmtune_ms = 0;    // 0: not timed
  std::string source;       // the file
};

Result<std::vector<BenchEntry>> parse_bench_json(const nlohmann::json& j,
                                                 const std::string& source);
Result<std::vector<BenchEntry>> read_bench_json(const std::string& path);

}  // namespace ssmtune::report
