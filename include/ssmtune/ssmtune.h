/* ssmtune C ABI: the Mamba-1 selective scan forward with auto-selected,
 * JIT-compiled kernels, for bindings (python/'s extension links it; ctypes works too).
 *
 * Ownership: a runtime owns its GPU context reference, caches, compiled
 * kernels and prepared plans; destroy it with ssmtune_runtime_destroy. Tensors are the
 * caller's device memory; nothing is kept after a call returns.
 * Thread safety: one runtime may be used from many threads at once (calls
 * on different streams run concurrently). Errors: every function returns a
 * status; ssmtune_last_error() gives this thread's last message. */
#ifndef SSMTUNE_SSMTUNE_H_
#define SSMTUNE_SSMTUNE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  SSMTUNE_OK = 0,
  SSMTUNE_ERROR_INVALID_ARGUMENT = 1,
  SSMTUNE_ERROR_NOT_FOUND = 2,
  SSMTUNE_ERROR_COMPILE = 3,
  SSMTUNE_ERROR_CUDA = 4,
  SSMTUNE_ERROR_NO_DRIVER = 5,
  SSMTUNE_ERROR_IO = 6,
  SSMTUNE_ERROR_CORRUPT = 7,
  SSMTUNE_ERROR_UNSUPPORTED = 8,
  SSMTUNE_ERROR_TIMEOUT = 9,
  SSMTUNE_ERROR_INTERNAL = 10
} ssmtune_status;

typedef enum {
  SSMTUNE_FP32 = 0,
  SSMTUNE_FP16 = 1,
  SSMTUNE_BF16 = 2,
  SSMTUNE_INT32 = 3, /* the decode step's state indices only */
  SSMTUNE_INT64 = 4
} ssmtune_dtype;

/* A device tensor: shape and strides in elements; data NULL when absent. */
typedef struct {
  const void* data;
  int32_t dtype; /* ssmtune_dtype */
  int32_t rank;
  int64_t shape[4];
  int64_t stride[4];
} ssmtune_tensor;

/* mamba_ssm's selective_scan_fn forward. u, delta, z, out, out_z:
 * (batch, dim, seqlen); A: (dim, dstate) fp32; B, C: (batch, groups,
 * dstate, seqlen) or constant (dim, dstate) fp32; D, delta_bias: (dim,)
 * fp32; h0, last_state: (batch, dim, dstate) fp32. Optional tensors have
 * data == NULL; out_z is written when z is given, last_state when given. */
typedef struct {
  ssmtune_tensor u, delta, A, B, C, D, z, delta_bias, h0;
  ssmtune_tensor out, out_z, last_state;
  int32_t delta_softplus;
} ssmtune_fwd_args;

typedef struct ssmtune_runtime ssmtune_runtime;

/* db_path: the tuning database; NULL for the default ($SSMTUNE_DB, then the
 * user cache directory), "" for none (heuristic defaults only). A list
 * "LOCAL:SHARED..." layers read-only shared databases (which must exist) under
 * the writable local one: lookups read local first, writes go local. Tune on first
 * use follows $SSMTUNE_TUNE_ON_FIRST_USE (seconds, or "off"; see runtime.h). */
ssmtune_status ssmtune_runtime_create(const char* db_path, int device, ssmtune_runtime** out);
void ssmtune_runtime_destroy(ssmtune_runtime* rt);

/* stream: a CUstream (NULL: the legacy default stream). */
ssmtune_status ssmtune_selective_scan_fwd(ssmtune_runtime* rt, const ssmtune_fwd_args* args,
                                          void* stream);

/* Which config the call would run and why, as text into buf (truncated to len). */
ssmtune_status ssmtune_explain(ssmtune_runtime* rt, const ssmtune_fwd_args* args, char* buf,
                               size_t len);

/* Prepared calls: the fast path for bindings that call one shape many times.
 * ssmtune_fwd_prepare validates a call's layout once (shapes, strides,
 * dtypes, flags; data pointers are ignored and a tensor is present when its
 * rank is > 0), selects its config and compiles or loads its kernel; the
 * plan is owned by the runtime, cached per layout (the same layout gives the
 * same plan) and valid until the runtime is destroyed. Plans are immutable
 * and may be launched from many threads at once. */
