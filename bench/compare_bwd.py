#!/usr/bin/env python3
"""Side-by-side training-step benchmark of the selective scan on one GPU: ssmtune's drop-in
selective_scan_fn and mamba_ssm's, each through torch.autograd as a Mamba block trains it.

Per shape and flag set both get the same fresh random inputs (seed printed). Each contender's
gradients are compared with the other's (relative L2 per gradient; the accuracy against fp64 is
the test suites' job: python/tests/test_gpu_bwd*.py), then three things are timed with CUDA
events, L2 flushed before every call (median of --reps): the forward alone, the backward alone
(autograd.grad over a retained graph) and one forward plus backward. Markdown tables go to
stdout, every number to a JSON file. bench/NOTES.md says how to run it.

--timing kernels times device work only: each call runs alone under torch.profiler (CUPTI)
and counts the summed durations of the GPU work it launched (kernels, memsets, copies), not
the gaps between them. Events around a call (the default) also time the host where it is
slower than the GPU, as at mamba_ssm's test grid's tiny shapes, for either contender.
"""
import argparse
import json
import platform
import random
import sys
import time
import zlib

import torch

# Ceilings of the lent H200 (shared/docs/perf.md): bytes moved per second counting reads plus
# writes, and MUFU exps per second (16 per clock per SM).
COPY_BYTES_PER_S = 4.22e12
EXP_PER_S = 4.18e12
DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
# (batch, dim, seqlen, dstate, dtype): the backward issue's shapes and the forward table's.
DEFAULT_SHAPES = (
    (8, 256, 1024, 4, "fp32"),
    (8, 1536, 2048, 16, "fp32"),
    (8, 1536, 2048, 16, "bf16"),
    (4, 5120, 8192, 16, "bf16"),
    (16, 2048, 2048, 16, "bf16"),
    (1, 5120, 16384, 16, "bf16"),
    (256, 1536, 64, 16, "bf16"),
)
GRADS = ("u", "delta", "A", "B", "C", "D", "z", "delta_bias")


def progress(msg):
    print(msg, file=sys.stderr, flush=True)


def parse_shapes(spec):
    shapes = []
    for item in filter(None, (s.strip() for s in spec.split(","))):
        if item.isdigit():
            shapes.append(DEFAULT_SHAPES[int(item)])
            continue
        dims, _, dtype = item.partition(":")
        b, d, l, n = (int(x) for x in dims.lower().split("x"))
        shapes.append((b, d, l, n, dtype or "fp32"))
    return shapes


def draw_shapes(count, seed):
    """`count` shapes drawn with random.Random(seed), none chosen by hand: batch 1 to 16, dim 256
    to 5120, seqlen 64 to 8192 (odd lengths among them), dstate 1 to 64 weighted to 16, the three
    dtypes; between 2e5 and 6.4e7 (batch, dim, step) elements, no shape twice."""
    rng = random.Random(seed)
    lengths = (64, 128, 256, 512, 1000, 1024, 2048, 3000, 4096, 8192)
    states = (1, 2, 4, 8, 12, 16, 16, 16, 16, 20, 24, 32, 48, 64)
    shapes = []
    while len(shapes) < count:
        shape = (rng.randint(1, 16), rng.choice((256, 384, 512, 768, 1024, 1536, 2048, 2560, 4096,
                                                 5120)),
                 rng.choice(lengths), rng.choice(states), rng.choice(tuple(DTYPES)))
        if 2e5 <= shape[0] * shape[1] * shape[2] <= 6.4e7 and shape not in shapes:
            shapes.append(shape)
    return shapes


def make_inputs(shape, flags, seed):
    """mamba_ssm's test distributions: u, B, C, z ~ randn; delta = 0.5 rand; A = -0.5 rand
    (fp32); D ~ randn, delta_bias = 0.1 rand (fp32). Leaves that require grad."""
    b, d, l, n, dt = shape
    g = torch.Generator(device="cuda").manual_seed(seed)
    t = DTYPES[dt]

    def leaf(x):
        return x.requires_grad_(True)

    inp = {
        "u": leaf(torch.randn(b, d, l, device="cuda", dtype=t, generator=g)),
        "delta": leaf((0.5 * torch.rand(b, d, l, device="cuda", generator=g)).to(t)),
        "A": leaf(-0.5 * torch.rand(d, n, device="cuda", generator=g)),
        "B": leaf(torch.randn(b, 1, n, l, device="cuda", dtype=t, generator=g)),
        "C": leaf(torch.randn(b, 1, n, l, device="cuda", dtype=t, generator=g)),
    }
    if flags:
        inp["D"] = leaf(torch.randn(d, device="cuda", generator=g))
        inp["z"] = leaf(torch.randn(b, d, l, device="cuda", dtype=t, generator=g))
        inp["delta_bias"] = leaf(0.1 * torch.rand(d, device="cuda", generator=g))
    dout = torch.randn(b, d, l, device="cuda", dtype=t, generator=g)
    return inp, dout


