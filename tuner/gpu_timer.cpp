// Event timing.
#include "tuner/gpu_timer.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "jit/stream.h"

namespace ssmtune {

Result<GpuTimer> GpuTimer::create(const jit::DeviceInfo& device) {
  const size_t bytes = std::max<size_t>(size_t(2) * device.l2_bytes, size_t(64) << 20);
  SSMTUNE_ASSIGN_OR_RETURN(jit::DeviceBuffer flush, jit::DeviceBuffer::allocate(bytes));
  return GpuTimer(std::move(flush));
}

Result<Timing> GpuTimer::time(const std::function<Status(CUstream)>& launch, CUstream stream,
                              const TimingOptions& o) {
  for (int i = 0; i < o.warmup; ++i) SSMTUNE_RETURN_IF_ERROR(launch(stream));
  SSMTUNE_ASSIGN_OR_RETURN(jit::Event probe_start, jit::Event::create());
  SSMTUNE_ASSIGN_OR_RETURN(jit::Event probe_stop, jit::Event::create());
  // One probe run sets the repeat count.
  if (o.flush_l2) SSMTUNE_RETURN_IF_ERROR(flush_.fill_bytes(0x5a, stream));
  SSMTUNE_RETURN_IF_ERROR(probe_start.record(stream));
  SSMTUNE_RETURN_IF_ERROR(launch(stream));
  SSMTUNE_RETURN_IF_ERROR(probe_stop.record(stream));
  SSMTUNE_RETURN_IF_ERROR(probe_stop.synchronize());
  SSMTUNE_ASSIGN_OR_RETURN(float probe_ms, probe_stop.elapsed_ms_since(probe_start));
  const int repeats = std::clamp(static_cast<int>(o.target_ms / std::max(probe_ms, 1e-3f)),
                                 o.min_repeats, o.max_repeats);
  std::vector<jit::Event> starts, stops;
  for (int i = 0; i < repeats; ++i) {
    SSMTUNE_ASSIGN_OR_RETURN(jit::Event a, jit::Event::create());
    SSMTUNE_ASSIGN_OR_RETURN(jit::Event b, jit::Event::create());
    starts.push_back(std::move(a));
    stops.push_back(std::move(b));
  }
  for (int i = 0; i < repeats; ++i) {
    if (o.flush_l2)
      SSMTUNE_RETURN_IF_ERROR(flush_.fill_bytes(static_cast<unsigned char>(i), stream));
    SSMTUNE_RETURN_IF_ERROR(starts[i].record(stream));
    SSMTUNE_RETURN_IF_ERROR(launch(stream));
    SSMTUNE_RETURN_IF_ERROR(stops[i].record(stream));
  }
  SSMTUNE_RETURN_IF_ERROR(stops.back().synchronize());
  std::vector<double> ms(repeats);
  for (int i = 0; i < repeats; ++i) {
    SSMTUNE_ASSIGN_OR_RETURN(float t, stops[i].elapsed_ms_since(starts[i]));
    ms[i] = t;
  }
  std::sort(ms.begin(), ms.end());
  auto quantile = [&ms](double q) {
    return ms[static_cast<size_t>(std::lround(q * static_cast<double>(ms.size() - 1)))];
  };
  Timing t;
  t.repeats = repeats;
  t.min_ms = ms.front();
  t.median_ms =
      ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
  t.spread_ms = quantile(0.75) - quantile(0.25);
  return t;
}

}  // namespace ssmtune
