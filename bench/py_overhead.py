#!/usr/bin/env python3
"""Host cost per call of the selective scan forward from Python, in one
process, on an enqueue-bound tiny shape: mamba_ssm's selective_scan_fn (when
importable), ssmtune's selective_scan_fn (its eager fast path, and through
each op registration), each op called directly (also under inference_mode,
which skips the autograd layer), the raw extension call, and the old ctypes
path.

Each figure: the host clock around batches of 64 calls, the stream drained
between batches (outside the timing) so the launch queue never fills; the
best of --rounds rounds, microseconds per call. Plain (u, delta, A, B, C)
and with flags (D, z, delta_bias, softplus). Prints a table, then one JSON
line (also written to --json). Target (issue 16): ssmtune's op at most half
of mamba_ssm's selective_scan_fn.

    python3 bench/py_overhead.py [--batch 1 --dim 64 --seqlen 64 --dstate 16
                                  --dtype fp32 --rounds 5 --json out.json]
"""
import argparse
import contextlib
import json
import platform
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
import ssmtune  # noqa: E402
from ssmtune import _ctypes_path, _ext, ops  # noqa: E402

BATCH_CALLS = 64


def time_us(call, rounds, batches=100):
    for _ in range(BATCH_CALLS):
        call()  # warm: compile, plan, caches
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(rounds):
        total = 0.0
        for _ in range(batches):
            t0 = time.perf_counter()
            for _ in range(BATCH_CALLS):
                call()
            total += time.perf_counter() - t0
            torch.cuda.synchronize()
        best = min(best, total / (batches * BATCH_CALLS) * 1e6)
    return best


def inputs(a, flags):
    dt = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[a.dtype]
    g = torch.Generator(device="cuda").manual_seed(1234)
    shape = (a.batch, a.dim, a.seqlen)
    u = torch.randn(*shape, device="cuda", generator=g).to(dt)
    delta = (0.5 * torch.rand(*shape, device="cuda", generator=g)).to(dt)
    A = -0.5 * torch.rand(a.dim, a.dstate, device="cuda", generator=g)
    B = torch.randn(a.batch, a.dstate, a.seqlen, device="cuda", generator=g).to(dt)
    C = torch.randn(a.batch, a.dstate, a.seqlen, device="cuda", generator=g).to(dt)
    D = z = bias = None
    if flags:
        D = torch.randn(a.dim, device="cuda", generator=g)
        z = torch.randn(*shape, device="cuda", generator=g).to(dt)
        bias = 0.5 * torch.rand(a.dim, device="cuda", generator=g)
    return u, delta, A, B, C, D, z, bias, flags


def raw_extension(x):
    """The floor under the op: a prepared plan, then per call either outputs
    from torch.empty_like and one fwd_launch (what the op does minus the key,
    the dict and the dispatcher), or fwd_launch alone into fixed outputs."""
    u, delta, A, B, C, D, z, bias, sp = x
    ops.fwd_custom_op(u, delta, A, B, C, D, z, bias, None, sp, False)  # prepares the plan
    plan = list(ops._cache._plans.values())[-1][0]
    launch, stream, index = _ext.ext().fwd_launch, torch._C._cuda_getCurrentRawStream, u.get_device()
    ptrs = [t.data_ptr() if t is not None else 0 for t in (u, delta, A, B, C, D, z, bias, None)]

    def with_outputs():
        out = torch.empty_like(u)
        out_z = torch.empty_like(u) if z is not None else None
        launch(plan, *ptrs, out.data_ptr(), 0 if out_z is None else out_z.data_ptr(), 0, 0,
               stream(index))

    fixed = (torch.empty_like(u), torch.empty_like(u) if z is not None else None)
    out_ptrs = (fixed[0].data_ptr(), 0 if fixed[1] is None else fixed[1].data_ptr())

    def launch_only():
        launch(plan, *ptrs, *out_ptrs, 0, 0, stream(index))
    return with_outputs, launch_only


