#!/usr/bin/env python3
"""Side-by-side benchmark of the decode step on one GPU: ssmtune's step kernel (timed by
`ssmtune bench --family step`, checked against fp64 first) and mamba_ssm's Triton
selective_state_update (timed here), at the same shapes, in one run.

Both are timed the same way: CUDA events around one call, the L2 flushed before each (the
state, A and the inputs come from HBM, as in a decode loop over many layers), median of
--reps. mamba_ssm is used when importable (its source on PYTHONPATH is enough: the kernel is
Triton); otherwise only ssmtune's times are printed, and the table says so. Markdown to stdout.

Shapes: BATCHxHEADSxHEADDIMxDSTATE[xGROUPS]:DTYPE[:STATE_DTYPE], comma-separated; the
default covers Mamba-1 decode (d_inner 1536 and 5120, batch 1 to 256) and Mamba-2 (80 heads
of 64, dstate 128).
"""
import argparse
import csv
import io
import os
import subprocess
import sys

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


def ssmtune_ms(exe, shape, seed, target_ms):
    b, h, p, n, g, dtype, state_dtype = shape
    cmd = [exe, "bench", "--family", "step", "--batch", str(b), "--heads", str(h), "--dim",
           str(h * p), "--dstate", str(n), "--groups", str(g), "--dtype", dtype, "--state-dtype",
           state_dtype, "--with-d", "--with-z", "--delta-bias", "--softplus", "--seed",
           str(seed), "--target-ms", str(target_ms), "--format", "csv"]
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    row = rows[0]
    return float(row["median_ms"]), float(row["floor_ms"]), row["config"], row["verdict"]


def mamba_ms(shape, reps, seed):
    import torch
    from mamba_ssm.ops.triton.selective_state_update import selective_state_update

    b, h, p, n, g, dtype, state_dtype = shape
    dt_of = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
    it, st = dt_of[dtype], dt_of[state_dtype]
    gen = torch.Generator(device="cuda").manual_seed(seed)

    def randn(*s, dtype=it):
        return torch.randn(*s, device="cuda", dtype=dtype, generator=gen)

    state = randn(b, h, p, n, dtype=st)
    x, dt, z = randn(b, h, p), randn(b, h, p), randn(b, h, p)
    A = -torch.rand(h, p, n, device="cuda", generator=gen) - 1.0
    B, C = randn(b, g, n), randn(b, g, n)
    D = randn(h, p, dtype=torch.float32)
    dt_bias = torch.rand(h, p, device="cuda", generator=gen) - 4.0
    if h == 1:  # Mamba-1's 3-D forms, as its step calls it
        state, x, dt, z, A, D, dt_bias = (state[:, 0], x[:, 0], dt[:, 0], z[:, 0], A[0], D[0],
                                          dt_bias[0])
        B, C = B[:, 0], C[:, 0]

    def call():
        selective_state_update(state, x, dt, A, B, C, D=D, z=z, dt_bias=dt_bias,
                               dt_softplus=True)

    flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size // 4 + 1,
                        device="cuda", dtype=torch.float32)
    for _ in range(5):
        call()
    times = []
    for _ in range(reps):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        call()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ssmtune", default=os.environ.get("SSMTUNE_EXE", "build/ssmtune"))
    ap.add_argument("--shapes", default=",".join(DEFAULT_SHAPES))
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--target-ms", type=float, default=30)
    a = ap.parse_args()
    shapes = [parse_shape(s) for s in a.shapes.split(",") if s.strip()]
    mamba_error = None
    try:
        import mamba_ssm.ops.triton.selective_state_update  # noqa: F401
    except Exception as e:  # the table says why mamba_ssm is missing
        mamba_error = f"{type(e).__name__}: {e}"
    print(f"seed {a.seed}; mamba_ssm: " + ("importable" if mamba_error is None else mamba_error))
    print()
    print("| shape (b, heads, headdim, dstate, groups) | dtype / state | mamba_ssm ms | "
          "ssmtune ms | mamba / ssmtune | floor ms | ssmtune x floor | ssmtune config |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for shape in shapes:
        b, h, p, n, g, dtype, state_dtype = shape
        ours, floor, config, verdict = ssmtune_ms(a.ssmtune, shape, a.seed, a.target_ms)
        theirs = mamba_ms(shape, a.reps, a.seed) if mamba_error is None else None
        ratio = f"{theirs / ours:.2f}x" if theirs else "-"
        theirs_s = f"{theirs:.4f}" if theirs else "-"
        print(f"| ({b}, {h}, {p}, {n}, {g}) | {dtype} / {state_dtype} | {theirs_s} | {ours:.4f} "
              f"| {ratio} | {floor:.4f} | {ours / floor:.1f} | {config} ({verdict}) |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