typedef struct ssmtune_fwd_plan ssmtune_fwd_plan;

/* The order of the pointers ssmtune_fwd_launch takes: the fields of
 * ssmtune_fwd_args. */
enum {
  SSMTUNE_FWD_U = 0,
  SSMTUNE_FWD_DELTA = 1,
  SSMTUNE_FWD_A = 2,
  SSMTUNE_FWD_B = 3,
  SSMTUNE_FWD_C = 4,
  SSMTUNE_FWD_D = 5,
  SSMTUNE_FWD_Z = 6,
  SSMTUNE_FWD_DELTA_BIAS = 7,
  SSMTUNE_FWD_H0 = 8,
  SSMTUNE_FWD_OUT = 9,
  SSMTUNE_FWD_OUT_Z = 10,
  SSMTUNE_FWD_LAST_STATE = 11,
  SSMTUNE_FWD_NUM_TENSORS = 12
};

ssmtune_status ssmtune_fwd_prepare(ssmtune_runtime* rt, const ssmtune_fwd_args* layout,
                                   ssmtune_fwd_plan** out);

/* Device scratch bytes a launch of this plan needs (look-back and
 * multi-pass carries, flag words); 0 for most configs. */
size_t ssmtune_fwd_plan_scratch_bytes(const ssmtune_fwd_plan* plan);

/* Launches a prepared call. ptrs: SSMTUNE_FWD_NUM_TENSORS device pointers in
 * the order above, NULL exactly for the tensors absent from the layout.
 * Checked per call: presence, alignment to the element size, outputs not
 * overlapping inputs or each other; the vector-access switches follow the
 * pointers. scratch: device memory of ssmtune_fwd_plan_scratch_bytes(plan)
 * bytes aligned to 256, used in stream order (the caller keeps it alive
 * until the launch completes); NULL when the plan needs none, or to use the
 * runtime's own per-stream scratch (allocated on first use: not safe inside
 * CUDA graph capture). Enqueues kernels (and a memset of the flag words)
 * on `stream` and nothing else: no synchronisation, no allocation when
 * scratch is given, so it may be captured into a CUDA graph. */
ssmtune_status ssmtune_fwd_launch(const ssmtune_fwd_plan* plan, const void* const* ptrs,
                                  void* scratch, void* stream);

/* The plan's problem, config, and the rule that picked it, as text. */
ssmtune_status ssmtune_fwd_plan_explain(const ssmtune_fwd_plan* plan, char* buf, size_t len);

/* The backward of selective_scan_fn. Inputs: the forward's (u, delta, A,
 * B, C, D, z, delta_bias, h0, laid out as in ssmtune_fwd_args), `out` (the
 * forward's output y before the z gate, including D u; needed when z is
 * given, else may be absent), dout (gradient of out_z when z is given,
 * else of out; u's dtype, (batch, dim, seqlen)) and dlast (gradient of
 * last_state, (batch, dim, dstate) fp32, optional). Outputs, overwritten
 * (never accumulated into): du, ddelta, dz like u; dB, dC like B, C
 * (variable: u's dtype, (batch, groups, dstate, seqlen); constant: fp32
 * (dim, dstate)); dA (dim, dstate), dD, ddelta_bias (dim,), dh0 (batch,
 * dim, dstate) fp32. dD, dz, ddelta_bias, dh0 are required exactly when D,
 * z, delta_bias, h0 are given. Deterministic: the same inputs give the
 * same bits. */
typedef struct {
  ssmtune_tensor u, delta, A, B, C, D, z, delta_bias, h0;
  ssmtune_tensor out, dout, dlast;
  ssmtune_tensor du, ddelta, dA, dB, dC, dD, dz, ddelta_bias, dh0;
  int32_t delta_softplus;
} ssmtune_bwd_args;

ssmtune_status ssmtune_selective_scan_bwd(ssmtune_runtime* rt, const ssmtune_bwd_args* args,
                                          void* stream);

/* Which backward config the call would run and why. */
ssmtune_status ssmtune_explain_bwd(ssmtune_runtime* rt, const ssmtune_bwd_args* args, char* buf,
                                   size_t len);