def floors(shape, flags):
    """The backward's floor: inputs read once, gradients written once; one exp per
    (batch, dim, dstate, step)."""
    b, d, l, n, dt = shape
    e = torch.finfo(DTYPES[dt]).bits // 8
    row = b * d * l * e
    bc = b * n * l * e
    rows = 3 + 2 + (3 if flags else 0)  # u, delta, dout; du, ddelta; z, out, dz
    bytes_ = rows * row + 4 * bc
    return max(bytes_ / COPY_BYTES_PER_S, b * d * l * n / EXP_PER_S) * 1e3


def event_median(call, flush, reps):
    """Median ms of `call` between two CUDA events, L2 flushed before each."""
    times = []
    for _ in range(reps):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        call()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


def kernel_median(call, flush, reps):
    """Median ms of the GPU work `call` launches (summed durations, gaps excluded), each call
    profiled alone after the L2 flush."""
    from torch.profiler import ProfilerActivity, profile
    times = []
    for _ in range(reps):
        flush.zero_()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            call()
            torch.cuda.synchronize()
        gpu = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        if not gpu:
            raise RuntimeError("the profiler saw no GPU work (CUPTI unavailable?)")
        times.append(sum(e.device_time for e in gpu) / 1e3)  # us -> ms
    times.sort()
    return times[len(times) // 2]


TIMERS = {"events": event_median, "kernels": kernel_median}


def run_contender(fn, inp, dout, flags, flush, reps, timer=event_median):
    names = [k for k in GRADS if k in inp]
    leaves = [inp[k] for k in names]

    def forward():
        return fn(inp["u"], inp["delta"], inp["A"], inp["B"], inp["C"], inp.get("D"),
                  inp.get("z"), inp.get("delta_bias"), delta_softplus=flags)

    out = forward()
    grads = dict(zip(names, torch.autograd.grad(out, leaves, dout, retain_graph=True)))
    for _ in range(2):
        torch.autograd.grad(out, leaves, dout, retain_graph=True)
    with torch.no_grad():
        t_fwd = timer(forward, flush, reps)
    t_bwd = timer(lambda: torch.autograd.grad(out, leaves, dout, retain_graph=True), flush, reps)
    t_step = timer(lambda: torch.autograd.grad(forward(), leaves, dout), flush, reps)
    return grads, {"fwd_ms": t_fwd, "bwd_ms": t_bwd, "step_ms": t_step}


def rel_l2(a, b):
    a, b = a.double(), b.double()
    return ((a - b).norm() / b.norm().clamp_min(1e-30)).item()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", type=parse_shapes, default=None)
    p.add_argument("--draw", type=int, default=0, metavar="N",
                   help="N shapes drawn with --draw-seed instead of the issue's (a held-out sweep)")
    p.add_argument("--draw-seed", type=int, default=2929)
    p.add_argument("--flags", default="both", choices=("off", "on", "both"),
                   help="D, z, delta_bias and delta_softplus (default: both)")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--mamba-path", default=None,
                   help="directory put first on sys.path (mamba_ssm and selective_scan_cuda)")
    p.add_argument("--timing", default="events", choices=sorted(TIMERS),
                   help="events: CUDA events around each call (host included where it is "
                        "slower); kernels: the GPU work's summed durations (torch.profiler)")
    p.add_argument("--json", default="bench_compare_bwd.json")
    p.add_argument("--table", default=None, metavar="JSON",
                   help="print the table of a run's JSON (one cut off included) and exit")
    args = p.parse_args(argv)
    if args.table:
        with open(args.table) as f:
            saved = json.load(f)
        print_table(saved["meta"], saved["records"])
        return 0
    shapes = args.shapes or list(DEFAULT_SHAPES)
    if args.draw > 0:
        shapes = draw_shapes(args.draw, args.draw_seed)
        progress(f"{args.draw} shapes drawn with random.Random({args.draw_seed})")
    seed = args.seed if args.seed is not None else time.time_ns() % (1 << 31)
    progress(f"seed {seed}")
    if args.mamba_path:
        sys.path.insert(0, args.mamba_path)
    import ssmtune
    contenders = {"ssmtune": ssmtune.selective_scan_fn}
    try:
        from mamba_ssm.ops.selective_scan_interface import selective_scan_fn as mamba_fn
        contenders["mamba_ssm"] = mamba_fn
    except Exception as e:  # noqa: BLE001 - report and run ssmtune alone
        progress(f"mamba_ssm unavailable: {e}")
    flush = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    meta = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
            "python": platform.python_version(), "seed": seed, "reps": args.reps,
            "timing": args.timing}
    flag_sets = {"off": [False], "on": [True], "both": [False, True]}[args.flags]
    records = []
    for shape in shapes:
        for flags in flag_sets:
            label = "x".join(map(str, shape[:4])) + ":" + shape[4] + (" +flags" if flags else "")
            s = (seed + zlib.crc32(label.encode())) % (1 << 63)
            inp, dout = make_inputs(shape, flags, s)
            rec = {"shape": list(shape), "flags": flags, "seed": s,
                   "floor_bwd_ms": floors(shape, flags)}
            grads = {}
            for name, fn in contenders.items():
                progress(f"{label}: {name}")
                try:
                    grads[name], rec[name] = run_contender(fn, inp, dout, flags, flush, args.reps,
                                                           TIMERS[args.timing])
                except Exception as e:  # noqa: BLE001 - a contender's failure is a result
                    rec[name] = {"error": f"{type(e).__name__}: {e}"[:300]}
                torch.cuda.empty_cache()
            if len(grads) == 2:
                rec["rel_l2_between"] = {k: rel_l2(grads["ssmtune"][k], grads["mamba_ssm"][k])
                                         for k in grads["ssmtune"]}
            records.append(rec)
            progress(json.dumps(rec))
            # Rewritten after every shape: a run cut off by a time limit keeps what it timed
            # (`--table FILE` prints it).
            write_json(args.json, meta, records)
            del inp, dout, grads
            torch.cuda.empty_cache()
    print_table(meta, records)
    return 0


