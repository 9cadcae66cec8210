"""The selective scan's forward and backward as registered torch ops, and
selective_scan_fn with mamba_ssm's semantics (autograd included) on top.

One CUDA implementation per direction, each registered twice so the two
registration styles of torch >= 2.4 can be measured against each other
(bench/py_overhead.py):
  ssmtune::selective_scan_fwd      ssmtune::selective_scan_bwd      torch.library.custom_op
  ssmtune::selective_scan_fwd_lib  ssmtune::selective_scan_bwd_lib  Library define + impl
All four have a fake (meta) implementation, so torch.compile(fullgraph=True)
traces through them, forward and backward. Each forward op's autograd
formula saves its inputs (and `out`, y before the z gate, when z is given)
and calls the backward op of its own style. $SSMTUNE_OP_STYLE ("custom_op",
the default, or "library") picks the pair selective_scan_fn calls.

Eager fast path: when nothing needs the dispatcher (not compiling, plain
CUDA tensors, no dispatch mode active), selective_scan_fn calls the CUDA
implementation directly: without a gradient, the forward alone; with one,
through _EagerScan, a torch.autograd.Function with the ops' own autograd
formula (the same kernels, plans, saved tensors and gradients; the op's cost
without the dispatcher and custom_op's wrappers). torch.compile, dispatch
modes and tensor subclasses go through the registered ops.
$SSMTUNE_EAGER_FAST=0 turns the fast path off.

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

The backward op: (u, delta, A, B, C, D?, z?, delta_bias?, initial_state?,
out? (with z), dout, dlast?, delta_softplus) -> [du, ddelta, dA, dB, dC,
dD if D, dz if z, ddelta_bias if delta_bias, dh0 if initial_state]. Each
gradient has its input's dtype and shape (3-D B/C give 3-D dB/dC, constant
B/C fp32 ones), allocated contiguous by torch; its scratch
(ssmtune_bwd_plan_scratch_bytes) comes from torch too, so a backward is as
capture-safe as a forward. Deterministic: the same inputs give the same bits.
Output gradients torch leaves undefined stay None (materialize_grads off):
an unused last_state costs nothing, an unused out gets a zero dout (the
kernel needs one); _grad_map has the bookkeeping.

Saved states (the eager training path): the forward also writes the state
entering each chunk of the backward's plan (fp32, batch * seqlen / chunk *
dstate * dim), and the backward reads them instead of recomputing them (on
the H200 at (8, 1536, 2048, 16) bf16 with the block's flags, 1.176 -> 0.994 ms). $SSMTUNE_SAVE_STATES: "auto" (the default)
saves them when they take no more memory than an fp32 copy of u (dstate at
most the backward's chunk, 16 by default), "always", or "never". The
registered ops (torch.compile) recompute them.
"""
import os
from typing import List, Optional

from . import _ext, _grad_map, _plans, _tune

try:
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None

HAS_TORCH_OPS = (torch is not None and hasattr(torch, "library")
                 and hasattr(torch.library, "custom_op") and hasattr(torch.library, "register_fake"))

_SAVE_STATES = os.environ.get("SSMTUNE_SAVE_STATES", "auto").lower()
if _SAVE_STATES not in ("auto", "always", "never"):
    raise ValueError(f"ssmtune: SSMTUNE_SAVE_STATES={_SAVE_STATES!r}: expected auto, always or "
                     "never")

_cache = _plans.PlanCache(_ext.ext)
_cache_get = _cache.get
_bwd_cache = _plans.PlanCache(_ext.ext, "bwd")
_bwd_cache_get = _bwd_cache.get


def _need_torch():
    if torch is None:
        raise ImportError("ssmtune.selective_scan_fn needs PyTorch (import torch failed)")
    if not HAS_TORCH_OPS:
        raise ImportError(f"ssmtune.selective_scan_fn needs torch >= 2.4 (torch.library.custom_op); "
                          f"found {torch.__version__}")


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


