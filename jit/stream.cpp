// Stream and event owners.
#include "jit/stream.h"

namespace ssmtune::jit {

Result<Stream> Stream::create() {
  SSMTUNE_ASSIGN_OR_RETURN(const Driver* d, Driver::get());
  const Driver& drv = *d;
  CUstream s = nullptr;
  SSMTUNE_CU(drv.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  return Stream(d, s);
}

Stream& Stream::operator=(Stream&& o) noexcept {
  if (this != &o) {
    if (s_ != nullptr) drv_->cuStreamDestroy(s_);
    drv_ = o.drv_;
    s_ = o.s_;
    o.s_ = nullptr;
  }
  return *this;
}

Stream::~Stream() {
  if (s_ != nullptr) drv_->cuStreamDestroy(s_);
}

Status Stream::synchronize() const {
  const Driver& drv = *drv_;
  SSMTUNE_CU(drv.cuStreamSynchronize(s_));
  return Status::ok();
}

Result<Event> Event::create() {
  SSMTUNE_ASSIGN_OR_RETURN(const Driver* d, Driver::get());
  const Driver& drv = *d;
  CUevent e = nullptr;
  SSMTUNE_CU(drv.cuEventCreate(&e, CU_EVENT_DEFAULT));
  return Event(d, e);
}

Event& Event::operator=(Event&& o) noexcept {
  if (this != &o) {
    if (e_ != nullptr) drv_->cuEventDestroy(e_);
    drv_ = o.drv_;
    e_ = o.e_;
    o.e_ = nullptr;
  }
  return *this;
}

Event::~Event() {
  if (e_ != nullptr) drv_->cuEventDestroy(e_);
}

Status Event::record(CUstream stream) const {
  const Driver& drv = *drv_;
  SSMTUNE_CU(drv.cuEventRecord(e_, stream));
  return Status::ok();
}

Status Event::synchronize() const {
  const Driver& drv = *drv_;
  SSMTUNE_CU(drv.cuEventSynchronize(e_));
  return Status::ok();
}

Result<float> Event::elapsed_ms_since(const Event& start) const {
  const Driver& drv = *drv_;
  float ms = 0;
  SSMTUNE_CU(drv.cuEventElapsedTime(&ms, start.e_, e_));
  return ms;
}

}  // namespace ssmtune::jit
