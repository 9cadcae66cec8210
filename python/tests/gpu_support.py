"""Helpers of the Python GPU suites: seeded random inputs (the seed is
printed so a failure can be replayed with SSMTUNE_TEST_SEED), and CUDA graph
capture and replay checked against eager calls."""
import os
import random
import zlib

import torch

_SEED = int(os.environ.get("SSMTUNE_TEST_SEED", "0")) or random.SystemRandom().randrange(1, 2**31)
print(f"ssmtune GPU tests: SSMTUNE_TEST_SEED={_SEED}")


def seed(*salt):
    """A per-test seed from the run's seed and the test's parameters."""
    return (_SEED + zlib.crc32(repr(salt).encode())) % 2**31


def make_inputs(batch, dim, seqlen, dstate, dtype, *, groups=1, three_d=False, dz=False,
                bias=False, h0=False, salt=()):
    """u, delta, A, B, C, D, z, delta_bias, h0 on cuda (absent: None)."""
    g = torch.Generator(device="cuda").manual_seed(seed(batch, dim, seqlen, dstate, dtype,
                                                        groups, three_d, dz, bias, h0, *salt))
    dev = "cuda"

    def randn(*shape, dt=dtype):
        return torch.randn(*shape, device=dev, generator=g).to(dt)

    def rand(*shape, dt=dtype):
        return torch.rand(*shape, device=dev, generator=g).to(dt)

    u = randn(batch, dim, seqlen)
    delta = 0.5 * rand(batch, dim, seqlen)
    A = -0.5 * rand(dim, dstate, dt=torch.float32)
    if three_d:
        B, C = randn(batch, dstate, seqlen), randn(batch, dstate, seqlen)
    else:
        B, C = randn(batch, groups, dstate, seqlen), randn(batch, groups, dstate, seqlen)
    D = randn(dim, dt=torch.float32) if dz else None
    z = randn(batch, dim, seqlen) if dz else None
    delta_bias = 0.5 * rand(dim, dt=torch.float32) if bias else None
    h = randn(batch, dim, dstate, dt=torch.float32) if h0 else None
    return u, delta, A, B, C, D, z, delta_bias, h


def as_groups(B):
    return B if B.dim() == 4 else B[:, None]


def capture_and_check(fn, static, fresh_inputs, rounds=2):
    """Warms up on a side stream, captures fn(*static), then for each round
    copies fresh_inputs(round) into the static inputs, poisons the outputs,
    replays, and checks the replay equals an eager call. Returns the graph's
    outputs (holding the last round's results)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            fn(*static)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_out = fn(*static)
    for r in range(rounds):
        for dst, src in zip(static, fresh_inputs(r)):
            if dst is not None:
                dst.copy_(src)
        for o in static_out:
            o.fill_(float("nan"))  # the replay must write every element
        g.replay()
        torch.cuda.synchronize()
        want = fn(*static)
        for got, w in zip(static_out, want):
            torch.testing.assert_close(got, w, rtol=0, atol=0)
    return static_out
