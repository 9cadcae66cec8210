// Helpers for tests of the tuning database: a temporary directory removed
// afterwards (support/temp_dir.h), sample devices, problem and config keys and
// measurements.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "support/temp_dir.h"
#include "tuner/fwd/config.h"
#include "tuner/fwd/problem.h"
#include "tuner/records.h"
#include "tuner/records_json.h"

namespace ssmtune::testing {

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Version 1 as it shipped: no measurements.min_ms, no cubins table.
inline constexpr char kSchemaV1[] = R"sql(
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta VALUES ('application', 'ssmtune'), ('schema_version', '1');
CREATE TABLE devices (uuid TEXT PRIMARY KEY, name TEXT NOT NULL, cc_major INTEGER NOT NULL,
  cc_minor INTEGER NOT NULL, sm_count INTEGER NOT NULL, driver_version INTEGER NOT NULL,
  nvrtc_version TEXT NOT NULL);
CREATE TABLE problems (key TEXT PRIMARY KEY, family TEXT NOT NULL, batch INTEGER NOT NULL,
  dim INTEGER NOT NULL, seqlen INTEGER NOT NULL, dstate INTEGER NOT NULL, groups INTEGER NOT NULL,
  dtype TEXT NOT NULL, variable_b INTEGER NOT NULL, variable_c INTEGER NOT NULL,
  has_d INTEGER NOT NULL, has_z INTEGER NOT NULL, has_delta_bias INTEGER NOT NULL,
  delta_softplus INTEGER NOT NULL, return_last_state INTEGER NOT NULL,
  has_initial_state INTEGER NOT NULL);
CREATE TABLE configs (key TEXT PRIMARY KEY, algo TEXT NOT NULL, chunk INTEGER NOT NULL,
  d_step INTEGER NOT NULL, acc TEXT NOT NULL, threads INTEGER NOT NULL, items INTEGER NOT NULL,
  n_split INTEGER NOT NULL, exp_mode TEXT NOT NULL, poly_share INTEGER NOT NULL);
CREATE TABLE measurements (id INTEGER PRIMARY KEY,
  device_uuid TEXT NOT NULL REFERENCES devices(uuid),
  problem_key TEXT NOT NULL REFERENCES problems(key),
  config_key TEXT NOT NULL REFERENCES configs(key), status TEXT NOT NULL,
  median_ms REAL, spread_ms REAL, repeats INTEGER NOT NULL, rel_l2 REAL, max_abs_rel REAL,
  max_rel REAL, nan_inf INTEGER NOT NULL, unwritten INTEGER NOT NULL, verdict TEXT NOT NULL,
  error_budget REAL, detail TEXT NOT NULL, template_hash TEXT NOT NULL,
  driver_version INTEGER NOT NULL, nvrtc_version TEXT NOT NULL, timestamp INTEGER NOT NULL,
  registers INTEGER NOT NULL, spill_bytes INTEGER NOT NULL, shared_bytes INTEGER NOT NULL);
CREATE TABLE best (device_uuid TEXT NOT NULL, problem_key TEXT NOT NULL,
  config_key TEXT NOT NULL, median_ms REAL, spread_ms REAL, rel_l2 REAL,
  template_hash TEXT NOT NULL, driver_version INTEGER NOT NULL, nvrtc_version TEXT NOT NULL,
  timestamp INTEGER NOT NULL, rule TEXT NOT NULL, PRIMARY KEY (device_uuid, problem_key));
)sql";

inline DeviceRecord sample_device(int i = 0) {
  return {"GPU-0000000" + std::to_string(i) + "-1111-2222-3333-444444444444",
          i == 0 ? "NVIDIA H200" : "NVIDIA H100 80GB HBM3",
          9,
          0,
          i == 0 ? 132 : 114,
          13000,
          "13.0"};
}

// A valid forward problem key with its family prefix; `i` varies the
// sequence length (and odd `i` has no z).
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

// A forward config key legal for every problem_key() (the database refuses
// configs illegal for their problem) for any i >= 0; distinct for i in [0, 15).
inline std::string config_key(int i = 0) {
  FwdConfig c;
  c.n_split = 1;
  if (i % 3 == 0) {  // sequential: threads = d_step * n_split, items <= 2
    c.algo = ScanAlgo::kSequential;
    c.chunk = 32 << (i % 5);
    c.d_step = 32;
    c.threads = 32;
    c.items = 1 + (i / 10) % 2;
  } else {  // warpscan: threads = 32 * d_step, chunk = 32 * items
    c.algo = ScanAlgo::kWarpScan;
    c.items = 1 << (i % 5);
    c.chunk = 32 * c.items;
    c.d_step = 1 + (i / 5) % 32;
    c.threads = 32 * c.d_step;
  }
  return c.key();
}

// An ok forward measurement with an error for "out" (rel_l2) and, on a
// problem with z, for "out_z" (half of it); the headline from those.
inline Measurement sample_measurement(const std::string& device, const std::string& problem,
                                      const std::string& config, double median_ms,
                                      double rel_l2 = 1e-6, int64_t timestamp = 1700000000) {
  Measurement m;
  m.family = "fwd";
  m.device_uuid = device;
  m.problem_key = problem;
  m.config_key = config;
  m.status = MeasureStatus::kOk;
  m.median_ms = median_ms;
  m.spread_ms = median_ms * 0.01;
  m.min_ms = median_ms * 0.98;
  m.repeats = 31;
  OutputError out;
  out.output = "out";
  out.rel_l2 = rel_l2;
  out.max_abs_rel = rel_l2 * 3;
  out.max_rel = rel_l2 * 10;
  out.budget = 2e-5;
  out.verdict = "inside";
  m.errors.push_back(out);
  if (problem.find(".z") != std::string::npos) {
    OutputError z = out;
    z.output = "out_z";
    z.rel_l2 = rel_l2 / 2;
    m.errors.push_back(z);
  }
  summarize_errors(m);
  m.template_hash = "0123456789abcdef0123456789abcdef";
  m.driver_version = 13000;
  m.nvrtc_version = "13.0";
  m.timestamp = timestamp;
  m.registers = 64;
  m.spill_bytes = 0;
  m.shared_bytes = 4096;
  return m;
}

inline BestEntry sample_best(const std::string& device, const std::string& problem,
                             const std::string& config, int64_t timestamp = 1700000000,
                             const std::string& template_hash = "0123456789abcdef0123456789abcdef",
                             const std::string& rule = "fastest") {
  BestEntry b;
  b.family = "fwd";
  b.device_uuid = device;
  b.problem_key = problem;
  b.config_key = config;
  b.median_ms = 0.1;
  b.spread_ms = 0.001;
  b.rel_l2 = 1e-6;
  b.template_hash = template_hash;
  b.driver_version = 13000;
  b.nvrtc_version = "13.0";
  b.timestamp = timestamp;
  b.rule = rule;
  return b;
}

inline Versions sample_versions() { return {13000, "13.0", "0123456789abcdef0123456789abcdef"}; }

// Every field and error equal, NaN equal to NaN (through the one JSON form).
inline bool same(const Measurement& a, const Measurement& b) { return to_json(a) == to_json(b); }

}  // namespace ssmtune::testing
