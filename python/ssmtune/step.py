"""The decode step: a drop-in for mamba_ssm's selective_state_update (one
token through the SSM, the state updated in place, out returned), over the
C ABI's prepared steps. A call's layout (dtypes, shapes, strides, device,
flags) is prepared once (validated, its config selected, its kernel
compiled or loaded); later calls of that layout look it up and enqueue one
kernel on the current stream.

Shapes as mamba_ssm takes them: Mamba-1 state (batch, dim, dstate), x, dt, z
(batch, dim), A (dim, dstate), B, C (batch, dstate), D, dt_bias (dim,); or
Mamba-2 with heads: state (batch, nheads, dim, dstate), x, dt, z (batch,
nheads, dim), A (nheads, dim, dstate), B, C (batch, ngroups, dstate), D,
dt_bias (nheads, dim). Strides are taken as they are (0 broadcasts, as
Mamba-2's tied head dims do). The state may be fp32, fp16 or bf16; A is used
in fp32, D and dt_bias in fp32 or x's dtype (others are converted, a copy).
state_batch_indices (batch,) int32 or int64 picks each entry's state row;
a negative one is padding (out = 0, no state touched).
"""
from . import _ext, _plans

try:
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None

_cache = _plans.PlanCache(_ext.ext, "step")
_cache_get = _cache.get

if torch is not None:
    _CODES = {torch.float32: _plans.FP32, torch.float16: _plans.FP16,
              torch.bfloat16: _plans.BF16, torch.int32: _plans.INT32,
              torch.int64: _plans.INT64}
    if hasattr(torch._C, "_cuda_getCurrentRawStream"):
        _raw_stream = torch._C._cuda_getCurrentRawStream
    else:  # pragma: no cover - older torch
        def _raw_stream(index):
            return torch.cuda.current_stream(index).cuda_stream


def _meta(t):
    return None if t is None else (t.dtype, t.shape, t.stride(), t.get_device())


def _weight(name, t, x_dtype):
    """D or dt_bias as the kernel reads them: fp32 or x's dtype (others converted)."""
    if t is None or t.dtype in (torch.float32, x_dtype):
        return t
    return t.float()


def _prepare(key, state, x, dt, A, B, C, D, z, dt_bias, out, idx, dt_softplus):
    """The miss path: the checks the C ABI cannot make (one CUDA device,
    dtypes it has codes for, capture), the headed layout, the plan."""
    device = x.get_device()
    if device < 0:
        raise ValueError("ssmtune: x must be a CUDA tensor")
    heads = state.dim() == 4
    # (name, tensor, headed rank, where a missing head/group dimension goes)
    named = (("state", state, 4, 1), ("x", x, 3, 1), ("dt", dt, 3, 1), ("A", A, 3, 0),
             ("B", B, 3, 1), ("C", C, 3, 1), ("D", D, 2, 0), ("z", z, 3, 1),
             ("dt_bias", dt_bias, 2, 0), ("out", out, 3, 1), ("state_batch_indices", idx, 1, 0))
    metas = []
    for name, t, rank, at in named:
        if t is None:
            metas.append(None)
            continue
        if t.get_device() != device:
            raise ValueError(f"ssmtune: {name} is on {t.device}, x on cuda:{device}; every "
                             "tensor must be on x's CUDA device")
        if t.dtype not in _CODES:
            raise TypeError(f"ssmtune: {name}: unsupported dtype {t.dtype}")
        if not heads and rank > 1 and t.dim() == rank:
            raise ValueError(f"ssmtune: {name} has a heads dimension ({tuple(t.shape)}) but the "
                             f"state has none ({tuple(state.shape)})")
        shape, strides = _plans.headed(t.shape, t.stride(), rank, at)
        metas.append((_CODES[t.dtype], shape, strides))
    if torch.cuda.is_current_stream_capturing():
        raise RuntimeError("ssmtune: this step's layout is new inside a CUDA graph capture; "
                           "preparing it compiles a kernel, which capture does not allow: run "
                           "the step once before capturing")
    return _cache.prepare(key, _ext.runtime(device), metas, dt_softplus, device)


def _entry(state, x, dt, A, B, C, D, z, dt_bias, out, idx, dt_softplus):
    """The prepared step of this layout: (plan, 0, device index)."""
    key = (_meta(state), _meta(x), _meta(dt), _meta(A), _meta(B), _meta(C), _meta(D), _meta(z),
           _meta(dt_bias), out.shape, _meta(idx), dt_softplus)
    entry = _cache_get(key)
    if entry is None:
        entry = _prepare(key, state, x, dt, A, B, C, D, z, dt_bias, out, idx, dt_softplus)
    return entry


def _operands(x, A, D, dt_bias):
    if torch is None:
        raise ImportError("ssmtune.selective_state_update needs PyTorch (import torch failed)")
    if A.dtype != torch.float32:
        A = A.float()
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    return A, _weight("D", D, x.dtype), _weight("dt_bias", dt_bias, x.dtype), out


def selective_state_update(state, x, dt, A, B, C, D=None, z=None, dt_bias=None,
                           dt_softplus=False, state_batch_indices=None):
    """mamba_ssm's selective_state_update: updates `state` in place and
    returns out (x's shape and dtype). See the module's docstring."""
    A, D, dt_bias, out = _operands(x, A, D, dt_bias)
    idx = state_batch_indices
    entry = _entry(state, x, dt, A, B, C, D, z, dt_bias, out, idx, bool(dt_softplus))
    _ext.ext().step_launch(entry[0], state.data_ptr(), x.data_ptr(), dt.data_ptr(), A.data_ptr(),
                           B.data_ptr(), C.data_ptr(), None if D is None else D.data_ptr(),
                           None if z is None else z.data_ptr(),
                           None if dt_bias is None else dt_bias.data_ptr(), out.data_ptr(),
                           None if idx is None else idx.data_ptr(), _raw_stream(entry[2]))
    return out


def explain_step(state, x, dt, A, B, C, D=None, z=None, dt_bias=None, dt_softplus=False,
                 state_batch_indices=None):
    """The config a step of this layout runs and why (prepares it; runs nothing)."""
    A, D, dt_bias, out = _operands(x, A, D, dt_bias)
    entry = _entry(state, x, dt, A, B, C, D, z, dt_bias, out, state_batch_indices,
                   bool(dt_softplus))
    return _ext.ext().step_explain(entry[0])
