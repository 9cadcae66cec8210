"""The ctypes path: selective_scan_fn over ssmtune_selective_scan_fwd, which
validates and selects on every call (about 110 us of host time a call on
the H200 machine). Kept as the reference the fast op is checked against
(the GPU suite), for the host-cost benchmark, and for `explain`, which
reports the selection without compiling."""
import ctypes

from . import _lib

_FP32, _FP16, _BF16 = 0, 1, 2


def _torch():
    try:
        import torch
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ImportError("ssmtune.selective_scan_fn needs PyTorch (import torch failed)") from e
    return torch


def _dtype_code(t):
    torch = _torch()
    codes = {torch.float32: _FP32, torch.float16: _FP16, torch.bfloat16: _BF16}
    if t.dtype not in codes:
        raise TypeError(f"ssmtune: unsupported dtype {t.dtype} (fp32, fp16 or bf16)")
    return codes[t.dtype]


def _tensor(t):
    s = _lib.Tensor()
    if t is None:
        return s
    if not t.is_cuda:
        raise ValueError("ssmtune: tensors must be on a CUDA device")
    if t.dim() > 4:
        raise ValueError(f"ssmtune: rank {t.dim()} tensors are not supported")
    s.data = t.data_ptr()
    s.dtype = _dtype_code(t)
    s.rank = t.dim()
    for i in range(t.dim()):
        s.shape[i] = t.shape[i]
        s.stride[i] = t.stride(i)
    return s


def _prepare(u, delta, A, B, C, D, z, delta_bias):
    def last_contiguous(x):
        return x if x is None or x.stride(-1) == 1 else x.contiguous()
    u, delta, z = last_contiguous(u), last_contiguous(delta), last_contiguous(z)
    B, C = last_contiguous(B), last_contiguous(C)
    if B.dim() == 3:  # (batch, dstate, seqlen): one group
        B = B.unsqueeze(1)
    if C.dim() == 3:
        C = C.unsqueeze(1)
    if B.dim() == 2:
        B = B.float().contiguous()
    if C.dim() == 2:
        C = C.float().contiguous()
    A = A.float().contiguous()
    D = None if D is None else D.float().contiguous()
    delta_bias = None if delta_bias is None else delta_bias.float().contiguous()
    return u, delta, A, B, C, D, z, delta_bias


def _args(u, delta, A, B, C, D, z, delta_bias, delta_softplus, out, out_z, last_state):
    a = _lib.FwdArgs()
    for name, t in (("u", u), ("delta", delta), ("A", A), ("B", B), ("C", C), ("D", D),
                    ("z", z), ("delta_bias", delta_bias), ("out", out), ("out_z", out_z),
                    ("last_state", last_state)):
        setattr(a, name, _tensor(t))
    a.delta_softplus = 1 if delta_softplus else 0
    return a


def _call(u, delta, A, B, C, D, z, delta_bias, delta_softplus, return_last_state):
    """Prepared inputs, fresh outputs and the C arguments of one call."""
    torch = _torch()
    u, delta, A, B, C, D, z, delta_bias = _prepare(u, delta, A, B, C, D, z, delta_bias)
    out = torch.empty_like(u)
    out_z = torch.empty_like(u) if z is not None else None
    last = (torch.empty(u.shape[0], u.shape[1], A.shape[1], device=u.device,
                        dtype=torch.float32) if return_last_state else None)
    args = _args(u, delta, A, B, C, D, z, delta_bias, delta_softplus, out, out_z, last)
    return args, out, out_z, last


def selective_scan_fwd(u, delta, A, B, C, D=None, z=None, delta_bias=None,
                       delta_softplus=False, return_last_state=False):
    """Runs the forward scan; returns (out, out_z or None, last_state or None)."""
    torch = _torch()
    args, out, out_z, last = _call(u, delta, A, B, C, D, z, delta_bias, delta_softplus,
                                   return_last_state)
    stream = torch.cuda.current_stream(u.device).cuda_stream
    rc = _lib.library().ssmtune_selective_scan_fwd(_lib.runtime(), ctypes.byref(args),
                                                   ctypes.c_void_p(stream))
    if rc != 0:
        raise RuntimeError("ssmtune: " + _lib.last_error())
    return out, out_z, last


def explain(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False,
            return_last_state=False):
    """Which config a call with these tensors runs, and which rule picked it."""
    args, _, _, _ = _call(u, delta, A, B, C, D, z, delta_bias, delta_softplus, return_last_state)
    buf = ctypes.create_string_buffer(4096)
    rc = _lib.library().ssmtune_explain(_lib.runtime(), ctypes.byref(args), buf, len(buf))
    if rc != 0:
        raise RuntimeError("ssmtune: " + _lib.last_error())
    return buf.value.decode()


def _make_function():
    torch = _torch()

    class SelectiveScanFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, u, delta, A, B, C, D, z, delta_bias, delta_softplus, return_last_state):
            out, out_z, last = selective_scan_fwd(u, delta, A, B, C, D, z, delta_bias,
                                                  delta_softplus, return_last_state)
            result = out_z if z is not None else out
            return (result, last) if return_last_state else result

        @staticmethod
        def backward(ctx, *grads):
            raise NotImplementedError(
                "ssmtune: the ctypes path is forward-only; ssmtune.selective_scan_fn "
                "(the registered ops) has the backward")

    return SelectiveScanFn


_fn = None


def selective_scan_fn(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False,
                      return_last_state=False):
    """Drop-in for mamba_ssm.ops.selective_scan_interface.selective_scan_fn (forward)."""
    global _fn
    if _fn is None:
        _fn = _make_function()
    return _fn.apply(u, delta, A, B, C, D, z, delta_bias, delta_softplus, return_last_state)
