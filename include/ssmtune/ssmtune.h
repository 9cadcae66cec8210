/* ssmtune C ABI: the Mamba-1 selective scan forward with auto-selected,
 * JIT-compiled kernels, for bindings (python/ loads it with ctypes).
 *
 * Ownership: a runtime owns its GPU context reference, caches and compiled
 * kernels; destroy it with ssmtune_runtime_destroy. Tensors are the
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

typedef enum { SSMTUNE_FP32 = 0, SSMTUNE_FP16 = 1, SSMTUNE_BF16 = 2 } ssmtune_dtype;

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
 * user cache directory), "" for none (heuristic defaults only). Tune on first
 * use follows $SSMTUNE_TUNE_ON_FIRST_USE (seconds, or "off"; see runtime.h). */
ssmtune_status ssmtune_runtime_create(const char* db_path, int device, ssmtune_runtime** out);
void ssmtune_runtime_destroy(ssmtune_runtime* rt);

/* stream: a CUstream (NULL: the legacy default stream). */
ssmtune_status ssmtune_selective_scan_fwd(ssmtune_runtime* rt, const ssmtune_fwd_args* args,
                                          void* stream);

/* Which config the call would run and why, as text into buf (truncated to len). */
ssmtune_status ssmtune_explain(ssmtune_runtime* rt, const ssmtune_fwd_args* args, char* buf,
                               size_t len);

/* This thread's last error message ("" after a success). */
const char* ssmtune_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* SSMTUNE_SSMTUNE_H_ */
