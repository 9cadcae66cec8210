"""ssmtune's selective_scan_fn through torch.autograd on mamba_ssm's own test
grid (tests/ops/test_selective_scan.py: batch 2, dim 4, dstate 8; D, z,
delta_bias, softplus and last_state on; groups 1 and 2; fp32/fp16/bf16; its
seqlens, with the ones it comments out and odd ones added), scored with
mamba_ssm's tolerances per gradient against the float64 reference:
    rtol, atol = 6e-4, 2e-3 (fp32), 3e-3, 5e-3 (fp16), 3e-2, 5e-2 (bf16)
    rtolw, atolw = max(1e-3, rtol), max(1e-3, atol)        (z is given)
    du: 2 rtol, 2 atol;  ddelta: 5 rtol, 10 atol;  dA: rtolw, 5 atolw;
    variable dB/dC: rtol, atol; constant dB/dC, dD, dz, ddelta_bias: rtolw, atolw
The reference gradients are rounded to each gradient's dtype first, as
mamba's test compares against a reference computed on tensors of that dtype.
mamba_ssm's own kernel misses these on dA and dB in about 6% of its fp16/bf16
cases (issue 15). A miss passes only when that gradient's rel L2 error is
within its floor-based budget (grad_check.py, docs/accuracy.md). When
mamba_ssm imports, its kernel runs on the same inputs and both are reported;
the last test prints the totals."""
import itertools

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import ssmtune
from grad_check import GRAD_NAMES, budget, case_seed, rel_l2
from scan_reference import reference_grads

try:
    from mamba_ssm.ops.selective_scan_interface import selective_scan_fn as mamba_scan
except Exception:  # noqa: BLE001 - any import failure means: not available
    mamba_scan = None

TOL = {torch.float32: (6e-4, 2e-3), torch.float16: (3e-3, 5e-3), torch.bfloat16: (3e-2, 5e-2)}
DT_NAMES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}
SEQLENS = [1, 7, 8, 16, 32, 64, 128, 129, 256, 372, 512, 784, 1000, 1024, 1134, 2048, 4096, 4097]
TOTALS = {"cases": 0, "ssmtune_misses": 0, "mamba_cases": 0, "mamba_misses": 0}
MISSES = []


def tolerances(dtype, var_b, var_c, has_z):
    rtol, atol = TOL[dtype]
    rtolw, atolw = 1e-3, 1e-3
    if has_z:
        rtolw, atolw = max(rtolw, rtol), max(atolw, atol)
    return {"du": (2 * rtol, 2 * atol), "ddelta": (5 * rtol, 10 * atol), "dA": (rtolw, 5 * atolw),
            "dB": (rtol, atol) if var_b else (rtolw, atolw),
            "dC": (rtol, atol) if var_c else (rtolw, atolw),
            "dD": (rtolw, atolw), "dz": (rtolw, atolw), "ddelta_bias": (rtolw, atolw)}


def make_inputs(name, dtype, seqlen, groups, var_b, var_c):
    seed = case_seed(name)
    g = torch.Generator(device="cuda").manual_seed(seed)
    batch, dim, dstate = 2, 4, 8

    def randn(*shape, dt=torch.float32):
        return torch.randn(*shape, device="cuda", generator=g).to(dt)

    var_shape = (batch, dstate, seqlen) if groups == 1 else (batch, groups, dstate, seqlen)
    A = -0.5 * torch.rand(dim, dstate, device="cuda", generator=g)
    B = randn(*var_shape, dt=dtype) if var_b else randn(dim, dstate)
    C = randn(*var_shape, dt=dtype) if var_c else randn(dim, dstate)
    D = randn(dim)
    z = randn(batch, dim, seqlen, dt=dtype)
    delta_bias = 0.5 * torch.rand(dim, device="cuda", generator=g)
    u = randn(batch, dim, seqlen, dt=dtype)
    delta = (0.5 * torch.rand(batch, dim, seqlen, device="cuda", generator=g)).to(dtype)
    dout = randn(batch, dim, seqlen, dt=dtype)
    return seed, [u, delta, A, B, C, D, z, delta_bias], dout