/* Prepared backward calls, with the forward's contract (validated,
 * selected and compiled once per layout; immutable; owned by the runtime). */
typedef struct ssmtune_bwd_plan ssmtune_bwd_plan;

/* The order of the pointers ssmtune_bwd_launch takes: the fields of
 * ssmtune_bwd_args. */
enum {
  SSMTUNE_BWD_U = 0,
  SSMTUNE_BWD_DELTA = 1,
  SSMTUNE_BWD_A = 2,
  SSMTUNE_BWD_B = 3,
  SSMTUNE_BWD_C = 4,
  SSMTUNE_BWD_D = 5,
  SSMTUNE_BWD_Z = 6,
  SSMTUNE_BWD_DELTA_BIAS = 7,
  SSMTUNE_BWD_H0 = 8,
  SSMTUNE_BWD_OUT = 9,
  SSMTUNE_BWD_DOUT = 10,
  SSMTUNE_BWD_DLAST = 11,
  SSMTUNE_BWD_DU = 12,
  SSMTUNE_BWD_DDELTA = 13,
  SSMTUNE_BWD_DA = 14,
  SSMTUNE_BWD_DB = 15,
  SSMTUNE_BWD_DC = 16,
  SSMTUNE_BWD_DD = 17,
  SSMTUNE_BWD_DZ = 18,
  SSMTUNE_BWD_DDELTA_BIAS = 19,
  SSMTUNE_BWD_DH0 = 20,
  SSMTUNE_BWD_NUM_TENSORS = 21
};

ssmtune_status ssmtune_bwd_prepare(ssmtune_runtime* rt, const ssmtune_bwd_args* layout,
                                   ssmtune_bwd_plan** out);

/* Device scratch bytes a launch of this plan needs (chunk states, partial
 * sums reduced in a fixed order); usually > 0. */
size_t ssmtune_bwd_plan_scratch_bytes(const ssmtune_bwd_plan* plan);

/* Launches a prepared backward: ptrs are SSMTUNE_BWD_NUM_TENSORS device
 * pointers in the order above (NULL exactly for the tensors absent from
 * the layout); scratch and stream as for ssmtune_fwd_launch (given scratch:
 * no synchronisation, no allocation, safe inside CUDA graph capture). */
ssmtune_status ssmtune_bwd_launch(const ssmtune_bwd_plan* plan, const void* const* ptrs,
                                  void* scratch, void* stream);

ssmtune_status ssmtune_bwd_plan_explain(const ssmtune_bwd_plan* plan, char* buf, size_t len);

/* Training: the forward saves the states its backward would recompute (the
 * state entering every backward chunk after the first, fp32; on an H200
 * at (8, 1536, 2048, 16) bf16 the backward took 0.994 ms instead of 1.176
 * with them). The backward
 * plan says at which interval it takes them (0: none: fp64 accumulation,
 * a single chunk); preparing the forward plan for that interval gives the
 * bytes they take, batch * (ceil(seqlen / interval) - 1) * dstate * dim *
 * 4 (0: none to save, or its config's algorithm cannot save them), and
 * compiles the forward's saving variant (the plain kernel never writes
 * them, and pays nothing for it): call it outside CUDA graph capture. The
 * caller owns the buffer (device memory, 16-aligned) from the forward's
 * launch to the backward's, and vouches that both calls see the same
 * inputs. */
int ssmtune_bwd_plan_states_interval(const ssmtune_bwd_plan* plan);
/* The scratch a launch given saved states needs: less than
 * ssmtune_bwd_plan_scratch_bytes by the checkpoints it would compute. */
size_t ssmtune_bwd_plan_states_scratch_bytes(const ssmtune_bwd_plan* plan);
ssmtune_status ssmtune_fwd_plan_prepare_states(const ssmtune_fwd_plan* plan, int interval,
                                               size_t* bytes);
/* ssmtune_fwd_launch, which also writes the states into `states`. */
ssmtune_status ssmtune_fwd_launch_saving(const ssmtune_fwd_plan* plan, const void* const* ptrs,
                                         void* scratch, void* states, int interval, void* stream);
