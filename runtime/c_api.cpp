// The C ABI over the C++ Runtime: statuses for codes, a thread-local
// message for the text.
#include <cstring>
#include <string>

#include "runtime/prepared_call.h"
#include "ssmtune/runtime.h"
#include "ssmtune/ssmtune.h"

#ifndef SSMTUNE_VERSION
#define SSMTUNE_VERSION "unknown"
#endif

struct ssmtune_runtime {
  std::unique_ptr<ssmtune::Runtime> rt;
};

// A plan handle is the runtime's PreparedCall itself.
static_assert(sizeof(ssmtune_fwd_plan*) == sizeof(ssmtune::PreparedCall*));

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
  auto text = rt->rt->explain(*args);
  if (!text) return to_c(text.status());
  std::strncpy(buf, text->c_str(), len - 1);
  buf[len - 1] = '\0';
  return to_c(ssmtune::Status::ok());
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
  const ssmtune::Status s = call->owner()->launch_fwd(*call, ptrs, scratch, stream);
  if (s.is_ok()) {
    if (!g_last_error.empty()) g_last_error.clear();
    return SSMTUNE_OK;
  }
  return to_c(s);
}

ssmtune_status ssmtune_fwd_plan_explain(const ssmtune_fwd_plan* plan, char* buf, size_t len) {
  if (plan == nullptr) return null_arg("plan");
  if (buf == nullptr || len == 0) return null_arg("buf");
  const std::string text =
      ssmtune::Runtime::explain(*reinterpret_cast<const ssmtune::PreparedCall*>(plan));
  std::strncpy(buf, text.c_str(), len - 1);
  buf[len - 1] = '\0';
  return to_c(ssmtune::Status::ok());
}

const char* ssmtune_version(void) { return SSMTUNE_VERSION; }

int ssmtune_abi_version(void) { return 2; }

const char* ssmtune_last_error(void) { return g_last_error.c_str(); }

}  // extern "C"
