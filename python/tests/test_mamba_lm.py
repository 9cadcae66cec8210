"""The Mamba language model example on the CPU with its pure-PyTorch scan (no GPU, no
ssmtune kernels; skipped without torch): the reference scan against the fp64 one of the GPU
suites, prefill + step decoding against a full forward, and lockstep training of two copies."""
import copy
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from scan_reference import reference  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import mamba_lm  # noqa: E402

SEED = 3
CFG = mamba_lm.Config(vocab=8, d_model=16, n_layers=2, d_state=4)


@pytest.mark.parametrize("groups,three_d,flags,last", [
    (1, True, False, False), (1, True, True, True), (2, False, True, True),
    (1, False, True, False)])
def test_reference_scan_matches_fp64(groups, three_d, flags, last):
    g = torch.Generator().manual_seed(SEED)
    batch, dim, L, n = 2, 4, 9, 3
    u = torch.randn(batch, dim, L, generator=g)
    delta = 0.5 * torch.rand(batch, dim, L, generator=g)
    A = -0.5 * torch.rand(dim, n, generator=g)
    B = torch.randn(batch, groups, n, L, generator=g)
    C = torch.randn(batch, groups, n, L, generator=g)
    D = torch.randn(dim, generator=g) if flags else None
    z = torch.randn(batch, dim, L, generator=g) if flags else None
    bias = 0.5 * torch.rand(dim, generator=g) if flags else None
    args = (u, delta, A, B[:, 0] if three_d else B, C[:, 0] if three_d else C, D, z, bias)
    got = mamba_lm.reference_scan(*args, delta_softplus=flags, return_last_state=last)
    want = reference(u, delta, A, B, C, D, z, bias, softplus=flags, last=last)
    for x, w in zip(got if last else [got], want if last else [want]):
        assert x.dtype == torch.float32
        torch.testing.assert_close(x.double(), w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("prompt_len", [1, 2, 7])
def test_step_decoding_matches_forward(prompt_len):
    torch.manual_seed(SEED)
    model = mamba_lm.MambaLM(CFG, mamba_lm.reference_scan).eval()
    gen = torch.Generator().manual_seed(SEED)
    tokens, _ = mamba_lm.make_batch(gen, 3, 12, CFG.vocab, 4, "cpu")
    err = mamba_lm.decode_matches_forward(model, tokens, prompt_len, "cpu")
    assert err < 1e-5


def test_lockstep_training_of_two_copies():
    torch.manual_seed(SEED)
    a = mamba_lm.MambaLM(CFG, mamba_lm.reference_scan)
    b = copy.deepcopy(a)
    curves = mamba_lm.train([a, b], 3, batch=2, seqlen=8, period=4, seed=SEED, device="cpu")
    assert curves[0] == curves[1] and len(curves[0]) == 3
    assert mamba_lm.max_rel_diff(*curves) == 0.0
    new, _, _ = mamba_lm.generate(a, torch.zeros(2, 5, dtype=torch.long), 4, "cpu")
    assert new.shape == (2, 4)
