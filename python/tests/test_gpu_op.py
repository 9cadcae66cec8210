"""The registered op on the GPU (torch >= 2.4 with CUDA): both registration
styles against the ctypes path (the same kernels: equal outputs) and the
fp64 reference; mamba's argument forms; torch.compile(fullgraph=True); CUDA
graph capture and replay, plain and with a config that needs scratch; the
descriptor cache; errors."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import ssmtune
from ssmtune import _ctypes_path, ops
from gpu_support import as_groups, capture_and_check, make_inputs
from scan_reference import reference

if not ops.HAS_TORCH_OPS:
    pytest.skip(f"torch {torch.__version__} lacks torch.library.custom_op", allow_module_level=True)

TOL = {torch.float32: (6e-4, 2e-3), torch.float16: (3e-3, 5e-3), torch.bfloat16: (3e-2, 5e-2)}
STYLES = {"custom_op": lambda: ops.fwd_custom_op, "library": lambda: ops.fwd_library_op}
FLAGS = {"plain": {}, "all": dict(dz=True, bias=True)}


def run_op(op, x, softplus, last):
    u, delta, A, B, C, D, z, delta_bias, h0 = x
    return op(u, delta, A, B, C, D, z, delta_bias, h0, softplus, last)


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("flags", FLAGS)
@pytest.mark.parametrize("last", [False, True])
def test_op_matches_ctypes_path_and_reference(style, dtype, flags, last):
    x = make_inputs(2, 48, 300, 16, dtype, groups=2, **FLAGS[flags], salt=(style,))
    u, delta, A, B, C, D, z, delta_bias, _ = x
    softplus = flags == "all"
    outs = run_op(STYLES[style](), x, softplus, last)
    assert len(outs) == 1 + (z is not None) + last
    ref_out, ref_z, ref_last = _ctypes_path.selective_scan_fwd(u, delta, A, B, C, D, z, delta_bias,
                                                              softplus, last)
    torch.testing.assert_close(outs[0], ref_out, rtol=0, atol=0)  # same config, same kernel
    if z is not None:
        torch.testing.assert_close(outs[1], ref_z, rtol=0, atol=0)
    if last:
        torch.testing.assert_close(outs[-1], ref_last, rtol=0, atol=0)
    want = reference(u, delta, A, B, C, D, z, delta_bias, softplus, last)
    want, want_last = want if last else (want, None)
    rtol, atol = TOL[dtype]
    torch.testing.assert_close(outs[1 if z is not None else 0].double(), want, rtol=rtol, atol=atol)
    if last:
        assert outs[-1].dtype == torch.float32
        torch.testing.assert_close(outs[-1].double(), want_last, rtol=6e-4, atol=2e-3)


def test_mamba_argument_forms():
    """3-D B/C, a last dimension with stride 2, fp16 D and delta_bias, and
    return_last_state: mamba's selective_scan_fn accepts all of these."""
    u, delta, A, B, C, D, z, delta_bias, _ = make_inputs(2, 32, 129, 8, torch.bfloat16,
                                                         three_d=True, dz=True, bias=True)
    wide = torch.empty(2, 32, 129 * 2, device="cuda", dtype=u.dtype)
    wide[..., ::2] = u
    u_strided = wide[..., ::2]
    assert u_strided.stride(-1) == 2
    out, last = ssmtune.selective_scan_fn(u_strided, delta, A.half(), B, C, D.half(), z,
                                          delta_bias.half(), True, True)
    want, want_last = reference(u, delta, A.half().float(), as_groups(B), as_groups(C),
                                D.half().float(), z, delta_bias.half().float(), True, True)
    torch.testing.assert_close(out.double(), want, rtol=3e-2, atol=5e-2)
    torch.testing.assert_close(last.double(), want_last, rtol=6e-4, atol=2e-3)


