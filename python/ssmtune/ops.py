"""The forward scan as registered torch ops, and selective_scan_fn with
mamba_ssm's semantics on top.

One CUDA implementation, registered twice so the two registration styles of
torch >= 2.4 can be measured against each other (bench/py_overhead.py):
  ssmtune::selective_scan_fwd      torch.library.custom_op
  ssmtune::selective_scan_fwd_lib  torch.library.Library define + impl
Both have a fake (meta) implementation, so torch.compile(fullgraph=True)
traces through them, and an autograd formula whose backward runs
`_backward_impl` (NotImplementedError until the backward kernel exists).
$SSMTUNE_OP_STYLE ("custom_op", the default, or "library") picks the one
selective_scan_fn calls.

Eager fast path: when nothing needs the dispatcher (not compiling, no
gradient needed, plain CUDA tensors, no dispatch mode active),
selective_scan_fn calls the CUDA implementation directly and skips the
dispatcher and the autograd layer (the same kernels and plans; the op's cost
without them). $SSMTUNE_EAGER_FAST=0 turns it off.

The op: (u, delta, A, B, C, D?, z?, delta_bias?, initial_state?,
delta_softplus, return_last_state) -> [out, out_z if z, last_state if asked].
B/C: (batch, groups, dstate, seqlen), mamba's (batch, dstate, seqlen) (one
group), or constant (dim, dstate) fp32. A, D, delta_bias and the states fp32.

A call: the tensors' metadata (dtype, shape, strides, device) make a key;
the first call of a key prepares a plan (the C ABI validates the layout and
compiles the kernel once); every call then allocates the outputs with torch
and makes one C call with the data pointers and torch's current stream.
CUDA graph capture: outputs and scratch (look-back and multi-pass configs)
come from torch's caching allocator, and the C call only enqueues (kernels,
a memset) on the current stream: no synchronisation, no host read of device
data, no allocation outside torch. Preparing (compiling) is not capture-safe:
a layout seen first inside a capture raises; run it once before capturing.
"""
import os
from typing import List, Optional

from . import _ext, _plans, _tune

try:
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None

HAS_TORCH_OPS = (torch is not None and hasattr(torch, "library")
                 and hasattr(torch.library, "custom_op") and hasattr(torch.library, "register_fake"))

_cache = _plans.PlanCache(_ext.ext)
_cache_get = _cache.get


def _need_torch():
    if torch is None:
        raise ImportError("ssmtune.selective_scan_fn needs PyTorch (import torch failed)")
    if not HAS_TORCH_OPS:
        raise ImportError(f"ssmtune.selective_scan_fn needs torch >= 2.4 (torch.library.custom_op); "
                          f"found {torch.__version__}")


def _backward_impl(ctx, grads):
    """The backward hook: ctx.saved_tensors are (u, delta, A, B, C, D, z,
    delta_bias, initial_state) as the op got them (None where absent),
    ctx.delta_softplus and ctx.return_last_state the flags; `grads` the
    gradients of the op's outputs (None where unused). Returns one gradient
    per op input (11; None for the flags and for inputs without one).
    The backward kernel's op (ssmtune::selective_scan_bwd, with its own fake
    implementation) slots in here."""
    raise NotImplementedError(
        "ssmtune: the backward pass of selective_scan_fn is not implemented yet; "
        "use mamba_ssm's for training")


if torch is not None:
    _DTYPES = {torch.float32: _plans.FP32, torch.float16: _plans.FP16,
               torch.bfloat16: _plans.BF16}
    _CONTIGUOUS = torch.contiguous_format
    _FLOAT32 = torch.float32
    _empty = torch.empty
    _empty_like = torch.empty_like
    _Tensor = torch.Tensor
    _grad_enabled = torch.is_grad_enabled
    _is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", lambda: False)
    _any_requires_grad = getattr(torch._C, "_any_requires_grad", None) or (
        lambda *xs: any(isinstance(x, torch.Tensor) and x.requires_grad for x in xs))
    _dispatch_modes = getattr(torch._C, "_len_torch_dispatch_stack", lambda: 0)
    if hasattr(torch._C, "_cuda_getCurrentRawStream"):
        _raw_stream = torch._C._cuda_getCurrentRawStream  # an int, no Stream object
    else:  # pragma: no cover - older torch
        def _raw_stream(index):
            return torch.cuda.current_stream(index).cuda_stream


def _meta(t):
    return None if t is None else (t.dtype, t.shape, t.stride(), t.get_device())


