#!/usr/bin/env python3
"""A/B of two ssmtune builds' built-in defaults, side by side on one GPU.

A change to a default rule (tuner/fwd/heuristics.cpp, tuner/bwd/defaults.cpp) lands only when
held-out shapes show it faster. For each shape this asks each binary which config its built-in
default is (`ssmtune explain` on an empty tuning database), then times both configs, and any
extra configs named, with one binary's `ssmtune bench` in one process (same inputs, each config
checked against fp64 first), `--runs` times with the order reversed each run. Kernels are the
same templates in both builds, so one process times both without a second start-up.

    python3 bench/ab_defaults.py --a main/ssmtune --b branch/ssmtune \\
        --shape fwd:32,2048,1024,4,fp16 --shape bwd:12,1024,1024,44,bf16 \\
        --shape "bwd:6,1024,2048,44,bf16+seq.K8.D16.fp32.t128.s8.fast" --json ab.json

With --kernels (a change to the kernels' templates, not to the defaults) each config is timed
by both binaries instead: each run times every config with A's `bench` and with B's, the two
reversed each run. Their cubins differ: the compile cache's key holds the templates' hash.

Shapes are FAMILY:BATCH,DIM,SEQLEN,DSTATE,DTYPE, then +CONFIG for each extra config to time.
The block's flags (D, z, delta_bias, softplus) are on unless --flags off; the backward is timed
given the forward's saved states (training). Prints a markdown table; exits 1 when any config
was not timed or was not "ok" against fp64.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

FAMILIES = ("fwd", "bwd")
DTYPES = ("fp32", "fp16", "bf16")
FLAG_ARGS = ["--with-d", "--with-z", "--delta-bias", "--softplus"]


@dataclass
class Shape:
    family: str
    sizes: tuple  # batch, dim, seqlen, dstate
    dtype: str
    extras: list = field(default_factory=list)

    def label(self):
        return f"{self.family} ({', '.join(map(str, self.sizes))}) {self.dtype}"


def parse_shape(text):
    """FAMILY:B,D,L,N,DTYPE[+CONFIG...] -> Shape (argparse type)."""
    try:
        family, rest = text.split(":", 1)
        parts = rest.split("+")
        fields = parts[0].split(",")
        if family not in FAMILIES or len(fields) != 5 or fields[4] not in DTYPES:
            raise ValueError
        sizes = tuple(int(v) for v in fields[:4])
        if min(sizes) < 1:
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"'{text}': expected FAMILY:BATCH,DIM,SEQLEN,DSTATE,DTYPE[+CONFIG...] with FAMILY in "
            f"{FAMILIES} and DTYPE in {DTYPES}") from None
    return Shape(family, sizes, fields[4], [p for p in parts[1:] if p])


def problem_args(shape, flags):
    b, d, l, n = shape.sizes
    args = ["--family", shape.family, "--batch", str(b), "--dim", str(d), "--seqlen", str(l),
            "--dstate", str(n), "--dtype", shape.dtype]
    return args + (FLAG_ARGS if flags else [])


def run_json(cmd, env):
    """(parsed JSON rows, None) or (None, why)."""
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode not in (0, 1):
        return None, f"exit {out.returncode}: {out.stderr.strip()[-300:]}"
    try:
        rows = json.loads(out.stdout)
    except json.JSONDecodeError:
        return None, f"no JSON (exit {out.returncode}): {out.stderr.strip()[-300:]}"
    return rows, None


def default_of(binary, shape, flags, env):
    rows, why = run_json([binary, "explain", *problem_args(shape, flags), "--format", "json"], env)
    if rows is None or not rows or "config" not in rows[0]:
        return None, why or "explain printed no config"
    return rows[0]["config"], rows[0].get("why", "")


def time_configs(binary, shape, flags, keys, seed, target_ms, env):
    """{config: {median_ms, status, rel_l2}} from one bench process."""
    cmd = [binary, "bench", *problem_args(shape, flags), "--seed", str(seed), "--target-ms",
           str(target_ms), "--format", "json"]
    for k in keys:
        cmd += ["--config", k]
    if shape.family == "bwd":
        cmd.append("--saved-states")
    rows, why = run_json(cmd, env)
    if rows is None:
        return {k: {"median_ms": None, "status": why} for k in keys}
    got = {r["config"]: {"median_ms": r.get("median_ms"), "status": r.get("status"),
                         "rel_l2": r.get("rel_l2")} for r in rows}
    return {k: got.get(k, {"median_ms": None, "status": "not in bench's output"}) for k in keys}


def fmt_ms(values):
    return " / ".join(f"{v:.4f}" if isinstance(v, (int, float)) else "-" for v in values)


def best(values):
    nums = [v for v in values if isinstance(v, (int, float))]
    return min(nums) if nums else None


def compare(shape, args, env):
    """One shape's record: both defaults, every config's times over the runs."""
    ka, why_a = default_of(args.a, shape, args.flags == "on", env)
    kb, why_b = default_of(args.b, shape, args.flags == "on", env)
    keys = list(dict.fromkeys(k for k in [ka, kb, *shape.extras] if k))
    runs = []
    for r in range(args.runs):
        order = keys if r % 2 == 0 else list(reversed(keys))
        if args.kernels:
            builds = [("a", args.a), ("b", args.b)]
            runs.append({tag: time_configs(binary, shape, args.flags == "on", order, args.seed,
                                           args.target_ms, env)
                         for tag, binary in (builds if r % 2 == 0 else builds[::-1])})
        else:
            runs.append(time_configs(args.timer, shape, args.flags == "on", order, args.seed,
                                     args.target_ms, env))
    return {"family": shape.family, "shape": list(shape.sizes), "dtype": shape.dtype,
            "a": ka, "a_why": why_a, "b": kb, "b_why": why_b, "extras": shape.extras,
            "kernels": args.kernels, "runs": runs}


def label_of(rec):
    return f"{rec['family']} ({', '.join(map(str, rec['shape']))}) {rec['dtype']}"


def kernel_table(records):
    """--kernels: a row per (shape, config), its times from A's build and from B's."""
    lines = ["| shape | config | A ms | B ms | B / A |", "| --- | --- | --- | --- | --- |"]
    for rec in records:
        if rec["a"] is None or rec["b"] is None:
            lines.append(f"| {label_of(rec)} | {rec['a_why'] if rec['a'] is None else rec['b_why']}"
                         " | - | - | - |")
        keys = dict.fromkeys(k for k in [rec["a"], rec["b"], *rec["extras"]] if k)
        for key in keys:
            a = [run["a"].get(key, {}).get("median_ms") for run in rec["runs"]]
            b = [run["b"].get(key, {}).get("median_ms") for run in rec["runs"]]
            ratio = f"{best(b) / best(a):.3f}" if best(a) and best(b) else "-"
            lines.append(f"| {label_of(rec)} | {key} | {fmt_ms(a)} | {fmt_ms(b)} | {ratio} |")
    return "\n".join(lines)


def table(records):
    if records and records[0].get("kernels"):
        return kernel_table(records)
    lines = ["| shape | A default | B default | A ms | B ms | B / A | extras |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for rec in records:
        def ms(key):
            return [run.get(key, {}).get("median_ms") for run in rec["runs"]] if key else []
        a, b = best(ms(rec["a"])), best(ms(rec["b"]))
        ratio = f"{b / a:.3f}" if a and b else "-"
        if rec["a"] == rec["b"]:
            ratio = "same config"
        extras = "; ".join(f"{k} {fmt_ms(ms(k))}" for k in rec["extras"])
        label = label_of(rec)
        lines.append(f"| {label} | {rec['a'] or rec['a_why']} | {rec['b'] or rec['b_why']} | "
                     f"{fmt_ms(ms(rec['a']))} | {fmt_ms(ms(rec['b']))} | {ratio} | {extras} |")
    return "\n".join(lines)


def failures(records):
    """Every (shape, config, status) not timed "ok"."""
    out = []
    for rec in records:
        if rec["a"] is None or rec["b"] is None:
            out.append((rec["shape"], None, rec["a_why"] if rec["a"] is None else rec["b_why"]))
        for run in rec["runs"]:
            for timed in (run.values() if rec.get("kernels") else [run]):
                for key, res in timed.items():
                    if res.get("status") != "ok":
                        out.append((rec["shape"], key, res.get("status")))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--a", required=True, help="the baseline ssmtune binary (e.g. main's)")
    p.add_argument("--b", required=True, help="the changed ssmtune binary")
    p.add_argument("--timer", default=None, help="the binary that times (default: --b)")
    p.add_argument("--kernels", action="store_true",
                   help="time each config with both binaries (a template change)")
    p.add_argument("--shape", type=parse_shape, action="append", required=True,
                   help="FAMILY:BATCH,DIM,SEQLEN,DSTATE,DTYPE[+CONFIG...] (repeat)")
    p.add_argument("--flags", default="on", choices=("on", "off"),
                   help="D, z, delta_bias and delta_softplus (default: on)")
    p.add_argument("--runs", type=int, default=2, help="bench runs a shape, order reversed each")
    p.add_argument("--seed", type=int, default=1, help="bench's input seed (printed)")
    p.add_argument("--target-ms", type=float, default=300.0, help="bench's timed ms a config")
    p.add_argument("--json", default=None, help="write the records here")
    args = p.parse_args(argv)
    if args.kernels and args.timer:
        p.error("--kernels times with both binaries: no --timer")
    args.timer = args.timer or args.b
    if args.runs < 1:
        p.error("--runs must be at least 1")
    # An empty database of its own: the built-in defaults, never a tuned row.
    env = dict(os.environ, SSMTUNE_DB=os.path.join(tempfile.mkdtemp(prefix="ab_defaults_"),
                                                   "empty.db"))
    print(f"A {args.a}, B {args.b}, timed by {args.timer}; flags {args.flags}; seed {args.seed}; "
          f"{args.runs} runs a shape", file=sys.stderr)
    records = []
    for shape in args.shape:
        print(f"{shape.label()} ...", file=sys.stderr, flush=True)
        records.append(compare(shape, args, env))
        # Each shape's row and the records so far as they come: a run cut off by a time
        # limit keeps the shapes it finished.
        print("\n".join(table(records[-1:]).splitlines()[2:]), file=sys.stderr, flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"seed": args.seed, "flags": args.flags, "records": records}, f,
                          indent=1)
    print(table(records))
    bad = failures(records)
    for shape, key, status in bad:
        print(f"not ok: {shape} {key}: {status}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
