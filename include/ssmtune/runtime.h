// ssmtune's C++ API: a Runtime owns device 0's context, the tuning
// database (for selection) and its cubin cache, and the kernels compiled so
// far; selective_scan_fwd, selective_scan_bwd and selective_state_update
// (the decode step) validate the call, pick a
// config (exact tuned entry, nearest tuned shape, or the family's built-in
// default), compile it once per process (or load its cubin from the
// database), and launch it.
// Thread safety: every call may be made from many threads at once; each
// makes the runtime's context current on the calling thread. Errors are
// returned as Status, never thrown.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "ssmtune/ssmtune.h"
#include "ssmtune/status.h"

namespace ssmtune {

class PreparedCall;      // runtime/prepared_call.h
class PreparedBwdCall;   // runtime/prepared_bwd_call.h
class PreparedStepCall;  // runtime/prepared_step_call.h
struct TuneOptions;      // tuner/session.h
struct TuneReport;
struct TuneEvent;

struct RuntimeOptions {
  std::string db_path;  // empty: $SSMTUNE_DB or the user cache directory; a list
                        // "LOCAL:SHARED..." reads shared layers after the local one
  bool use_db = true;   // false: heuristic defaults only, nothing read or written
  int device = 0;
  // Tune on first use: seconds of measuring spent, once per process, on a
  // shape the database has no exact entry for, by a tuning session in this
  // process (configs run in `ssmtune worker` processes; compiling and the
  // fp64 reference come on top); the first call for that shape waits for
  // it. Unset: $SSMTUNE_TUNE_ON_FIRST_USE (seconds or "off"); 0: off. Needs
  // the database.
  std::optional<double> tune_on_first_use_s;
  // $SSMTUNE_FORCE_CONFIG (config keys, as `ssmtune compile --config`
  // takes, comma-separated: a forward one, a backward one or both) makes
  // every problem of that family run that config: for tests and experiments.
};

class Runtime {
 public:
  static Result<std::unique_ptr<Runtime>> create(const RuntimeOptions& options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // `stream` is a CUstream (nullptr: the legacy default stream).
  Status selective_scan_fwd(const ssmtune_fwd_args& args, void* stream);
  // Which rule picked the config for this call's problem, and from which entry.
  Result<std::string> explain(const ssmtune_fwd_args& args);

  // The fast path (C ABI: ssmtune_fwd_prepare / ssmtune_fwd_launch). A
  // layout (present tensors have rank > 0; data ignored) is validated,
  // selected and compiled once; the call is cached per layout and owned by
  // the runtime (same layout, same pointer) until it is destroyed.
  Result<const PreparedCall*> prepare_fwd(const ssmtune_fwd_args& layout);
  // Checks the pointers and enqueues on `stream`. scratch: device memory of
  // call.scratch_bytes() bytes (256-aligned), or nullptr for none needed or
  // the runtime's per-stream scratch (allocated on first use).
  Status launch_fwd(const PreparedCall& call, const void* const* ptrs, void* scratch, void* stream);
  // Training (C ABI: ssmtune_fwd_plan_prepare_states): the bytes of the
  // states a launch of `call` saves for a backward of chunk `interval`
  // (PreparedBwdCall::states_interval), 0 when it saves none; compiles the
  // forward's saving variant the first time (do it before a CUDA graph
  // capture).
  Result<size_t> prepare_states(const PreparedCall& call, int interval);
  // Training (C ABI: ssmtune_fwd_launch_saving): the launch that also saves
  // into `states` (prepare_states' bytes of device memory, 16-aligned, kept
  // by the caller until the backward has run) the states a backward of
  // chunk `interval` would otherwise recompute, through the saving variant
  // (compiled here if prepare_states did not). InvalidArgument when this
  // call saves none at that interval.
  Status launch_fwd(const PreparedCall& call, const void* const* ptrs, void* scratch, void* stream,
                    void* states, int interval);
  static std::string explain(const PreparedCall& call);

  // The backward (C ABI: ssmtune_selective_scan_bwd): every gradient of the
  // forward of this call's inputs, written (never accumulated) into the
  // outputs; deterministic (the same inputs give the same bits).
  Status selective_scan_bwd(const ssmtune_bwd_args& args, void* stream);
  Result<std::string> explain_bwd(const ssmtune_bwd_args& args);
  // Prepared backward calls, with the forward's contract. scratch: device
  // memory of call.scratch_bytes() bytes (256-aligned; always > 0), or
  // nullptr for the runtime's per-stream scratch (allocated on first use,
  // so not capture-safe; two threads must not share a stream with it).
  Result<const PreparedBwdCall*> prepare_bwd(const ssmtune_bwd_args& layout);
  Status launch_bwd(const PreparedBwdCall& call, const void* const* ptrs, void* scratch,
                    void* stream);
  // The backward reading the states that a forward of the same inputs
  // saved at `interval` (which must be call.states_interval() > 0) instead
  // of recomputing them; the caller vouches that they belong to these
  // inputs (ssmtune cannot tell).
  Status launch_bwd(const PreparedBwdCall& call, const void* const* ptrs, void* scratch,
                    void* stream, const void* states, int interval);
  static std::string explain(const PreparedBwdCall& call);

  // The decode step (C ABI: ssmtune_selective_state_update): the state
  // updated in place, out written; prepared steps with the forward's
  // contract (no scratch; a launch enqueues one kernel).
  Status selective_state_update(const ssmtune_step_args& args, void* stream);
  Result<std::string> explain_step(const ssmtune_step_args& args);
  Result<const PreparedStepCall*> prepare_step(const ssmtune_step_args& layout);
  Status launch_step(const PreparedStepCall& call, const void* const* ptrs, void* stream);
  static std::string explain(const PreparedStepCall& call);

  // Tunes a problem (a key of any family, e.g. "fwd:b2.d64.l256.n4.g1.fp32.vB.vC")
  // on this runtime's device into its database, in this process with
  // configs measured in `ssmtune worker` processes (found by
  // find_worker_exe). Blocks; one session at a time per runtime. Afterwards
  // calls and prepares of that problem select again (plans prepared before
  // stay valid and keep their config). Needs the database.
  // config_timeout_s: one config may take this long in its worker (0: 60).
  Result<TuneReport> tune(const std::string& problem_key, const TuneOptions& options,
                          const std::function<void(const TuneEvent&)>& progress = {},
                          double config_timeout_s = 0);

  struct Impl;

 private:
  explicit Runtime(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ssmtune
