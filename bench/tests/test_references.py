"""The benchmarks' fp64 references on the CPU: compare.reference_fp64 (blocked forward, last
state, checkpoints) and grad_reference.forward_backward_fp64 (blocked backward) against
autograd through python/tests/scan_reference.py, over flags, groups, a last-state gradient,
softplus past its threshold and several time blocks."""
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

BENCH = Path(__file__).resolve().parent.parent
for p in (BENCH, BENCH.parent / "python" / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import compare  # noqa: E402
import grad_reference  # noqa: E402
import scan_reference  # noqa: E402

SEED = 1234


def make(batch, dim, seqlen, dstate, groups, flags, seed=SEED, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    print(f"seed {seed}")
    inp = compare.Inputs(
        u=torch.randn(batch, dim, seqlen, generator=g).to(dtype),
        delta=(0.5 * torch.rand(batch, dim, seqlen, generator=g)).to(dtype),
        A=-0.5 * torch.rand(dim, dstate, generator=g),
        B=torch.randn(batch, groups, dstate, seqlen, generator=g).to(dtype),
        C=torch.randn(batch, groups, dstate, seqlen, generator=g).to(dtype),
    )
    if flags:
        inp.D = torch.randn(dim, generator=g)
        inp.z = torch.randn(batch, dim, seqlen, generator=g).to(dtype)
        inp.delta_bias = 0.5 * torch.rand(dim, generator=g)
        inp.delta_softplus = True
    dout = torch.randn(batch, dim, seqlen, generator=g).to(dtype)
    return inp, dout


@pytest.fixture(params=[1, 3, 1024], ids=["block1", "block3", "one-block"])
def block_steps(request, monkeypatch):
    monkeypatch.setattr(compare, "REF_MAX_BLOCK_STEPS", request.param)
    return request.param


def autograd_reference(inp, dout, dlast=None):
    inputs = (inp.u, inp.delta, inp.A, inp.B, inp.C, inp.D, inp.z, inp.delta_bias, None)
    out, last = scan_reference.reference(inp.u, inp.delta, inp.A, inp.B, inp.C, inp.D, inp.z,
                                         inp.delta_bias, inp.delta_softplus, True)
    grads = scan_reference.reference_grads(inputs, inp.delta_softplus, dout, dlast)
    return out, last, dict(zip(grad_reference.GRADS, grads[:8]))


@pytest.mark.parametrize("flags", [False, True], ids=["plain", "flags"])
@pytest.mark.parametrize("groups", [1, 2])
def test_forward_matches_autograd_reference(block_steps, flags, groups):
    inp, _ = make(2, 4, 11, 3, groups, flags)
    checkpoints = []
    out, last = compare.reference_fp64(inp, last_state=True, checkpoints=checkpoints)
    ref_out, ref_last, _ = autograd_reference(inp, torch.zeros(2, 4, 11))
    assert torch.allclose(out, ref_out, rtol=1e-12, atol=1e-12)
    assert torch.allclose(last, ref_last, rtol=1e-12, atol=1e-12)
    assert [t0 for t0, _ in checkpoints] == list(range(0, 11, min(block_steps, 11)))
    assert torch.equal(checkpoints[0][1], torch.zeros(2, 4, 3, dtype=torch.float64))
    assert torch.equal(compare.reference_fp64(inp), out)  # without the extras, the same out


@pytest.mark.parametrize("flags", [False, True], ids=["plain", "flags"])
@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("with_dlast", [False, True], ids=["", "dlast"])
def test_gradients_match_autograd_reference(block_steps, flags, groups, with_dlast):
    inp, dout = make(2, 4, 13, 3, groups, flags)
    dlast = torch.randn(2, 4, 3, generator=torch.Generator().manual_seed(7)) if with_dlast \
        else None
    got = grad_reference.forward_backward_fp64(inp, dout, dlast)
    ref_out, ref_last, ref = autograd_reference(inp, dout, dlast)
    assert torch.allclose(got["out"], ref_out, rtol=1e-12, atol=1e-12)
    assert torch.allclose(got["last_state"], ref_last, rtol=1e-12, atol=1e-12)
    for name in grad_reference.GRADS:
        if ref[name] is None:
            assert got[name] is None, name
            continue
        assert got[name].shape == ref[name].shape, name
        assert torch.allclose(got[name], ref[name], rtol=1e-10, atol=1e-10), name


def test_softplus_past_its_threshold_has_slope_one():
    inp, dout = make(1, 3, 9, 2, 1, True)
    inp.delta_bias = torch.tensor([25.0, -3.0, 19.5])  # one channel wholly past 20
    inp.A = -0.01 * torch.rand(3, 2, generator=torch.Generator().manual_seed(3))
    got = grad_reference.forward_backward_fp64(inp, dout)
    _, _, ref = autograd_reference(inp, dout)
    for name in ("ddelta", "ddelta_bias", "dA"):
        assert torch.allclose(got[name], ref[name], rtol=1e-10, atol=1e-10), name


def test_half_precision_inputs_are_used_as_rounded():
    inp, dout = make(2, 4, 7, 2, 1, True, dtype=torch.bfloat16)
    got = grad_reference.forward_backward_fp64(inp, dout)
    _, _, ref = autograd_reference(inp, dout)
    for name in grad_reference.GRADS:
        assert torch.allclose(got[name], ref[name], rtol=1e-10, atol=1e-10), name
