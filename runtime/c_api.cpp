// The C ABI over the C++ Runtime: statuses for codes, a thread-local
// message for the text.
#include <atomic>
#include <cstring>
#include <string>

#include "runtime/prepared_bwd_call.h"
#include "runtime/prepared_call.h"
#include "runtime/prepared_step_call.h"
#include "ssmtune/runtime.h"
#include "ssmtune/ssmtune.h"
#include "tuner/session.h"

#ifndef SSMTUNE_VERSION
#define SSMTUNE_VERSION "unknown"
#endif

struct ssmtune_runtime {
  std::unique_ptr<ssmtune::Runtime> rt;
};

// A plan handle is the runtime's PreparedCall (PreparedBwdCall) itself.
static_assert(sizeof(ssmtune_fwd_plan*) == sizeof(ssmtune::PreparedCall*));
static_assert(sizeof(ssmtune_bwd_plan*) == sizeof(ssmtune::PreparedBwdCall*));
static_assert(sizeof(ssmtune_step_plan*) == sizeof(ssmtune::PreparedStepCall*));

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

const ssmtune::PreparedStepCall* step_call(const ssmtune_step_plan* plan) {
  return reinterpret_cast<const ssmtune::PreparedStepCall*>(plan);
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

int ssmtune_bwd_plan_states_interval(const ssmtune_bwd_plan* plan) {
  return plan == nullptr ? 0 : bwd_call(plan)->states_interval();
}

size_t ssmtune_bwd_plan_states_scratch_bytes(const ssmtune_bwd_plan* plan) {
  return plan == nullptr ? 0 : bwd_call(plan)->states_scratch_bytes();
}

ssmtune_status ssmtune_fwd_plan_prepare_states(const ssmtune_fwd_plan* plan, int interval,
                                               size_t* bytes) {
  if (bytes == nullptr) return null_arg("bytes");
  *bytes = 0;
  if (plan == nullptr) return null_arg("plan");
  const auto* call = reinterpret_cast<const ssmtune::PreparedCall*>(plan);
  auto got = call->owner()->prepare_states(*call, interval);
  if (!got) return launch_status(got.status());
  *bytes = *got;
  return SSMTUNE_OK;
}

ssmtune_status ssmtune_fwd_launch_saving(const ssmtune_fwd_plan* plan, const void* const* ptrs,
                                         void* scratch, void* states, int interval, void* stream) {
  if (plan == nullptr) return null_arg("plan");
  if (ptrs == nullptr) return null_arg("ptrs");
  if (states == nullptr) return null_arg("states");
  const auto* call = reinterpret_cast<const ssmtune::PreparedCall*>(plan);
  return launch_status(call->owner()->launch_fwd(*call, ptrs, scratch, stream, states, interval));
}

ssmtune_status ssmtune_bwd_launch_saved(const ssmtune_bwd_plan* plan, const void* const* ptrs,
                                        void* scratch, const void* states, int interval,
                                        void* stream) {
  if (plan == nullptr) return null_arg("plan");
  if (ptrs == nullptr) return null_arg("ptrs");
  if (states == nullptr) return null_arg("states");
  const auto* call = bwd_call(plan);
  return launch_status(call->owner()->launch_bwd(*call, ptrs, scratch, stream, states, interval));
}

ssmtune_status ssmtune_bwd_plan_explain(const ssmtune_bwd_plan* plan, char* buf, size_t len) {
  if (plan == nullptr) return null_arg("plan");
  if (buf == nullptr || len == 0) return null_arg("buf");
  return copy_text(ssmtune::Runtime::explain(*bwd_call(plan)), buf, len);
}

ssmtune_status ssmtune_selective_state_update(ssmtune_runtime* rt, const ssmtune_step_args* args,
                                              void* stream) {
  if (rt == nullptr) return null_arg("runtime");
  if (args == nullptr) return null_arg("args");
  return to_c(rt->rt->selective_state_update(*args, stream));
}

ssmtune_status ssmtune_explain_step(ssmtune_runtime* rt, const ssmtune_step_args* args, char* buf,
                                    size_t len) {
  if (rt == nullptr) return null_arg("runtime");
  if (args == nullptr) return null_arg("args");
  if (buf == nullptr || len == 0) return null_arg("buf");
  return copy_text(rt->rt->explain_step(*args), buf, len);
}

ssmtune_status ssmtune_step_prepare(ssmtune_runtime* rt, const ssmtune_step_args* layout,
                                    ssmtune_step_plan** out) {
  if (out == nullptr) return null_arg("out");
  *out = nullptr;
  if (rt == nullptr) return null_arg("runtime");
  if (layout == nullptr) return null_arg("layout");
  auto call = rt->rt->prepare_step(*layout);
  if (!call) return to_c(call.status());
  *out = reinterpret_cast<ssmtune_step_plan*>(const_cast<ssmtune::PreparedStepCall*>(*call));
  return to_c(ssmtune::Status::ok());
}

ssmtune_status ssmtune_step_launch(const ssmtune_step_plan* plan, const void* const* ptrs,
                                   void* stream) {
  if (plan == nullptr) return null_arg("plan");
  if (ptrs == nullptr) return null_arg("ptrs");
  const auto* call = step_call(plan);
  return launch_status(call->owner()->launch_step(*call, ptrs, stream));
}

ssmtune_status ssmtune_step_plan_explain(const ssmtune_step_plan* plan, char* buf, size_t len) {
  if (plan == nullptr) return null_arg("plan");
  if (buf == nullptr || len == 0) return null_arg("buf");
  return copy_text(ssmtune::Runtime::explain(*step_call(plan)), buf, len);
}

const char* ssmtune_version(void) { return SSMTUNE_VERSION; }

int ssmtune_abi_version(void) { return 5; }

const char* ssmtune_last_error(void) { return g_last_error.c_str(); }

ssmtune_status ssmtune_tune(ssmtune_runtime* rt, const char* problem_key,
                            const ssmtune_tune_options* options, ssmtune_progress_fn progress,
                            void* user, ssmtune_tune_result* out) {
  if (out != nullptr) *out = ssmtune_tune_result{};
  if (rt == nullptr) return null_arg("runtime");
  if (problem_key == nullptr) return null_arg("problem_key");
  ssmtune_tune_options given{};
  if (options != nullptr) given = *options;
  ssmtune::TuneOptions o;
  if (given.strategy != nullptr && *given.strategy != '\0') o.strategy = given.strategy;
  if (given.max_configs < 0)
    return to_c(ssmtune::Status::invalid_argument("max_configs must be >= 0"));
  if (!(given.config_timeout_s >= 0))
    return to_c(ssmtune::Status::invalid_argument("config_timeout_s must be >= 0 seconds"));
  o.budget = given.max_configs;
  o.time_limit = given.time_limit_s;
  o.max_error = given.max_error;
  o.seed = given.seed;
  o.force = given.force != 0;
  o.resume = given.resume != 0;
  if (ssmtune::Status v = ssmtune::validate(o); !v) return to_c(v);
  std::atomic<bool> cancel{false};
  o.cancel = &cancel;
  std::function<void(const ssmtune::TuneEvent&)> fn;
  if (progress != nullptr)
    fn = [progress, user, &cancel](const ssmtune::TuneEvent& e) {
      ssmtune_tune_event c{};
      c.kind = static_cast<int32_t>(e.kind);
      c.problem_key = e.problem.c_str();
      c.message = e.message.c_str();
      c.compiled = e.compiled;
      c.timed = e.done;
      c.planned = e.planned;
      c.config = e.config.c_str();
      c.ms = e.ms;
      c.usable = e.usable ? 1 : 0;
      c.best_config = e.best_config.c_str();
      c.best_ms = e.best_ms;
      c.elapsed_s = e.elapsed_s;
      if (progress(&c, user) != 0) cancel.store(true);
    };
  auto r = rt->rt->tune(problem_key, o, fn, given.config_timeout_s);
  if (!r) return to_c(r.status());
  if (out != nullptr) {
    auto copy = [](char* dst, size_t n, const std::string& src) {
      std::strncpy(dst, src.c_str(), n - 1);
      dst[n - 1] = '\0';
    };
    copy(out->problem_key, sizeof out->problem_key, r->problem_key);
    if (r->found) copy(out->config, sizeof out->config, r->best_config);
    out->best_ms = r->best_ms;
    out->best_rel_l2 = r->best_rel_l2;
    out->found = r->found;
    out->already_tuned = r->already_tuned;
    out->configs = r->configs;
    out->pruned = r->pruned;
    out->compiled = r->compiled;
    out->compile_failed = r->compile_failed;
    out->timed = r->timed;
    out->faulted = r->faulted;
    out->inaccurate = r->inaccurate;
    out->from_db = r->from_store;
    out->cut_short = r->cut_short;
    out->cancelled = r->cancelled;
    out->wall_s = r->wall_s;
  }
  return to_c(ssmtune::Status::ok());
}

ssmtune_status ssmtune_fwd_problem_key(const ssmtune_fwd_args* layout, char* buf, size_t len) {
  if (layout == nullptr) return null_arg("layout");
  if (buf == nullptr || len == 0) return null_arg("buf");
  buf[0] = '\0';
  auto call = ssmtune::read_layout(*layout);
  if (!call) return to_c(call.status());
  const std::string key = call->problem.key();
  if (key.size() + 1 > len)
    return to_c(ssmtune::Status::invalid_argument("buf: " + std::to_string(len) +
                                                  " bytes cannot hold the key (" +
                                                  std::to_string(key.size() + 1) + " needed)"));
  std::memcpy(buf, key.c_str(), key.size() + 1);
  return to_c(ssmtune::Status::ok());
}

}  // extern "C"
