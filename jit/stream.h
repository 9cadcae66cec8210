// Move-only owners of a CUDA stream and a CUDA event, and event timing.
// Create them with a context current on the calling thread.
#pragma once

#include "jit/driver.h"
#include "ssmtune/status.h"

namespace ssmtune::jit {

class Stream {
 public:
  static Result<Stream> create();  // non-blocking with respect to the legacy stream
  Stream(Stream&& o) noexcept : drv_(o.drv_), s_(o.s_) { o.s_ = nullptr; }
  Stream& operator=(Stream&& o) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();

  CUstream get() const { return s_; }
  Status synchronize() const;

 private:
  Stream(const Driver* drv, CUstream s) : drv_(drv), s_(s) {}
  const Driver* drv_ = nullptr;
  CUstream s_ = nullptr;
};

class Event {
 public:
  static Result<Event> create();  // with timing
  Event(Event&& o) noexcept : drv_(o.drv_), e_(o.e_) { o.e_ = nullptr; }
  Event& operator=(Event&& o) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();

  CUevent get() const { return e_; }
  Status record(CUstream stream) const;
  Status synchronize() const;
  // Milliseconds from `start` to this event; both must have completed.
  Result<float> elapsed_ms_since(const Event& start) const;

 private:
  Event(const Driver* drv, CUevent e) : drv_(drv), e_(e) {}
  const Driver* drv_ = nullptr;
  CUevent e_ = nullptr;
};

}  // namespace ssmtune::jit