def write_json(path, meta, records):
    with open(path, "w") as f:
        json.dump({"meta": meta, "records": records}, f, indent=1)


def print_table(meta, records):
    how = "CUDA events around each call" if meta["timing"] == "events" else \
        "summed GPU work of each call (torch.profiler)"
    print(f"GPU {meta['gpu']}, seed {meta['seed']}, median of {meta['reps']}, L2 flushed, "
          f"{how}; ms\n")
    print("| shape | flags | mamba fwd | ssmtune fwd | x | mamba bwd | ssmtune bwd | x | "
          "bwd floor | ssmtune x floor | mamba step | ssmtune step | x | max grad diff |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in records:
        m, s = r.get("mamba_ssm", {}), r.get("ssmtune", {})

        def cell(d, k):
            return f"{d[k]:.4g}" if k in d else d.get("error", "-")[:40]

        def ratio(k):
            return f"{m[k] / s[k]:.2f}x" if k in m and k in s else "-"

        diff = max(r["rel_l2_between"].values()) if "rel_l2_between" in r else float("nan")
        xf = f"{s['bwd_ms'] / r['floor_bwd_ms']:.1f}" if "bwd_ms" in s else "-"
        print(f"| {tuple(r['shape'])} | {'on' if r['flags'] else 'off'} | {cell(m, 'fwd_ms')} | "
              f"{cell(s, 'fwd_ms')} | {ratio('fwd_ms')} | {cell(m, 'bwd_ms')} | "
              f"{cell(s, 'bwd_ms')} | {ratio('bwd_ms')} | {r['floor_bwd_ms']:.3f} | {xf} | "
              f"{cell(m, 'step_ms')} | {cell(s, 'step_ms')} | {ratio('step_ms')} | {diff:.2e} |")


if __name__ == "__main__":
    sys.exit(main())
