// Helpers for tests of the tuning database: a temporary directory removed
// afterwards, sample devices, problem and config keys and measurements.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "cache/records.h"
#include "tuner/fwd/config.h"
#include "tuner/fwd/problem.h"

namespace ssmtune::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ssmtune-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data()) != nullptr ? tmpl : std::string();
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

inline cache::DeviceRecord sample_device(int i = 0) {
  return {"GPU-0000000" + std::to_string(i) + "-1111-2222-3333-444444444444",
          i == 0 ? "NVIDIA H200" : "NVIDIA H100 80GB HBM3",
          9,
          0,
          i == 0 ? 132 : 114,
          13000,
          "13.0"};
}

// A valid problem key; `i` varies the sequence length.
inline std::string problem_key(int i = 0, DType dtype = DType::kF32) {
  FwdProblem p;
  p.batch = 2;
  p.dim = 48;
  p.seqlen = 17 + i;
  p.dstate = 16;
  p.dtype = dtype;
  p.has_d = true;
  p.has_z = i % 2 == 0;
  return p.key();
}

// A valid config key; `i` varies the chunk.
inline std::string config_key(int i = 0) {
  FwdConfig c;
  c.algo = i % 3 == 0 ? ScanAlgo::kSequential : ScanAlgo::kWarpScan;
  c.chunk = 32 << (i % 5);
  c.d_step = 1 + i / 5;
  return c.key();
}

inline cache::Measurement sample_measurement(const std::string& device, const std::string& problem,
                                             const std::string& config, double median_ms,
                                             double rel_l2 = 1e-6, int64_t timestamp = 1700000000) {
  cache::Measurement m;
  m.device_uuid = device;
  m.problem_key = problem;
  m.config_key = config;
  m.status = cache::MeasureStatus::kOk;
  m.median_ms = median_ms;
  m.spread_ms = median_ms * 0.01;
  m.min_ms = median_ms * 0.98;
  m.repeats = 31;
  m.rel_l2 = rel_l2;
  m.max_abs_rel = rel_l2 * 3;
  m.max_rel = rel_l2 * 10;
  m.verdict = "inside";
  m.error_budget = 2e-5;
  m.template_hash = "0123456789abcdef0123456789abcdef";
  m.driver_version = 13000;
  m.nvrtc_version = "13.0";
  m.timestamp = timestamp;
  m.registers = 64;
  m.spill_bytes = 0;
  m.shared_bytes = 4096;
  return m;
}

inline cache::Versions sample_versions() {
  return {13000, "13.0", "0123456789abcdef0123456789abcdef"};
}

// Field-by-field equality with NaN equal to NaN.
inline bool same_number(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

inline bool same(const cache::Measurement& a, const cache::Measurement& b) {
  return a.device_uuid == b.device_uuid && a.problem_key == b.problem_key &&
         a.config_key == b.config_key && a.status == b.status &&
         same_number(a.median_ms, b.median_ms) && same_number(a.spread_ms, b.spread_ms) &&
         same_number(a.min_ms, b.min_ms) && a.repeats == b.repeats &&
         same_number(a.rel_l2, b.rel_l2) && same_number(a.max_abs_rel, b.max_abs_rel) &&
         same_number(a.max_rel, b.max_rel) && a.nan_inf == b.nan_inf &&
         a.unwritten == b.unwritten && a.verdict == b.verdict &&
         same_number(a.error_budget, b.error_budget) && a.detail == b.detail &&
         a.template_hash == b.template_hash && a.driver_version == b.driver_version &&
         a.nvrtc_version == b.nvrtc_version && a.timestamp == b.timestamp &&
         a.registers == b.registers && a.spill_bytes == b.spill_bytes &&
         a.shared_bytes == b.shared_bytes;
}

}  // namespace ssmtune::testing