/* ssmtune_bwd_launch, which reads them instead of recomputing them;
 * `interval` must be ssmtune_bwd_plan_states_interval(plan). */
ssmtune_status ssmtune_bwd_launch_saved(const ssmtune_bwd_plan* plan, const void* const* ptrs,
                                        void* scratch, const void* states, int interval,
                                        void* stream);

/* ---- The decode step -------------------------------------------------
 * mamba_ssm's selective_state_update: one token through the SSM, the state
 * updated in place. Channels are (head, p < headdim); Mamba-1 is one head.
 * state: (rows, heads, headdim, dstate) fp32, fp16 or bf16, read and
 * written; rows = batch without state_indices. x, dt, z, out: (batch,
 * heads, headdim), one dtype; A: (heads, headdim, dstate) fp32; B, C:
 * (batch, groups, dstate) in x's dtype, groups dividing heads; D, dt_bias:
 * (heads, headdim) fp32 or x's dtype; state_indices: (batch,) SSMTUNE_INT32
 * or SSMTUNE_INT64, the state row of each batch entry (a negative one is
 * padding: out = 0, no state touched; one past the rows is the caller's
 * bug). Any strides >= 0 (0 broadcasts an input, e.g. Mamba-2's tied head
 * dims); the state and out need one element per index. D, z, dt_bias and
 * state_indices are optional (data NULL). */
typedef struct {
  ssmtune_tensor state, x, dt, A, B, C, D, z, dt_bias, out, state_indices;
  int32_t dt_softplus;
} ssmtune_step_args;

enum {
  SSMTUNE_STEP_STATE = 0,
  SSMTUNE_STEP_X = 1,
  SSMTUNE_STEP_DT = 2,
  SSMTUNE_STEP_A = 3,
  SSMTUNE_STEP_B = 4,
  SSMTUNE_STEP_C = 5,
  SSMTUNE_STEP_D = 6,
  SSMTUNE_STEP_Z = 7,
  SSMTUNE_STEP_DT_BIAS = 8,
  SSMTUNE_STEP_OUT = 9,
  SSMTUNE_STEP_STATE_INDICES = 10,
  SSMTUNE_STEP_NUM_TENSORS = 11
};

ssmtune_status ssmtune_selective_state_update(ssmtune_runtime* rt, const ssmtune_step_args* args,
                                              void* stream);
ssmtune_status ssmtune_explain_step(ssmtune_runtime* rt, const ssmtune_step_args* args, char* buf,
                                    size_t len);

/* Prepared steps, with the forward's contract (a decode loop calls one
 * layout per layer and token): a launch checks its pointers and enqueues
 * one kernel; no scratch, capture-safe. */
typedef struct ssmtune_step_plan ssmtune_step_plan;
ssmtune_status ssmtune_step_prepare(ssmtune_runtime* rt, const ssmtune_step_args* layout,
                                    ssmtune_step_plan** out);
ssmtune_status ssmtune_step_launch(const ssmtune_step_plan* plan, const void* const* ptrs,
                                   void* stream);
ssmtune_status ssmtune_step_plan_explain(const ssmtune_step_plan* plan, char* buf, size_t len);

/* The library's version ("0.1.0") and the C ABI's revision (5: the decode
 * step; 4: states saved by the forward for the backward; 3: the backward). */
const char* ssmtune_version(void);
int ssmtune_abi_version(void);

/* This thread's last error message ("" after a success). */
const char* ssmtune_last_error(void);

/* ---- Tuning from the library ------------------------------------------
 * ssmtune_tune tunes one problem on the runtime's device into its tuning
 * database, in this process: the space is pruned and compiled here, and
 * each config is measured in an `ssmtune worker` process (a kernel that
 * faults or hangs is recorded as faulted and the session goes on). The
 * worker program is $SSMTUNE_EXE, else `ssmtune` beside the running program
 * or beside libssmtune.so (an installed Python package bundles it), else on
 * PATH. Blocks until the session ends; one session at a time per runtime.
 * Afterwards calls and prepares of the problem select again, so the tuned
 * config is used (plans prepared before stay valid and keep their config).
 * A problem the database already holds a current best entry for is not
 * measured again unless `force` or `resume` says so. */

