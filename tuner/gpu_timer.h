// Timing of device work with CUDA events: warm-up, then repeats (adaptive
// count under a time target) each preceded by an L2 flush, so no input sits
// in the L2 between runs; median, minimum and interquartile spread.
// Needs a current context. Not thread-safe (one per thread).
#pragma once

#include <functional>

#include "jit/device.h"
#include "jit/device_buffer.h"
#include "ssmtune/status.h"

namespace ssmtune {

struct TimingOptions {
  int warmup = 3;
  int min_repeats = 10;
  int max_repeats = 200;
  double target_ms = 150;  // total time spent in timed repeats, about
  bool flush_l2 = true;    // memset a buffer of twice the L2 before each repeat
};

struct Timing {
  double median_ms = 0;
  double min_ms = 0;
  double spread_ms = 0;  // interquartile range: the run-to-run noise
  int repeats = 0;
};

class GpuTimer {
 public:
  static Result<GpuTimer> create(const jit::DeviceInfo& device);
  // `launch` enqueues one run on the given stream.
  Result<Timing> time(const std::function<Status(CUstream)>& launch, CUstream stream,
                      const TimingOptions& options = {});

 private:
  explicit GpuTimer(jit::DeviceBuffer flush) : flush_(std::move(flush)) {}
  jit::DeviceBuffer flush_;
};

}  // namespace ssmtune