def test_constant_bc_and_initial_state():
    u, delta, A, _, _, _, _, _, h0 = make_inputs(1, 16, 70, 4, torch.float32, h0=True)
    B = torch.randn(16, 4, device="cuda")
    C = torch.randn(16, 4, device="cuda")
    out, _, last = ssmtune.selective_scan_fwd(u, delta, A, B, C, return_last_state=True,
                                              initial_state=h0)
    for d in (0, 7, 15):  # constant B/C: one channel at a time against the reference
        Bd = B[d][None, None, :, None].expand(1, 1, 4, 70)
        Cd = C[d][None, None, :, None].expand(1, 1, 4, 70)
        want, want_last = reference(u[:, d:d + 1], delta[:, d:d + 1], A[d:d + 1], Bd, Cd,
                                    last=True, h0=h0[:, d:d + 1])
        torch.testing.assert_close(out[:, d:d + 1].double(), want, rtol=6e-4, atol=2e-3)
        torch.testing.assert_close(last[:, d:d + 1].double(), want_last, rtol=6e-4, atol=2e-3)


def test_plans_are_cached_per_layout():
    x = make_inputs(2, 16, 64, 4, torch.float32)
    run_op(ops.fwd_custom_op, x, False, False)
    n = len(ops._cache)
    for _ in range(3):
        run_op(ops.fwd_custom_op, make_inputs(2, 16, 64, 4, torch.float32, salt=(_,)), False,
               False)
    assert len(ops._cache) == n
    u, delta, A, B, C, *_ = x
    sliced = torch.randn(3, 16, 64, device="cuda")[:2]  # the same strides: the same plan
    run_op(ops.fwd_custom_op, (sliced, delta, A, B, C, None, None, None, None), False, False)
    assert len(ops._cache) == n
    strided = torch.randn(2, 32, 64, device="cuda")[:, ::2]
    out = run_op(ops.fwd_custom_op, (strided, delta, A, B, C, None, None, None, None), False,
                 False)
    assert len(ops._cache) == n + 1
    torch.testing.assert_close(out[0].double(), reference(strided, delta, A, B, C),
                               rtol=6e-4, atol=2e-3)


@pytest.mark.parametrize("style", STYLES)
def test_compile_fullgraph(style):
    import torch._dynamo
    torch._dynamo.reset()
    op = STYLES[style]()
    dim, N, L = 32, 8, 96
    proj = torch.nn.Linear(dim, dim, device="cuda")
    A = -0.5 * torch.rand(dim, N, device="cuda")
    D = torch.randn(dim, device="cuda")

    def block(x, B, C, z):
        u = proj(x.transpose(1, 2)).transpose(1, 2).contiguous()
        delta = torch.nn.functional.softplus(u)
        if style == "custom_op":
            y = ssmtune.selective_scan_fn(u, delta, A, B, C, D, z, None, False)
        else:
            y = op(u, delta, A, B, C, D, z, None, None, False, False)[1]
        return (y * 2).sum(-1)

    graphs = []

    def recorder(gm, example_inputs):
        graphs.append(str(gm.graph))
        return gm.forward

    x = torch.randn(2, dim, L, device="cuda")
    B, C = torch.randn(2, N, L, device="cuda"), torch.randn(2, N, L, device="cuda")
    z = torch.randn(2, dim, L, device="cuda")
    with torch.no_grad():
        want = block(x, B, C, z)
        got_rec = torch.compile(block, backend=recorder, fullgraph=True)(x, B, C, z)
        got = torch.compile(block, fullgraph=True)(x, B, C, z)
    assert len(graphs) == 1
    assert "ssmtune.selective_scan_fwd" in graphs[0]
    torch.testing.assert_close(got_rec, want, rtol=0, atol=0)
    torch.testing.assert_close(got, want, rtol=1e-3, atol=1e-3)  # inductor fuses softplus


def test_eager_fast_path_equals_the_op(monkeypatch):
    u, delta, A, B, C, D, z, delta_bias, _ = make_inputs(2, 32, 100, 16, torch.float16,
                                                         three_d=True, dz=True, bias=True)
    fast = ssmtune.selective_scan_fn(u, delta, A, B, C, D, z, delta_bias, True, True)
    monkeypatch.setattr(ops, "EAGER_FAST_PATH", False)
    through_op = ssmtune.selective_scan_fn(u, delta, A, B, C, D, z, delta_bias, True, True)
    for a, b in zip(fast, through_op):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