def _prepare(key, u, delta, A, B, C, D, z, delta_bias, h0, delta_softplus, return_last_state):
    """The miss path: checks what the C ABI cannot see (devices, dtypes it
    has no code for, capture), then prepares the plan."""
    named = (("u", u), ("delta", delta), ("A", A), ("B", B), ("C", C), ("D", D), ("z", z),
             ("delta_bias", delta_bias), ("initial_state", h0))
    device = u.get_device()
    if device < 0:
        raise ValueError("ssmtune: u must be a CUDA tensor")
    metas = []
    for name, t in named:
        if t is None:
            metas.append(None)
            continue
        if t.get_device() != device:
            raise ValueError(f"ssmtune: {name} is on {t.device}, u on cuda:{device}; "
                             "every tensor must be on u's CUDA device")
        if t.dtype not in _DTYPES:
            raise TypeError(f"ssmtune: {name}: unsupported dtype {t.dtype} (fp32, fp16 or bf16)")
        shape, strides = tuple(t.shape), tuple(t.stride())
        if name in ("B", "C"):
            shape, strides = _plans.bc_meta(shape, strides)
        metas.append((_DTYPES[t.dtype], shape, strides))
    if torch.cuda.is_current_stream_capturing():
        raise RuntimeError("ssmtune: this call's layout is new inside a CUDA graph capture; "
                           "preparing it compiles a kernel, which capture does not allow: "
                           "run the call once before capturing")
    out_shape = tuple(u.shape)
    out_meta = (_DTYPES[u.dtype], out_shape, _plans.contiguous_strides(out_shape))
    last_shape = (u.shape[0], u.shape[1], A.shape[-1]) if return_last_state else None
    metas += [out_meta, out_meta if z is not None else None,
              (_plans.FP32, last_shape, _plans.contiguous_strides(last_shape))
              if return_last_state else None]
    entry = _cache.prepare(key, _ext.runtime(device), metas, delta_softplus,
                           (u.device, device, last_shape))
    if _tune.recorders:  # inside ssmtune.record(): note the layout's problem
        _tune.note_fwd(metas, delta_softplus)
    return entry


def _fwd_cuda(u, delta, A, B, C, D=None, z=None, delta_bias=None, initial_state=None,
              delta_softplus=False, return_last_state=False):
    """The CUDA implementation behind both registrations (the hot path)."""
    key = (u.dtype, u.shape, u.stride(), u.get_device(),
           delta.dtype, delta.shape, delta.stride(), delta.get_device(),
           A.dtype, A.shape, A.stride(), A.get_device(),
           B.dtype, B.shape, B.stride(), B.get_device(),
           C.dtype, C.shape, C.stride(), C.get_device(),
           None if D is None else _meta(D), None if z is None else _meta(z),
           None if delta_bias is None else _meta(delta_bias),
           None if initial_state is None else _meta(initial_state),
           delta_softplus, return_last_state)
    entry = _cache_get(key)
    if entry is None:
        entry = _prepare(key, u, delta, A, B, C, D, z, delta_bias, initial_state,
                         delta_softplus, return_last_state)
    plan, scratch_bytes, (device, index, last_shape) = entry
    out = _empty_like(u, memory_format=_CONTIGUOUS)
    outs = [out]
    out_z = last = scratch = None
    if z is not None:
        out_z = _empty_like(u, memory_format=_CONTIGUOUS)
        outs.append(out_z)
    if last_shape is not None:
        last = _empty(last_shape, dtype=_FLOAT32, device=device)
        outs.append(last)
    if scratch_bytes:
        scratch = _empty(scratch_bytes, dtype=torch.uint8, device=device)
    _ext._ext.fwd_launch(
        plan, u.data_ptr(), delta.data_ptr(), A.data_ptr(), B.data_ptr(), C.data_ptr(),
        None if D is None else D.data_ptr(), None if z is None else z.data_ptr(),
        None if delta_bias is None else delta_bias.data_ptr(),
        None if initial_state is None else initial_state.data_ptr(), out.data_ptr(),
        None if out_z is None else out_z.data_ptr(), None if last is None else last.data_ptr(),
        None if scratch is None else scratch.data_ptr(), _raw_stream(index))
    return outs


def _fwd_fake(u, delta, A, B, C, D=None, z=None, delta_bias=None, initial_state=None,
              delta_softplus=False, return_last_state=False):
    outs = [torch.empty_like(u, memory_format=torch.contiguous_format)]
    if z is not None:
        outs.append(torch.empty_like(u, memory_format=torch.contiguous_format))
    if return_last_state:
        outs.append(u.new_empty((u.shape[0], u.shape[1], A.shape[-1]), dtype=torch.float32))
    return outs


def _setup_context(ctx, inputs, output):
    u, delta, A, B, C, D, z, delta_bias, initial_state, delta_softplus, return_last_state = inputs
    ctx.save_for_backward(u, delta, A, B, C, D, z, delta_bias, initial_state)
    ctx.delta_softplus = delta_softplus
    ctx.return_last_state = return_last_state