def _input_metas(named):
    """The C ABI's descriptions of (name, tensor or None) pairs after the
    checks it cannot make (one CUDA device, a dtype it has code for), and
    u's device index."""
    u = named[0][1]
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
    return device, metas


def _refuse_inside_capture():
    if torch.cuda.is_current_stream_capturing():
        raise RuntimeError("ssmtune: this call's layout is new inside a CUDA graph capture; "
                           "preparing it compiles a kernel, which capture does not allow: "
                           "run the call once before capturing")


def _prepare(key, u, delta, A, B, C, D, z, delta_bias, h0, delta_softplus, return_last_state):
    """The miss path: checks what the C ABI cannot see (devices, dtypes it
    has no code for, capture), then prepares the plan."""
    device, metas = _input_metas(
        (("u", u), ("delta", delta), ("A", A), ("B", B), ("C", C), ("D", D), ("z", z),
         ("delta_bias", delta_bias), ("initial_state", h0)))
    _refuse_inside_capture()
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


# forward key -> (interval, fp32 elements) of the states its training calls
# save for the backward; (0, 0): none.
_states_specs = {}


def _states_spec(key, fwd_plan, u, delta, A, B, C, D, z, delta_bias, h0, out, delta_softplus):
    """What a training forward of this layout saves: the interval of the
    backward plan its backward will most likely run (dout like out, no
    gradient through last_state) and the states' size, or (0, 0) when that
    plan takes none, the forward's config cannot save them, or (auto) they
    would take more memory than an fp32 copy of u. Prepares that backward
    plan (at the first call of the layout, not at its first backward)."""
    spec = (0, 0)
    if _SAVE_STATES != "never":
        entry = _bwd_entry(u, delta, A, B, C, D, z, delta_bias, h0,
                           out if z is not None else None, out, None, delta_softplus)
        interval = entry[3]
        nbytes = _ext.ext().fwd_prepare_states(fwd_plan, interval) if interval else 0
        if nbytes and (_SAVE_STATES == "always" or nbytes <= 4 * u.numel()):
            spec = (interval, nbytes // 4)
    _states_specs[key] = spec
    return spec


def _fwd_cuda(u, delta, A, B, C, D=None, z=None, delta_bias=None, initial_state=None,
              delta_softplus=False, return_last_state=False, saved=None):
    """The CUDA implementation behind both registrations (the hot path).
    saved (the eager training path): a list that receives (states,
    interval) when the forward saves the backward's states."""
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
    states = ()
    if saved is not None:
        spec = _states_specs.get(key)
        if spec is None:
            spec = _states_spec(key, plan, u, delta, A, B, C, D, z, delta_bias, initial_state,
                                out, delta_softplus)
        if spec[0]:
            saved.append((_empty(spec[1], dtype=_FLOAT32, device=device), spec[0]))
            states = (saved[0][0].data_ptr(), spec[0])
    _ext._ext.fwd_launch(
        plan, u.data_ptr(), delta.data_ptr(), A.data_ptr(), B.data_ptr(), C.data_ptr(),
        None if D is None else D.data_ptr(), None if z is None else z.data_ptr(),
        None if delta_bias is None else delta_bias.data_ptr(),
        None if initial_state is None else initial_state.data_ptr(), out.data_ptr(),
        None if out_z is None else out_z.data_ptr(), None if last is None else last.data_ptr(),
        None if scratch is None else scratch.data_ptr(), _raw_stream(index), *states)
    return outs


def _fwd_fake(u, delta, A, B, C, D=None, z=None, delta_bias=None, initial_state=None,
              delta_softplus=False, return_last_state=False):
    outs = [torch.empty_like(u, memory_format=torch.contiguous_format)]
    if z is not None:
        outs.append(torch.empty_like(u, memory_format=torch.contiguous_format))
    if return_last_state:
        outs.append(u.new_empty((u.shape[0], u.shape[1], A.shape[-1]), dtype=torch.float32))
    return outs


def _bwd_prepare(key, inputs, delta_softplus):
    """The backward's miss path: `inputs` are the 12 tensors of the op
    (u ... initial_state, out, dout, dlast); the 9 gradients' descriptions
    follow from their inputs (same dtype and shape, contiguous)."""
    device, metas = _input_metas(tuple(zip(_plans.BWD_SLOTS[:12], inputs)))
    _refuse_inside_capture()
    for name, t in zip(_plans.BWD_SLOTS[:9], inputs[:9]):
        if t is None:
            metas.append(None)
            continue
        shape = tuple(t.shape)
        strides = _plans.contiguous_strides(shape)
        if name in ("B", "C"):
            shape, strides = _plans.bc_meta(shape, strides)
        metas.append((_DTYPES[t.dtype], shape, strides))
    entry = _bwd_cache.prepare(key, _ext.runtime(device), metas, delta_softplus, (device,))
    if _tune.recorders:  # inside ssmtune.record(): note the backward's problem
        u, z, dlast = inputs[0], inputs[6], inputs[11]
        shape = tuple(u.shape)
        out_meta = (_DTYPES[u.dtype], shape, _plans.contiguous_strides(shape))
        last_meta = None
        if dlast is not None:
            last_shape = tuple(dlast.shape)
            last_meta = (_plans.FP32, last_shape, _plans.contiguous_strides(last_shape))
        fwd_metas = metas[:9] + [out_meta, out_meta if z is not None else None, last_meta]
        _tune.note_bwd(fwd_metas, delta_softplus, dlast is not None)
    return entry


def _bwd_entry(u, delta, A, B, C, D, z, delta_bias, h0, out, dout, dlast, delta_softplus):
    """The backward plan's cache entry for these tensors (out: y before the
    z gate, None without z): one key for _bwd_cuda and _states_spec, so the
    plan a forward saves states for is the plan its backward finds."""
    key = (_meta(u), _meta(delta), _meta(A), _meta(B), _meta(C), _meta(D), _meta(z),
           _meta(delta_bias), _meta(h0), _meta(out), _meta(dout), _meta(dlast), delta_softplus)
    entry = _bwd_cache_get(key)
    if entry is None:
        entry = _bwd_prepare(key, (u, delta, A, B, C, D, z, delta_bias, h0, out, dout, dlast),
                             delta_softplus)
    return entry


def _bwd_cuda(u, delta, A, B, C, D, z, delta_bias, initial_state, out, dout, dlast,
              delta_softplus, saved=None):
    """The CUDA implementation behind both backward registrations: fresh
    gradients from torch's allocator, scratch from torch, one C call that
    only enqueues on the current stream. saved: (states, interval) from the
    forward of these inputs (_fwd_cuda), read when this plan takes states
    at that interval, else recomputed."""
    if not dout.is_contiguous():
        dout = dout.contiguous()  # e.g. the expanded gradient of a sum()
    if dlast is not None and not dlast.is_contiguous():
        dlast = dlast.contiguous()
    entry = _bwd_entry(u, delta, A, B, C, D, z, delta_bias, initial_state, out, dout, dlast,
                       delta_softplus)
    plan, scratch_bytes, (index,), interval, states_scratch = entry
    if saved is not None and saved[1] != interval:
        saved = None  # saved for another plan's chunk: recomputed here
    if saved is not None:
        scratch_bytes = states_scratch  # the checkpoints come from the forward
    du = _empty_like(u, memory_format=_CONTIGUOUS)
    ddelta = _empty_like(delta, memory_format=_CONTIGUOUS)
    dA = _empty_like(A, memory_format=_CONTIGUOUS)
    dB = _empty_like(B, memory_format=_CONTIGUOUS)
    dC = _empty_like(C, memory_format=_CONTIGUOUS)
    grads = [du, ddelta, dA, dB, dC]
    dD = dz = ddelta_bias = dh0 = scratch = None
    if D is not None:
        dD = _empty_like(D, memory_format=_CONTIGUOUS)
        grads.append(dD)
    if z is not None:
        dz = _empty_like(z, memory_format=_CONTIGUOUS)
        grads.append(dz)
    if delta_bias is not None:
        ddelta_bias = _empty_like(delta_bias, memory_format=_CONTIGUOUS)
        grads.append(ddelta_bias)
    if initial_state is not None:
        dh0 = _empty_like(initial_state, memory_format=_CONTIGUOUS)
        grads.append(dh0)
    if scratch_bytes:
        scratch = _empty(scratch_bytes, dtype=torch.uint8, device=u.device)
    _ext._ext.bwd_launch(
        plan, u.data_ptr(), delta.data_ptr(), A.data_ptr(), B.data_ptr(), C.data_ptr(),
        None if D is None else D.data_ptr(), None if z is None else z.data_ptr(),
        None if delta_bias is None else delta_bias.data_ptr(),
        None if initial_state is None else initial_state.data_ptr(),
        None if out is None else out.data_ptr(), dout.data_ptr(),
        None if dlast is None else dlast.data_ptr(), du.data_ptr(), ddelta.data_ptr(),
        dA.data_ptr(), dB.data_ptr(), dC.data_ptr(), None if dD is None else dD.data_ptr(),
        None if dz is None else dz.data_ptr(),
        None if ddelta_bias is None else ddelta_bias.data_ptr(),
        None if dh0 is None else dh0.data_ptr(),
        None if scratch is None else scratch.data_ptr(), _raw_stream(index),
        *((saved[0].data_ptr(), interval) if saved is not None else ()))
    return grads


def _bwd_fake(u, delta, A, B, C, D, z, delta_bias, initial_state, out, dout, dlast,
              delta_softplus):
    return [torch.empty_like(t, memory_format=torch.contiguous_format)
            for t in (u, delta, A, B, C, D, z, delta_bias, initial_state) if t is not None]


def _setup_context(ctx, inputs, output, saved=None):
    """saved: (states, interval) the forward saved for the backward (the eager
    path), kept like the inputs: freed after a backward that does not retain
    the graph."""
    u, delta, A, B, C, D, z, delta_bias, initial_state, delta_softplus, return_last_state = inputs
    # `out` (y before the z gate) is what the backward needs of the forward's outputs.
    ctx.save_for_backward(u, delta, A, B, C, D, z, delta_bias, initial_state,
                          output[0] if z is not None else None,
                          saved[0] if saved is not None else None)
    ctx.states_interval = saved[1] if saved is not None else 0
    ctx.delta_softplus = delta_softplus
    ctx.return_last_state = return_last_state
    ctx.set_materialize_grads(False)  # unused outputs' gradients stay None


def _backward_impl(bwd_op, ctx, grads, takes_states=False):
    """The forward ops' backward: the gradients of the op's outputs (None
    where unused) through the backward op `bwd_op`; one gradient per op
    input (11; None for the flags, absent inputs and inputs that need none).
    takes_states: bwd_op takes the forward's saved states as a last argument
    (_bwd_cuda; the registered ops' schema has no place for them)."""
    u, delta, A, B, C, D, z, delta_bias, h0, out, states = ctx.saved_tensors
    if takes_states:
        saved = (states, ctx.states_interval) if states is not None else None
        plain_op = bwd_op

        def bwd_op(*args):
            return plain_op(*args, saved)
    g_out, g_out_z, g_last = _grad_map.split_output_grads(grads, z is not None,
                                                         ctx.return_last_state)
    names = _grad_map.names(D is not None, z is not None, delta_bias is not None, h0 is not None)
    named = {}
    for with_z, dout, dlast in _grad_map.launches(z is not None, g_out, g_out_z, g_last):
        if dout is _grad_map.ZEROS:
            dout = torch.zeros_like(u, memory_format=torch.contiguous_format)
        if with_z:
            res = bwd_op(u, delta, A, B, C, D, z, delta_bias, h0, out, dout, dlast,
                         ctx.delta_softplus)
            got = dict(zip(names, res))
        else:  # a gradient of out itself: the same backward without the gate
            res = bwd_op(u, delta, A, B, C, D, None, delta_bias, h0, None, dout, dlast,
                         ctx.delta_softplus)
            got = dict(zip(_grad_map.names(D is not None, False, delta_bias is not None,
                                           h0 is not None), res))
        named = _grad_map.merge(named, got, torch.add) if named else got
    # One gradient per input the op received: the dispatcher drops trailing
    # arguments equal to their defaults, and torch's wrapper for list-
    # returning ops wants exactly as many gradients as inputs it saw.
    return _grad_map.input_grads(named, ctx.needs_input_grad)[:len(ctx.needs_input_grad)]


def _make_backward(bwd_op_of):
    """The autograd formula of a forward op whose backward op is bwd_op_of()."""
    def backward(ctx, *grads):
        return _backward_impl(bwd_op_of(), ctx, grads)
    return backward


_SCHEMA = ("(Tensor u, Tensor delta, Tensor A, Tensor B, Tensor C, Tensor? D=None, "
           "Tensor? z=None, Tensor? delta_bias=None, Tensor? initial_state=None, "
           "bool delta_softplus=False, bool return_last_state=False) -> Tensor[]")

_BWD_SCHEMA = ("(Tensor u, Tensor delta, Tensor A, Tensor B, Tensor C, Tensor? D, Tensor? z, "
               "Tensor? delta_bias, Tensor? initial_state, Tensor? out, Tensor dout, "
               "Tensor? dlast, bool delta_softplus) -> Tensor[]")

fwd_custom_op = None  # ssmtune::selective_scan_fwd (custom_op)
fwd_library_op = None  # ssmtune::selective_scan_fwd_lib (Library define + impl)
bwd_custom_op = None  # ssmtune::selective_scan_bwd (custom_op)
bwd_library_op = None  # ssmtune::selective_scan_bwd_lib (Library define + impl)
_library = None


def _register():
    global fwd_custom_op, fwd_library_op, bwd_custom_op, bwd_library_op, _library

    @torch.library.custom_op("ssmtune::selective_scan_bwd", mutates_args=(), device_types="cuda")
    def selective_scan_bwd_op(u: torch.Tensor, delta: torch.Tensor, A: torch.Tensor,
                              B: torch.Tensor, C: torch.Tensor, D: Optional[torch.Tensor],
                              z: Optional[torch.Tensor], delta_bias: Optional[torch.Tensor],
                              initial_state: Optional[torch.Tensor], out: Optional[torch.Tensor],
                              dout: torch.Tensor, dlast: Optional[torch.Tensor],
                              delta_softplus: bool) -> List[torch.Tensor]:
        return _bwd_cuda(u, delta, A, B, C, D, z, delta_bias, initial_state, out, dout, dlast,
                         delta_softplus)

    selective_scan_bwd_op.register_fake(_bwd_fake)

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
    selective_scan_fwd_op.register_autograd(_make_backward(lambda: bwd_custom_op),
                                           setup_context=_setup_context)

    _library = torch.library.Library("ssmtune", "FRAGMENT")
    _library.define("selective_scan_bwd_lib" + _BWD_SCHEMA)
    _library.impl("selective_scan_bwd_lib", _bwd_cuda, "CUDA")
    torch.library.register_fake("ssmtune::selective_scan_bwd_lib", _bwd_fake, lib=_library)
    _library.define("selective_scan_fwd_lib" + _SCHEMA)
    _library.impl("selective_scan_fwd_lib", _fwd_cuda, "CUDA")
    torch.library.register_fake("ssmtune::selective_scan_fwd_lib", _fwd_fake, lib=_library)
    torch.library.register_autograd("ssmtune::selective_scan_fwd_lib",
                                    _make_backward(lambda: bwd_library_op),
                                    setup_context=_setup_context, lib=_library)
    fwd_custom_op = torch.ops.ssmtune.selective_scan_fwd.default
    fwd_library_op = torch.ops.ssmtune.selective_scan_fwd_lib.default
    bwd_custom_op = torch.ops.ssmtune.selective_scan_bwd.default
    bwd_library_op = torch.ops.ssmtune.selective_scan_bwd_lib.default


if torch is not None:
    class _EagerScan(torch.autograd.Function):
        """The eager training path: the same CUDA implementations and the same
        saved tensors and backward bookkeeping as the registered ops' autograd
        formula, without the dispatcher and custom_op's Python wrapper around
        each direction (about 0.4 ms of host time per training step, which
        bounded small shapes: bench/NOTES.md, host cost)."""

        @staticmethod
        def forward(ctx, u, delta, A, B, C, D, z, delta_bias, initial_state, delta_softplus,
                    return_last_state):
            saved = []
            outs = _fwd_cuda(u, delta, A, B, C, D, z, delta_bias, initial_state,
                             delta_softplus, return_last_state, saved)
            _setup_context(ctx, (u, delta, A, B, C, D, z, delta_bias, initial_state,
                                 delta_softplus, return_last_state), outs,
                           saved[0] if saved else None)
            return tuple(outs)

        @staticmethod
        def backward(ctx, *grads):
            return _backward_impl(_bwd_cuda, ctx, grads, takes_states=True)


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


def _as_fp32(name, t):
    """A weight in fp32, as mamba_ssm uses it. A complex one is refused: the cast would drop
    its imaginary part and the scan would run on the real part alone."""
    if t.is_complex():
        raise TypeError(f"ssmtune: {name} is complex ({t.dtype}); ssmtune runs the real-valued "
                        "selective scan (mamba_ssm's complex variant is not supported)")
    return t.float()


def selective_scan_fn(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False,
                      return_last_state=False):
    """Drop-in for mamba_ssm.ops.selective_scan_interface.selective_scan_fn:
    a last dimension with a stride other than 1 is made contiguous, A, D and
    delta_bias are used in fp32, 3-D B/C are one group. Returns out (out_z
    when z is given), and (out, last_state) with return_last_state.
    Differentiable like mamba's: gradients for u, delta, A, B, C, D, z and
    delta_bias in their dtypes and shapes (3-D B/C get 3-D gradients); a
    gradient through last_state flows into the backward too (mamba's ignores
    it)."""
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
        A = _as_fp32("A", A)
    if D is not None and D.dtype != _FLOAT32:
        D = _as_fp32("D", D)
    if delta_bias is not None and delta_bias.dtype != _FLOAT32:
        delta_bias = _as_fp32("delta_bias", delta_bias)
    if z is not None and z.stride(-1) != 1:
        z = z.contiguous()
    if EAGER_FAST_PATH and not _is_compiling() and type(u) is _Tensor and not _dispatch_modes():
        if _grad_enabled() and _any_requires_grad(u, delta, A, B, C, D, z, delta_bias):
            outs = _EagerScan.apply(u, delta, A, B, C, D, z, delta_bias, None, delta_softplus,
                                    return_last_state)
        else:
            outs = _fwd_cuda(u, delta, A, B, C, D, z, delta_bias, None, delta_softplus,
                             return_last_state)
    else:
        outs = _op(u, delta, A, B, C, D, z, delta_bias, None, delta_softplus, return_last_state)
    out = outs[1] if z is not None else outs[0]
    return (out, outs[-1]) if return_last_state else out