@pytest.mark.parametrize("style", list(STYLES) + ["eager fast path"])
@pytest.mark.parametrize("flags", FLAGS)
def test_cuda_graph_capture_and_replay(style, flags):
    softplus = flags == "all"
    if style == "eager fast path":
        def fn(u, delta, A, B, C, D, z, delta_bias, h0):
            return ssmtune.selective_scan_fn(u, delta, A, B, C, D, z, delta_bias, softplus, True)
    else:
        op = STYLES[style]()

        def fn(*x):
            return run_op(op, x, softplus, True)

    static = make_inputs(2, 64, 200, 16, torch.bfloat16, **FLAGS[flags])
    outs = capture_and_check(
        fn, static, lambda r: make_inputs(2, 64, 200, 16, torch.bfloat16, **FLAGS[flags],
                                          salt=("replay", r)))
    u, delta, A, B, C, D, z, delta_bias, _ = static
    want, want_last = reference(u, delta, A, B, C, D, z, delta_bias, softplus, True)
    torch.testing.assert_close(outs[-2].double(), want, rtol=3e-2, atol=5e-2)  # out or out_z
    torch.testing.assert_close(outs[-1].double(), want_last, rtol=6e-4, atol=2e-3)


def test_a_new_layout_inside_capture_says_to_warm_up():
    x = make_inputs(1, 24, 77, 4, torch.float32)  # a layout no other test uses
    g = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="new inside a CUDA graph capture"):
        with torch.cuda.graph(g):
            run_op(ops.fwd_custom_op, x, False, False)
    run_op(ops.fwd_custom_op, x, False, False)  # outside capture it prepares
    torch.cuda.synchronize()


@pytest.mark.parametrize("config", ["lookback.K128.D32.fp32.t64.i1.s2.fast",
                                    "multipass.K128.D32.fp32.t64.i1.s2.fast"])
def test_cuda_graph_with_scratch(config):
    """A config with carries (and look-back flags) takes its scratch from
    torch's allocator: captured, replayed, equal to eager and the reference.
    In a child process: the runtime reads $SSMTUNE_FORCE_CONFIG once."""
    child = Path(__file__).with_name("gpu_capture_child.py")
    env = dict(os.environ, SSMTUNE_FORCE_CONFIG=config, SSMTUNE_DB="")
    env["PYTHONPATH"] = os.pathsep.join([str(child.parent.parent), str(child.parent)] +
                                        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    r = subprocess.run([sys.executable, str(child)], env=env, capture_output=True, text=True,
                       timeout=600)
    print(r.stdout, r.stderr)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "scratch bytes" in r.stdout and "capture ok" in r.stdout


def test_errors_name_the_argument():
    u, delta, A, B, C, *_ = make_inputs(1, 8, 32, 4, torch.float32)
    with pytest.raises(ValueError, match="A is on cpu"):
        ops.fwd_custom_op(u, delta, A.cpu(), B, C)
    with pytest.raises(TypeError, match="unsupported dtype torch.float64"):
        ops.fwd_custom_op(u.double(), delta.double(), A, B.double(), C.double())
    with pytest.raises(ValueError, match="delta: expected shape"):
        ops.fwd_custom_op(u, delta[:, :, :16], A, B, C)
    with pytest.raises(ValueError, match="A: dtype fp16"):
        ops.fwd_custom_op(u, delta, A.half(), B, C)
    # A complex A is refused, not cast to its real part (mamba_ssm's complex variant).
    with pytest.raises(TypeError, match="A is complex"):
        ops.selective_scan_fn(u, delta, A.to(torch.complex64), B, C)


@pytest.mark.parametrize("style", STYLES)
def test_backward_through_each_style(style):
    """Each forward op's autograd formula runs its style's backward op
    (test_gpu_bwd.py checks the values)."""
    u, delta, A, B, C, *_ = make_inputs(1, 4, 8, 2, torch.float32)
    u.requires_grad_(True)
    out = STYLES[style]()(u, delta, A, B, C)[0]
    out.sum().backward()
    assert u.grad.shape == u.shape and torch.isfinite(u.grad).all()