def _backward(ctx, *grads):
    if len(grads) == 1 and isinstance(grads[0], (list, tuple)):
        grads = grads[0]  # the op returns a list: its gradients come as one list
    return _backward_impl(ctx, list(grads))


_SCHEMA = ("(Tensor u, Tensor delta, Tensor A, Tensor B, Tensor C, Tensor? D=None, "
           "Tensor? z=None, Tensor? delta_bias=None, Tensor? initial_state=None, "
           "bool delta_softplus=False, bool return_last_state=False) -> Tensor[]")

fwd_custom_op = None  # ssmtune::selective_scan_fwd (custom_op)
fwd_library_op = None  # ssmtune::selective_scan_fwd_lib (Library define + impl)
_library = None


def _register():
    global fwd_custom_op, fwd_library_op, _library

    @torch.library.custom_op("ssmtune::selective_scan_fwd", mutates_args=(), device_types="cuda")
    def selective_scan_fwd_op(u: torch.Tensor, delta: torch.Tensor, A: torch.Tensor,
                              B: torch.Tensor, C: torch.Tensor, D: Optional[torch.Tensor] = None,
                              z: Optional[torch.Tensor] = None,
                              delta_bias: Optional[torch.Tensor] = None,
                              initial_state: Optional[torch.Tensor] = None,
                              delta_softplus: bool = False,
                              return_last_state: bool = False) -> List[torch.Tensor]:
        return _fwd_cuda(u, delta, A, B, C, D, z, delta_bias, initial_state, delta_softplus,
                         return_last_state)

    selective_scan_fwd_op.register_fake(_fwd_fake)
    selective_scan_fwd_op.register_autograd(_backward, setup_context=_setup_context)

    _library = torch.library.Library("ssmtune", "FRAGMENT")
    _library.define("selective_scan_fwd_lib" + _SCHEMA)
    _library.impl("selective_scan_fwd_lib", _fwd_cuda, "CUDA")
    torch.library.register_fake("ssmtune::selective_scan_fwd_lib", _fwd_fake, lib=_library)
    torch.library.register_autograd("ssmtune::selective_scan_fwd_lib", _backward,
                                    setup_context=_setup_context, lib=_library)
    fwd_custom_op = torch.ops.ssmtune.selective_scan_fwd.default
    fwd_library_op = torch.ops.ssmtune.selective_scan_fwd_lib.default


EAGER_FAST_PATH = os.environ.get("SSMTUNE_EAGER_FAST", "1") != "0"

if HAS_TORCH_OPS:
    _register()
    _STYLE = os.environ.get("SSMTUNE_OP_STYLE", "custom_op")
    if _STYLE not in ("custom_op", "library"):
        raise ValueError(f"ssmtune: SSMTUNE_OP_STYLE={_STYLE!r}: expected custom_op or library")
    _op = fwd_custom_op if _STYLE == "custom_op" else fwd_library_op


def selective_scan_fwd(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False,
                       return_last_state=False, initial_state=None):
    """The forward op; returns (out, out_z or None, last_state or None)."""
    _need_torch()
    outs = _op(u, delta, A, B, C, D, z, delta_bias, initial_state, delta_softplus,
               return_last_state)
    out_z = outs[1] if z is not None else None
    return outs[0], out_z, (outs[-1] if return_last_state else None)


def selective_scan_fn(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False,
                      return_last_state=False):
    """Drop-in for mamba_ssm.ops.selective_scan_interface.selective_scan_fn:
    a last dimension with a stride other than 1 is made contiguous, A, D and
    delta_bias are used in fp32, 3-D B/C are one group. Returns out (out_z
    when z is given), and (out, last_state) with return_last_state."""
    _need_torch()
    if u.stride(-1) != 1:
        u = u.contiguous()
    if delta.stride(-1) != 1:
        delta = delta.contiguous()
    if B.stride(-1) != 1:
        B = B.contiguous()
    if C.stride(-1) != 1:
        C = C.contiguous()
    if A.dtype != _FLOAT32:
        A = A.float()
    if D is not None and D.dtype != _FLOAT32:
        D = D.float()
    if delta_bias is not None and delta_bias.dtype != _FLOAT32:
        delta_bias = delta_bias.float()
    if z is not None and z.stride(-1) != 1:
        z = z.contiguous()
    if (EAGER_FAST_PATH and not _is_compiling() and type(u) is _Tensor
            and not (_grad_enabled() and _any_requires_grad(u, delta, A, B, C, D, z, delta_bias))
            and not _dispatch_modes()):
        outs = _fwd_cuda(u, delta, A, B, C, D, z, delta_bias, None, delta_softplus,
                         return_last_state)
    else:
        outs = _op(u, delta, A, B, C, D, z, delta_bias, None, delta_softplus, return_last_state)
    out = outs[1] if z is not None else outs[0]
    return (out, outs[-1]) if return_last_state else out
