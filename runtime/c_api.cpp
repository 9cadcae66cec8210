// The C ABI over the C++ Runtime: statuses for codes, a thread-local
// message for the text.
#include <cstring>
#include <string>

#include "runtime/prepared_bwd_call.h"
#include "runtime/prepared_call.h"
#include "ssmtune/runtime.h"
#include "ssmtune/ssmtune.h"

#ifndef SSMTUNE_VERSION
#define SSMTUNE_VERSION "unknown"
#endif

struct ssmtune_runtime {
  std::unique_ptr<ssmtune::Runtime> rt;
};

// A plan handle is the runtime's PreparedCall (PreparedBwdCall) itself.
static_assert(sizeof(ssmtune_fwd_plan*) == sizeof(ssmtune::PreparedCall*));
static_assert(sizeof(ssmtune_bwd_plan*) == sizeof(ssmtune::PreparedBwdCall*));

namespace {

thread_local std::string g_last_error;

ssmtune_status to_c(const ssmtune::Status& s) {
  using ssmtune::Code;
  g_last_error = s.is_ok() ? std::string() : s.to_string();
  switch (s.code()) {
    case Code::kOk:
      return SSMTUNE_OK;
    case Code::kInvalidArgument:
      return SSMTUNE_ERROR_INVALID_ARGUMENT;
    case Code::kNotFound:
      return SSMTUNE_ERROR_NOT_FOUND;
    case Code::kCompileError:
      return SSMTUNE_ERROR_COMPILE;
    case Code::kCudaError:
      return SSMTUNE_ERROR_CUDA;
    case Code::kNoDriver:
      return SSMTUNE_ERROR_NO_DRIVER;
    case Code::kIoError:
      return SSMTUNE_ERROR_IO;
    case Code::kCorrupt:
      return SSMTUNE_ERROR_CORRUPT;
    case Code::kUnsupported:
      return SSMTUNE_ERROR_UNSUPPORTED;
    case Code::kTimeout:
      return SSMTUNE_ERROR_TIMEOUT;
    case Code::kInternal:
      return SSMTUNE_ERROR_INTERNAL;
  }
  return SSMTUNE_ERROR_INTERNAL;
}

ssmtune_status null_arg(const char* what) {
  return to_c(ssmtune::Status::invalid_argument(std::string(what) + " must not be NULL"));
}

ssmtune_status copy_text(const ssmtune::Result<std::string>& text, char* buf, size_t len) {
  if (!text) return to_c(text.status());
  std::strncpy(buf, text->c_str(), len - 1);
  buf[len - 1] = '\0';
  return to_c(ssmtune::Status::ok());
}

// A launch's status; on success the message is cleared only when set (the
// hot path writes no thread-local string).
ssmtune_status launch_status(const ssmtune::Status& s) {
  if (s.is_ok()) {
    if (!g_last_error.empty()) g_last_error.clear();
    return SSMTUNE_OK;
  }
  return to_c(s);
}

const ssmtune::PreparedBwdCall* bwd_call(const ssmtune_bwd_plan* plan) {
  return reinterpret_cast<const ssmtune::PreparedBwdCall*>(plan);
}

}  // namespace

