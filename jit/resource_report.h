// The ptxas resource report (registers, spills, shared memory, stack frame)
// parsed out of an NVRTC program log compiled with -Xptxas=-v.
// Pure functions; thread-safe.
#pragma once

#include <map>
#include <string>

namespace ssmtune::jit {

struct ResourceUsage {
  int registers = 0;          // per thread
  int spill_store_bytes = 0;  // per thread, to local memory
  int spill_load_bytes = 0;
  int stack_frame_bytes = 0;  // local memory frame (arrays indexed at run time land here)
  int shared_bytes = 0;       // static shared memory per block
  int const_bytes = 0;        // cmem[0]: kernel parameters and constants
  int barriers = 0;
  bool found = false;  // false when the log held no report for this function

  bool spills() const { return spill_store_bytes > 0 || spill_load_bytes > 0; }
  std::string to_string() const;
};

// Per lowered (mangled) kernel name, from a log with ptxas -v lines.
std::map<std::string, ResourceUsage> parse_resource_report(const std::string& log);

}  // namespace ssmtune::jit