def grads_of(fn, inputs, dout):
    leaves = [x.detach().clone().requires_grad_() for x in inputs]
    u, delta, A, B, C, D, z, delta_bias = leaves
    out, last = fn(u, delta, A, B, C, D, z=z, delta_bias=delta_bias, delta_softplus=True,
                   return_last_state=True)
    out.backward(dout)
    return [x.grad for x in leaves]


def score(got, ref, tols):
    """Per gradient: (allclose under mamba's tolerance, rel L2, budget)."""
    res = {}
    for name, g, r in zip(GRAD_NAMES, got, ref):
        rtol, atol = tols[name]
        close = torch.allclose(g.double(), r.to(g.dtype).double(), rtol=rtol, atol=atol)
        res[name] = (close, rel_l2(g, r), budget(name, r, g.dtype))
    return res


def _grid():
    for dtype, seqlen, groups in itertools.product(TOL, SEQLENS, [1, 2]):
        yield dtype, seqlen, groups, True, True
    for dtype, seqlen, (var_b, var_c) in itertools.product(TOL, [128, 1134],
                                                           [(False, True), (True, False),
                                                            (False, False)]):
        yield dtype, seqlen, 1, var_b, var_c


@pytest.mark.parametrize("dtype,seqlen,groups,var_b,var_c", list(_grid()))
def test_mamba_grid(dtype, seqlen, groups, var_b, var_c):
    name = (f"mamba.{DT_NAMES[dtype]}.l{seqlen}.g{groups}" + ".constB" * (not var_b)
            + ".constC" * (not var_c))
    seed, inputs, dout = make_inputs(name, dtype, seqlen, groups, var_b, var_c)
    tols = tolerances(dtype, var_b, var_c, True)
    ref = reference_grads(inputs + [None], True, dout)[:8]
    ours = score(grads_of(ssmtune.selective_scan_fn, inputs, dout), ref, tols)
    TOTALS["cases"] += 1
    line = f"{name} seed {seed}: ssmtune " + " ".join(
        f"{k} {'ok' if c else 'MISS'} {e:.1e}" for k, (c, e, _) in ours.items())
    theirs = None
    if mamba_scan is not None:
        try:
            theirs = score(grads_of(mamba_scan, inputs, dout), ref, tols)
        except RuntimeError as e:  # its kernel's own limits: reported, not ours to judge
            line += f" | mamba_ssm error: {str(e).splitlines()[0]}"
    if theirs is not None:
        TOTALS["mamba_cases"] += 1
        TOTALS["mamba_misses"] += any(not c for c, _, _ in theirs.values())
        line += " | mamba_ssm " + " ".join(
            f"{k} {'ok' if c else 'MISS'} {e:.1e}" for k, (c, e, _) in theirs.items())
    print(line)
    bad = []
    for k, (close, err, bud) in ours.items():
        if close:
            continue
        MISSES.append(f"{name} {k}: rel L2 {err:.2e} (budget {bud:.2e}"
                      + (f", mamba_ssm {theirs[k][1]:.2e})" if theirs else ")"))
        if not err <= bud:
            bad.append(f"{k}: outside mamba's tolerance and rel L2 {err:.3e} > budget {bud:.3e}")
    TOTALS["ssmtune_misses"] += any(not c for c, _, _ in ours.values())
    assert not bad, bad


def test_mamba_grid_summary(capsys):
    """Prints the totals of the grid above (run after it, in file order)."""
    with capsys.disabled():
        print(f"\nmamba grid: {TOTALS['cases']} cases; ssmtune outside mamba's tolerances in "
              f"{TOTALS['ssmtune_misses']} (each within its rel L2 budget)"
              + (f"; mamba_ssm outside them in {TOTALS['mamba_misses']} of "
                 f"{TOTALS['mamba_cases']}" if mamba_scan is not None else
                 "; mamba_ssm not importable, not run"))
        for m in MISSES:
            print("  ssmtune miss: " + m)