extern "C" {

ssmtune_status ssmtune_runtime_create(const char* db_path, int device, ssmtune_runtime** out) {
  if (out == nullptr) return null_arg("out");
  *out = nullptr;
  ssmtune::RuntimeOptions o;
  o.device = device;
  if (db_path != nullptr && *db_path == '\0') o.use_db = false;
  if (db_path != nullptr) o.db_path = db_path;
  auto rt = ssmtune::Runtime::create(o);
  if (!rt) return to_c(rt.status());
  *out = new ssmtune_runtime{std::move(rt).value()};
  return to_c(ssmtune::Status::ok());
}

void ssmtune_runtime_destroy(ssmtune_runtime* rt) { delete rt; }

ssmtune_status ssmtune_selective_scan_fwd(ssmtune_runtime* rt, const ssmtune_fwd_args* args,
                                          void* stream) {
  if (rt == nullptr) return null_arg("runtime");
  if (args == nullptr) return null_arg("args");
  return to_c(rt->rt->selective_scan_fwd(*args, stream));
}

ssmtune_status ssmtune_explain(ssmtune_runtime* rt, const ssmtune_fwd_args* args, char* buf,
                               size_t len) {
  if (rt == nullptr) return null_arg("runtime");
  if (args == nullptr) return null_arg("args");
  if (buf == nullptr || len == 0) return null_arg("buf");
  return copy_text(rt->rt->explain(*args), buf, len);
}

ssmtune_status ssmtune_fwd_prepare(ssmtune_runtime* rt, const ssmtune_fwd_args* layout,
                                   ssmtune_fwd_plan** out) {
  if (out == nullptr) return null_arg("out");
  *out = nullptr;
  if (rt == nullptr) return null_arg("runtime");
  if (layout == nullptr) return null_arg("layout");
  auto call = rt->rt->prepare_fwd(*layout);
  if (!call) return to_c(call.status());
  *out = reinterpret_cast<ssmtune_fwd_plan*>(const_cast<ssmtune::PreparedCall*>(*call));
  return to_c(ssmtune::Status::ok());
}

size_t ssmtune_fwd_plan_scratch_bytes(const ssmtune_fwd_plan* plan) {
  if (plan == nullptr) return 0;
  return reinterpret_cast<const ssmtune::PreparedCall*>(plan)->scratch_bytes();
}

ssmtune_status ssmtune_fwd_launch(const ssmtune_fwd_plan* plan, const void* const* ptrs,
                                  void* scratch, void* stream) {
  if (plan == nullptr) return null_arg("plan");
  if (ptrs == nullptr) return null_arg("ptrs");
  const auto* call = reinterpret_cast<const ssmtune::PreparedCall*>(plan);
  return launch_status(call->owner()->launch_fwd(*call, ptrs, scratch, stream));
}

ssmtune_status ssmtune_fwd_plan_explain(const ssmtune_fwd_plan* plan, char* buf, size_t len) {
  if (plan == nullptr) return null_arg("plan");
  if (buf == nullptr || len == 0) return null_arg("buf");
  return copy_text(ssmtune::Runtime::explain(*reinterpret_cast<const ssmtune::PreparedCall*>(plan)),
                   buf, len);
}

ssmtune_status ssmtune_selective_scan_bwd(ssmtune_runtime* rt, const ssmtune_bwd_args* args,
                                          void* stream) {
  if (rt == nullptr) return null_arg("runtime");
  if (args == nullptr) return null_arg("args");
  return to_c(rt->rt->selective_scan_bwd(*args, stream));
}

ssmtune_status ssmtune_explain_bwd(ssmtune_runtime* rt, const ssmtune_bwd_args* args, char* buf,
                                   size_t len) {
  if (rt == nullptr) return null_arg("runtime");
  if (args == nullptr) return null_arg("args");
  if (buf == nullptr || len == 0) return null_arg("buf");
  return copy_text(rt->rt->explain_bwd(*args), buf, len);
}

ssmtune_status ssmtune_bwd_prepare(ssmtune_runtime* rt, const ssmtune_bwd_args* layout,
                                   ssmtune_bwd_plan** out) {
  if (out == nullptr) return null_arg("out");
  *out = nullptr;
  if (rt == nullptr) return null_arg("runtime");
  if (layout == nullptr) return null_arg("layout");
  auto call = rt->rt->prepare_bwd(*layout);
  if (!call) return to_c(call.status());
  *out = reinterpret_cast<ssmtune_bwd_plan*>(const_cast<ssmtune::PreparedBwdCall*>(*call));
  return to_c(ssmtune::Status::ok());
}

size_t ssmtune_bwd_plan_scratch_bytes(const ssmtune_bwd_plan* plan) {
  if (plan == nullptr) return 0;
  return bwd_call(plan)->scratch_bytes();
}

ssmtune_status ssmtune_bwd_launch(const ssmtune_bwd_plan* plan, const void* const* ptrs,
                                  void* scratch, void* stream) {
  if (plan == nullptr) return null_arg("plan");
  if (ptrs == nullptr) return null_arg("ptrs");
  const auto* call = bwd_call(plan);
  return launch_status(call->owner()->launch_bwd(*call, ptrs, scratch, stream));
}

ssmtune_status ssmtune_bwd_plan_explain(const ssmtune_bwd_plan* plan, char* buf, size_t len) {
  if (plan == nullptr) return null_arg("plan");
  if (buf == nullptr || len == 0) return null_arg("buf");
  return copy_text(ssmtune::Runtime::explain(*bwd_call(plan)), buf, len);
}

const char* ssmtune_version(void) { return SSMTUNE_VERSION; }

int ssmtune_abi_version(void) { return 3; }

const char* ssmtune_last_error(void) { return g_last_error.c_str(); }

}  // extern "C"
