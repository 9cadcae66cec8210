"""The drop-in (through the registered op) against an fp64 torch reference
over mamba_ssm's own test grid (seqlen 128 to 4096, groups 1 and 2, flags on
and off, fp32/fp16/bf16), with mamba_ssm's tolerances. Needs torch with CUDA."""
import itertools
import zlib

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import ssmtune
from scan_reference import reference

TOL = {torch.float32: (6e-4, 2e-3), torch.float16: (3e-3, 5e-3), torch.bfloat16: (3e-2, 5e-2)}


GRID = list(itertools.product(
    [torch.float32, torch.float16, torch.bfloat16],  # dtype
    [128, 1000, 4096],                               # seqlen
    [1, 2],                                          # groups
    [False, True],                                   # has D and z
    [False, True],                                   # delta_bias and softplus
    [False, True],                                   # return_last_state
))


@pytest.mark.parametrize("dtype,seqlen,groups,dz,bias,last", GRID)
def test_drop_in_matches_fp64(dtype, seqlen, groups, dz, bias, last):
    seed = zlib.crc32(repr((str(dtype), seqlen, groups, dz, bias, last)).encode())  # not hash()
    print(f"seed {seed}")
    torch.manual_seed(seed)
    batch, dim, N = 2, 24, 16
    dev = "cuda"
    u = torch.randn(batch, dim, seqlen, device=dev, dtype=dtype)
    delta = (0.5 * torch.rand(batch, dim, seqlen, device=dev)).to(dtype)
    A = -0.5 * torch.rand(dim, N, device=dev)
    B = torch.randn(batch, groups, N, seqlen, device=dev, dtype=dtype)
    C = torch.randn(batch, groups, N, seqlen, device=dev, dtype=dtype)
    if groups == 1 and not dz:
        B, C = B[:, 0], C[:, 0]  # mamba's 3-D B/C
    D = torch.randn(dim, device=dev) if dz else None
    z = torch.randn(batch, dim, seqlen, device=dev, dtype=dtype) if dz else None
    delta_bias = 0.5 * torch.rand(dim, device=dev) if bias else None
    got = ssmtune.selective_scan_fn(u, delta, A, B, C, D, z, delta_bias, bias, last)
    Bf = B if B.dim() == 4 else B[:, None]
    Cf = C if C.dim() == 4 else C[:, None]
    ref = reference(u, delta, A, Bf, Cf, D, z, delta_bias, bias, last)
    rtol, atol = TOL[dtype]
    if last:
        got, got_last = got
        ref, ref_last = ref
        torch.testing.assert_close(got_last.double(), ref_last, rtol=6e-4, atol=2e-3)
    assert got.dtype == dtype and got.shape == u.shape
    torch.testing.assert_close(got.double(), ref, rtol=rtol, atol=atol)
    assert torch.isfinite(got).all()


def test_backward_runs():
    """The drop-in is differentiable (test_gpu_bwd.py checks the values)."""
    g = torch.Generator(device="cuda").manual_seed(zlib.crc32(b"test_backward_runs"))
    u = torch.randn(1, 4, 8, device="cuda", generator=g, requires_grad=True)
    delta = 0.5 * torch.rand(1, 4, 8, device="cuda", generator=g)
    A = -0.5 * torch.rand(4, 2, device="cuda", generator=g)
    B = torch.randn(1, 2, 8, device="cuda", generator=g)
    C = torch.randn(1, 2, 8, device="cuda", generator=g)
    out = ssmtune.selective_scan_fn(u, delta, A, B, C)
    out.sum().backward()
    assert u.grad.shape == u.shape and torch.isfinite(u.grad).all()


def test_explain_names_the_rule():
    u = torch.randn(2, 8, 64, device="cuda")
    text = ssmtune.explain(u, 0.5 * torch.rand_like(u), -torch.rand(8, 4, device="cuda"),
                           torch.randn(2, 4, 64, device="cuda"), torch.randn(2, 4, 64, device="cuda"))
    assert any(r in text for r in ("[exact]", "[exact-class]", "[nearest]", "[default]"))
