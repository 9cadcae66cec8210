// Measuring configs of one problem behind an interface, so a tuning session
// does not care where kernels run: the production implementation is the
// fault-isolating worker process (tuner/worker_measurer.h); tests use
// stand-ins. Not thread-safe.
#pragma once

#include <string>

#include "jit/device.h"
#include "ssmtune/status.h"
#include "tuner/records.h"

namespace ssmtune {

// What a measurer reports once it is ready for a problem.
struct MeasurerInfo {
  jit::DeviceInfo device;
  std::string template_hash;  // of the kernel templates it compiles
  uint64_t seed = 0;          // of its random inputs
  std::string reference;      // "cpu fp64" or "gpu fp64"
};

class Measurer {
 public:
  virtual ~Measurer() = default;
  // Prepares inputs and the fp64 reference of `problem_key`; later calls
  // measure configs of that problem.
  virtual Result<MeasurerInfo> start(const std::string& problem_key) = 0;
  // One config at a timing fidelity (ms of timed repeats). Never fails: a
  // fault, hang or lost worker is a Measurement with status kFaulted, and
  // the measurer recovers for the next config. Device, versions and
  // timestamp are left for the caller.
  virtual Measurement measure(const std::string& config, double target_ms) = 0;
  // Releases the problem (and the worker).
  virtual void stop() = 0;
};

}  // namespace ssmtune
