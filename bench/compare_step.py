#!/usr/bin/env python3
"""Side-by-side benchmark of the decode step on one GPU: ssmtune.selective_state_update and
mamba_ssm's Triton selective_state_update, each called as a Mamba block's step calls it (D, z,
dt_bias, softplus), on the same inputs, in one run.

Both are timed the same way: CUDA events around one call, the L2 flushed before each (the
state, A and the inputs come from HBM, as in a decode loop over many layers), median of
--reps; the events include each call's host time where it is longer than the GPU's. The two
outputs are compared (max abs difference, printed). mamba_ssm is used when importable (its
source on PYTHONPATH is enough: the kernel is Triton); otherwise only ssmtune's times are
printed, and the table says so. The floor: the state read and written once, A, x, dt, z, out
and B, C moved once, at --copy-gbs. Markdown to stdout.

Shapes: BATCHxHEADSxHEADDIMxDSTATE[xGROUPS]:DTYPE[:STATE_DTYPE], comma-separated; the
default covers Mamba-1 decode (d_inner 1536 and 5120, batch 1 to 256) and Mamba-2 (80 heads
of 64, dstate 128).
"""
import argparse
import sys

import torch

from compare_bwd import event_median

DEFAULT_SHAPES = (
    "1x1x1536x16:bf16:fp32",
    "64x1x1536x16:bf16:fp32",
    "1x1x5120x16:bf16:fp32",
    "64x1x5120x16:bf16:fp32",
    "256x1x5120x16:bf16:fp32",
    "64x1x5120x16:bf16:bf16",
    "16x80x64x128x1:bf16:fp32",
    "64x80x64x128x8:bf16:bf16",
)


def parse_shape(item):
    parts = item.split(":")
    dims = [int(x) for x in parts[0].lower().split("x")]
    if len(dims) == 4:
        dims.append(1)
    b, h, p, n, g = dims
    dtype = parts[1] if len(parts) > 1 else "fp32"
    state_dtype = parts[2] if len(parts) > 2 else "fp32"
    return b, h, p, n, g, dtype, state_dtype


DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def make_inputs(shape, seed):
    b, h, p, n, g, dtype, state_dtype = shape
    it, st = DTYPES[dtype], DTYPES[state_dtype]
    gen = torch.Generator(device="cuda").manual_seed(seed)

    def randn(*s, dtype=it):
        return torch.randn(*s, device="cuda", generator=gen).to(dtype)

    state = randn(b, h, p, n, dtype=st)
    x, dt, z = randn(b, h, p), randn(b, h, p), randn(b, h, p)
    A = -torch.rand(h, p, n, device="cuda", generator=gen) - 1.0
    B, C = randn(b, g, n), randn(b, g, n)
    D = torch.randn(h, p, device="cuda", generator=gen)
    dt_bias = torch.rand(h, p, device="cuda", generator=gen) - 4.0
    if h == 1:  # Mamba-1's forms, as its step calls it
        return [state[:, 0].contiguous(), x[:, 0], dt[:, 0], A[0], B[:, 0], C[:, 0], D[0],
                z[:, 0], dt_bias[0]]
    return [state, x, dt, A, B, C, D, z, dt_bias]


def time_ms(call, reps):
    """Median ms of `call` (after 5 warm-up calls), L2 flushed before each."""
    flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size // 4 + 1,
                        device="cuda", dtype=torch.float32)
    for _ in range(5):
        call()
    return event_median(call, flush, reps)


def floor_ms(shape, copy_gbs):
    b, h, p, n, g, dtype, state_dtype = shape
    es, ss = DTYPES[dtype].itemsize, DTYPES[state_dtype].itemsize
    bytes_ = 2 * b * h * p * n * ss + h * p * n * 4 + 4 * b * h * p * es + 2 * b * g * n * es
    return bytes_ / (copy_gbs * 1e9) * 1e3


def run_step(fn, args):
    st = args[0]
    return fn(st, *args[1:6], D=args[6], z=args[7], dt_bias=args[8], dt_softplus=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default=",".join(DEFAULT_SHAPES))
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--copy-gbs", type=float, default=4220)
    a = ap.parse_args()
    import ssmtune
    shapes = [parse_shape(s) for s in a.shapes.split(",") if s.strip()]
    try:
        from mamba_ssm.ops.triton.selective_state_update import selective_state_update as theirs
        mamba = "importable"
    except Exception as e:  # the table says why mamba_ssm is missing
        theirs, mamba = None, f"{type(e).__name__}: {e}"
    print(f"{torch.cuda.get_device_name()}; seed {a.seed}; mamba_ssm: {mamba}")
    print()
    print("| shape (b, heads, headdim, dstate, groups) | dtype / state | mamba_ssm ms | "
          "ssmtune ms | mamba / ssmtune | floor ms | ssmtune x floor | max abs diff |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for shape in shapes:
        b, h, p, n, g, dtype, state_dtype = shape
        args = make_inputs(shape, a.seed)
        # Both outputs from the same state before any timed call changes it.
        ours_out = run_step(ssmtune.selective_state_update, [args[0].clone()] + args[1:])
        theirs_ms, diff = None, "-"
        if theirs is not None:
            their_out = run_step(theirs, [args[0].clone()] + args[1:])
            diff = f"{float((their_out.float() - ours_out.float()).abs().max()):.1e}"
        ours = time_ms(lambda: run_step(ssmtune.selective_state_update, args), a.reps)
        if theirs is not None:
            theirs_ms = time_ms(lambda: run_step(theirs, args), a.reps)
        fl = floor_ms(shape, a.copy_gbs)
        theirs_s = f"{theirs_ms:.4f}" if theirs_ms else "-"
        ratio = f"{theirs_ms / ours:.2f}x" if theirs_ms else "-"
        print(f"| ({b}, {h}, {p}, {n}, {g}) | {dtype} / {state_dtype} | {theirs_s} | {ours:.4f} "
              f"| {ratio} | {fl:.4f} | {ours / fl:.1f} | {diff} |", flush=True)
        print(f"  {ssmtune.explain_step(*args[:6], args[6], args[7], args[8], True)}",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