def variants(x, mamba):
    """name -> (inference_mode?, the op selective_scan_fn uses or None, its
    eager fast path on?, call)."""
    u, delta, A, B, C, D, z, bias, sp = x
    out = {}
    if mamba is not None:
        out["mamba_ssm selective_scan_fn"] = (
            False, None, False, lambda: mamba(u, delta, A, B, C, D, z, bias, sp))

    def fn():
        return ssmtune.selective_scan_fn(u, delta, A, B, C, D, z, bias, sp)
    out["ssmtune selective_scan_fn [eager fast path]"] = (False, None, True, fn)
    for style, op in (("custom_op", ops.fwd_custom_op), ("library", ops.fwd_library_op)):
        out[f"ssmtune selective_scan_fn [{style}]"] = (False, op, False, fn)
        out[f"ssmtune op direct [{style}]"] = (
            False, None, False, lambda op=op: op(u, delta, A, B, C, D, z, bias, None, sp, False))
        out[f"ssmtune op direct, inference_mode [{style}]"] = (
            True, None, False, lambda op=op: op(u, delta, A, B, C, D, z, bias, None, sp, False))
    with_outputs, launch_only = raw_extension(x)
    out["raw extension: empty_like + fwd_launch"] = (False, None, False, with_outputs)
    out["raw extension: fwd_launch alone"] = (False, None, False, launch_only)
    out["old ctypes path selective_scan_fn"] = (
        False, None, False,
        lambda: _ctypes_path.selective_scan_fn(u, delta, A, B, C, D, z, bias, sp))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--seqlen", type=int, default=64)
    p.add_argument("--dstate", type=int, default=16)
    p.add_argument("--dtype", default="fp32", choices=("fp32", "fp16", "bf16"))
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--json", help="also write the JSON here")
    a = p.parse_args()
    try:
        from mamba_ssm.ops.selective_scan_interface import selective_scan_fn as mamba
    except Exception as e:  # ImportError, or a build without its CUDA extension
        print(f"mamba_ssm not usable here ({type(e).__name__}: {e}); its rows are skipped")
        mamba = None
    # First call (runtime, selection, kernel compile or cubin load, plan) and
    # second call (cached), each until the GPU is done; a shape no row below uses.
    first = inputs(argparse.Namespace(**{**vars(a), "seqlen": a.seqlen + 3}), False)
    times = []
    for _ in range(2):
        t0 = time.perf_counter()
        ssmtune.selective_scan_fn(*first[:8], first[8])
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    print(f"first call {times[0]:.1f} ms (compile unless the database's cubin cache has it; "
          f"SSMTUNE_DB= for a cold compile), second call {times[1]:.3f} ms")
    results = {}
    for flags in (False, True):
        x = inputs(a, flags)
        col = "flags" if flags else "plain"
        for name, (inference, op, fast, call) in variants(x, mamba).items():
            saved = ops._op, ops.EAGER_FAST_PATH
            ops._op = op or saved[0]  # the registration selective_scan_fn goes through
            ops.EAGER_FAST_PATH = fast
            try:
                with torch.inference_mode() if inference else contextlib.nullcontext():
                    results.setdefault(name, {})[col] = round(time_us(call, a.rounds), 2)
            finally:
                ops._op, ops.EAGER_FAST_PATH = saved
    shape = f"({a.batch}, {a.dim}, {a.seqlen}, {a.dstate}) {a.dtype}"
    print(f"host us/call, best of {a.rounds} rounds of 100 x {BATCH_CALLS} calls, {shape}; "
          f"flags = D, z, delta_bias, softplus")
    print(f"{'variant':52s} {'plain':>8s} {'flags':>8s}")
    for name, r in results.items():
        print(f"{name:52s} {r['plain']:8.2f} {r['flags']:8.2f}")
    m = results.get("mamba_ssm selective_scan_fn")
    if m:
        for name, r in results.items():
            if name.startswith("ssmtune"):
                print(f"{name} / mamba_ssm: plain {r['plain'] / m['plain']:.2f}, "
                      f"flags {r['flags'] / m['flags']:.2f} (target <= 0.5)")
    doc = {"shape": shape, "rounds": a.rounds, "calls_per_batch": BATCH_CALLS,
           "torch": torch.__version__, "python": platform.python_version(),
           "device": torch.cuda.get_device_name(), "ssmtune": ssmtune.version(),
           "first_call_ms": round(times[0], 1), "second_call_ms": round(times[1], 3),
           "us_per_call": results}
    line = json.dumps(doc)
    print(line)
    if a.json:
        Path(a.json).write_text(line + "\n")


if __name__ == "__main__":
    main()
