// The plain in-memory model the report and the diff work on: devices,
// problems with their kernel family, every measurement and best entry (each
// marked stale or current), and the untuned default per (device, problem).
// Only report_data.cpp fills it from the database; the rest never sees sqlite.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ssmtune::report {

struct Device {
  std::string uuid;
  std::string name;  // the device class: databases are compared by it
  std::string arch;  // "sm_90"
  int sm_count = 0;
  std::string driver;  // "13.0"
  std::string nvrtc;
};

struct FwdProblem {
  std::string key;     // as the database stores it ("fwd:" prefix or none)
  std::string family;  // "fwd" when the key has no "family:" prefix
};

// One named output's error against fp64 (rel. L2).
struct OutputError {
  std::string output;  // "out", "du", ...
  double rel_l2 = 0;
};

struct Measurement {
  std::string device_uuid;
  std::string problem_key;
  std::string config_key;
  std::string status;  // ok, pruned, compile_failed, launch_failed, faulted, inaccurate
  double median_ms = 0;
  double spread_ms = 0;
  int repeats = 0;
  std::vector<OutputError> errors;  // one per named output
  int64_t bad_elements = 0;         // NaN/Inf plus unwritten
  double budget = 0;                // rel. L2 budget it was scored against
  std::string verdict;              // inside, at-limit, outside, defect
  std::string detail;               // prune reason, compile log, fault message
  int64_t timestamp = 0;            // unix seconds
  int registers = 0;
  bool stale = false;  // made under another driver, NVRTC or template version

  // The worst output's error (0 when none was scored).
  double error() const;
};

struct BestEntry {
  std::string device_uuid;
  std::string problem_key;
  std::string config_key;
  double median_ms = 0;
  double spread_ms = 0;
  double error = 0;
  int64_t timestamp = 0;
  std::string rule;
  bool stale = false;
  std::string stale_why;
};

// The config a library call runs for (device, problem) when nothing is tuned.
struct DefaultConfig {
  std::string device_uuid;
  std::string problem_key;
  std::string config_key;
};

struct Model {
  std::string source;    // the database path
  std::string versions;  // what "current" means: "driver 13.0, NVRTC 13.0, templates 0123abcd"
  std::vector<Device> devices;
  std::vector<FwdProblem> problems;       // by key
  std::vector<Measurement> measurements;  // oldest first
  std::vector<BestEntry> best;            // by device, problem
  std::vector<DefaultConfig> defaults;

  const Device* device(const std::string& uuid) const;
  const DefaultConfig* default_config(const std::string& uuid, const std::string& problem) const;
  bool empty() const { return measurements.empty() && best.empty(); }
  // Something is there, but every measurement and best entry is stale.
  bool stale_only() const;
};

// "fwd" for "b8.d1536...", "bwd" for "bwd:b8...".
std::string family_of(const std::string& problem_key);

// What the report shows; empty lists select everything.
struct Selection {
  std::vector<std::string> gpus;  // UUID or name (exact)
  std::vector<std::string> families;
  std::vector<std::string> problems;
};
// The model narrowed to the selection (devices, problems, measurements,
// best entries and defaults alike).
Model select(const Model& m, const Selection& s);

// The heatmap axes of a config key: algorithm, chunk length K and channels
// per block D. Forward keys through FwdConfig::from_key; other families'
// keys by their first field and their ".K<n>." / ".D<n>." tokens.
struct ConfigAxes {
  bool ok = false;
  std::string algo;
  int chunk = 0;
  int d_step = 0;
};
ConfigAxes config_axes(const std::string& family, const std::string& config_key);

}  // namespace ssmtune::report