/* Options; all zero (or a NULL pointer) gives the defaults. */
typedef struct {
  double time_limit_s;     /* wall seconds, worker start and compiling included; 0: no limit */
  const char* strategy;    /* "halving" (NULL or ""), "exhaustive" or "random" */
  int32_t max_configs;     /* most configs measured; 0: no limit */
  uint64_t seed;           /* inputs' and the random strategy's seed; 0: fresh */
  int32_t force;           /* nonzero: measure every config again, even on a tuned problem */
  int32_t resume;          /* nonzero: on a tuned problem, measure only the configs not yet held */
  double max_error;        /* > 0: a rel L2 budget tighter than the dtype's */
  double config_timeout_s; /* one config may take this long in its worker; 0: 60 */
} ssmtune_tune_options;

typedef enum {
  SSMTUNE_TUNE_START = 0,     /* the worker is starting (inputs, fp64 reference) */
  SSMTUNE_TUNE_COMPILING = 1, /* compiling starts; measuring starts while it goes on */
  SSMTUNE_TUNE_COMPILED = 2,  /* compiling done (the budget may have left some not reached) */
  SSMTUNE_TUNE_MEASURED = 3,  /* one config measured: config, ms, usable */
  SSMTUNE_TUNE_DONE = 4       /* the session ended (or the problem was already tuned) */
} ssmtune_tune_event_kind;

/* One progress event; the strings live until the callback returns. */
typedef struct {
  int32_t kind; /* ssmtune_tune_event_kind */
  const char* problem_key;
  const char* message;     /* a human line, or "" */
  int32_t compiled;        /* programs compiled so far */
  int32_t timed;           /* configs measured so far */
  int32_t planned;         /* configs the strategy plans to measure (halving: an estimate) */
  const char* config;      /* MEASURED: the config, else "" */
  double ms;               /* MEASURED: its median time */
  int32_t usable;          /* MEASURED: it ran and was accurate */
  const char* best_config; /* the best so far, or "" */
  double best_ms;          /* its median, 0 when none */
  double elapsed_s;        /* since the session began */
} ssmtune_tune_event;

/* Called on the thread that called ssmtune_tune, for every event. Return 0 to go on, nonzero to
 * stop after the config being measured (what was measured is still
 * selected from and recorded). */
typedef int (*ssmtune_progress_fn)(const ssmtune_tune_event* event, void* user);

/* The session's outcome. */
typedef struct {
  char problem_key[256];
  char config[256];      /* the selected config ("" when none was usable) */
  double best_ms;        /* its median time */
  double best_rel_l2;    /* its error against fp64 */
  int32_t found;         /* a config was selected and recorded as the best */
  int32_t already_tuned; /* a current best existed: nothing was measured */
  int32_t configs, pruned, compiled, compile_failed, timed, faulted, inaccurate, from_db;
  int32_t cut_short; /* the time limit, max_configs or the callback ended the search before
                        every candidate was measured (compiles not reached included) */
  int32_t cancelled; /* the callback ended it */
  double wall_s;
} ssmtune_tune_result;

/* problem_key: any family's key, e.g. "fwd:b8.d1536.l2048.n16.g1.bf16.vB.vC"
 * (ssmtune_fwd_problem_key gives a call's; a backward key is "bwd:" + the
 * forward key's body, ".dlast" appended when a gradient flows into
 * last_state). options, progress and user may be NULL; out may be NULL.
 * Needs a runtime with a database (not one created with db_path ""). */
ssmtune_status ssmtune_tune(ssmtune_runtime* rt, const char* problem_key,
                            const ssmtune_tune_options* options, ssmtune_progress_fn progress,
                            void* user, ssmtune_tune_result* out);

/* The forward problem key of a call's layout (as ssmtune_fwd_prepare takes
 * it: present tensors have rank > 0, data ignored), validated as prepare
 * validates it, into buf (an error when len is too small). Needs no GPU. */
ssmtune_status ssmtune_fwd_problem_key(const ssmtune_fwd_args* layout, char* buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* SSMTUNE_SSMTUNE_H_ */
