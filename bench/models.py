#!/usr/bin/env python3
"""The benchmark of record: the selective scan as Mamba models call it, side by side with
mamba_ssm in one process on one GPU.

Shapes: training steps of Mamba-130m to 2.8b (d_inner 1536 to 5120, batch 8 and 16, seqlen
2048) and batch-1 prefill (d_inner 2048 to 5120, seqlen 4k to 16k, with the last state), all
with the block's flags (D, z, delta_bias, delta_softplus=True) in bf16 and fp16; compare.py's
plain shapes; an odd seqlen each way and dstate 64 (`--list`). Per shape, on the same fresh
inputs (seed printed): mamba_ssm's selective_scan_fn, ssmtune untuned (an empty database:
what a new user gets) and ssmtune tuned (ssmtune.tune on the shape, its wall time and counts
kept); the forward, and with --backward the backward and the training step through
torch.autograd. Every output is checked against an fp64 reference before it is timed (CUDA
events, L2 flushed, medians). A markdown table comes last on stdout, progress on stderr,
every number in --json. bench/NOTES.md says how to run it.

Two databases: the untuned one ($SSMTUNE_DB, a fresh temporary file that nothing is tuned
into) and the tuned one (--db, or a second temporary file). One database for both would not
do: the runtime serves an untuned shape from the nearest tuned one, so the untuned column
would depend on which shapes ran before it.
"""
import argparse
import ctypes
import dataclasses
import json
import math
import os
import shutil
import sys
import tempfile
import time
import traceback
import zlib
from pathlib import Path

import torch

_HERE = Path(__file__).resolve().parent
for _p in (_HERE, _HERE.parent / "python" / "tests"):  # compare*.py; grad_check.py's budgets
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import compare  # noqa: E402
from model_report import CONTENDERS, FAILED, report, verdict_of, worst  # noqa: E402
from model_shapes import default_cases, estimate, format_estimate, parse_shapes  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Contenders: mamba_ssm and ssmtune on two databases


Skipped = compare.Skipped  # a contender that cannot run; the message says why


def load_mamba(path):
    """(fn, source, has_backward) or raises: mamba_ssm's selective_scan_fn, else its raw
    extension selective_scan_cuda wrapped forward-only."""
    if path and path not in sys.path:
        sys.path.insert(0, path)
    try:
        from mamba_ssm.ops.selective_scan_interface import selective_scan_fn
        return selective_scan_fn, "mamba_ssm.ops.selective_scan_interface", True
    except Exception as first:  # noqa: BLE001 - try the raw extension next
        try:
            raw = compare.load_mamba(None)
        except Exception as second:
            raise ImportError(f"mamba_ssm: {type(first).__name__}: {first}; "
                              f"selective_scan_cuda: {type(second).__name__}: {second}")
    extra = []

    def fn(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False,
           return_last_state=False):
        args = (u, delta, A, B, C, D, z, delta_bias, delta_softplus, *extra)
        try:
            res = raw.fwd(*args)
        except TypeError:  # a fork whose fwd takes prev_state
            if extra:
                raise
            extra.append(None)
            res = raw.fwd(*args, None)
        out = res[2] if z is not None else res[0]
        # res[1]: per chunk, (cumulative decay, state) pairs per state; the last chunk's states.
        return (out, res[1][:, :, -1, 1::2]) if return_last_state else out

    return fn, "selective_scan_cuda (forward only)", False


class Databases:
    """The ssmtune runtimes the ops run on: "untuned" ($SSMTUNE_DB, the process's own) and
    "tuned" (a second runtime on another file). use() points the package's per-device runtime
    (and the ctypes path's, which explain uses) at one and empties the plan caches, so the next
    call prepares on it. ssmtune.tune() without db= then tunes into that one too."""

    def __init__(self, ssmtune, device, tuned_path):
        from ssmtune import _ext, _lib, _tune
        self._ext, self._lib, self._tune = _ext, _lib, _tune
        self.device = device
        self.handles = {"untuned": _ext.runtime(device)}
        self.handles["tuned"] = (_ext.ext().runtime_create(str(tuned_path), device)
                                 if tuned_path else None)
        self.current = None

    def use(self, which):
        handle = self.handles[which]
        if handle is None:
            raise Skipped("no tuned database (--no-tune without --db)")
        if self.current != which:
            self._ext._runtimes[self.device] = handle
            if self.device == 0:
                self._lib._runtime = ctypes.c_void_p(handle)
            self._tune._clear_plan_caches()
            self.current = which


def fwd_call(fn, inp, last_state):
    """One forward through a selective_scan_fn: (out, last_state or None)."""
    res = fn(inp.u, inp.delta, inp.A, inp.B, inp.C, inp.D, inp.z, inp.delta_bias,
             delta_softplus=inp.delta_softplus, return_last_state=last_state)
    return res if last_state else (res, None)


def check_forward(fn, case, inp, ref):
    """compare.check on out (poisoned outputs, twice), then the last state once."""
    contender = compare.Contender(call=lambda: fwd_call(fn, inp, case.last_state)[0],
                                  poison="allocator")
    acc = {"out": compare.check(contender, case.shape, ref["out"], ref["out_floor"])}
    if case.last_state:
        _, last = fwd_call(fn, inp, True)
        acc["last_state"] = compare.score(last.float(), ref["last_state"], ref["last_floor"],
                                          None)
    acc["verdict"] = worst(a["verdict"] for a in acc.values())
    return acc


def check_grads(grads, ref, leaves):
    """Each gradient (du, ddelta, ...) against fp64 with docs/accuracy.md's backward budget
    (python/tests/grad_check.py): defect when non-finite, past 10x the budget, or of the wrong
    shape or dtype; outside past the budget."""
    import grad_check
    out = {}
    for name, got in grads.items():
        leaf, r = leaves[name[1:]], ref[name]
        if got.shape != leaf.shape or got.dtype != leaf.dtype:
            out[name] = {"verdict": "defect", "error": f"{got.dtype} {tuple(got.shape)}, "
                         f"expected {leaf.dtype} {tuple(leaf.shape)}"}
            continue
        rel = grad_check.rel_l2(got, r)
        bud = grad_check.budget(name, r, got.dtype)
        if not math.isfinite(rel) or rel > compare.DEFECT_FACTOR * bud:
            v = "defect"
        elif rel > bud:
            v = "outside"
        else:
            v = "inside"
        out[name] = {"rel_l2": rel, "budget": bud, "verdict": v}
    return {"grads": out, "verdict": worst(g["verdict"] for g in out.values())}


INPUT_NAMES = ("u", "delta", "A", "B", "C", "D", "z", "delta_bias")


def make_leaves(inp):
    """The present inputs as fresh autograd leaves, {name: tensor}."""
    return {n: getattr(inp, n).detach().requires_grad_(True) for n in INPUT_NAMES
            if getattr(inp, n) is not None}


def backward_parts(fn, case, inp, leaves, dout, flush, args, result, check):
    """Gradients through torch.autograd, checked against the fp64 reference (`check`: the
    gradients {du: tensor, ...} -> their accuracy record), then timed: the backward alone
    over a retained graph, and one forward plus backward (the training step), as
    compare_bwd.py does."""
    ginp = dataclasses.replace(inp, **leaves)
    names = list(leaves)
    tensors = [leaves[n] for n in names]

    def forward():
        return fwd_call(fn, ginp, case.last_state)[0]

    out = forward()
    grads = dict(zip(("d" + n for n in names),
                     torch.autograd.grad(out, tensors, dout, retain_graph=True)))
    result["bwd"] = {"accuracy": check(grads)}
    del grads
    if result["bwd"]["accuracy"]["verdict"] == "defect" and not args.time_failed:
        result["bwd"]["status"] = "defect"
        return
    result["bwd"]["timing"] = _time_backward(out, tensors, dout, flush, args)
    result["bwd"]["status"] = "ok"
    del out  # the retained graph
    result["step"] = {"timing": compare.time_call(
        lambda: torch.autograd.grad(forward(), tensors, dout), flush, args), "status": "ok"}


def _time_backward(out, tensors, dout, flush, args):
    return compare.time_call(lambda: torch.autograd.grad(out, tensors, dout, retain_graph=True),
                             flush, args)


def parse_explain(text):
    """(config, rule) from explain's "KEY: CONFIG [RULE(, in use)] reason"."""
    try:
        head = text.split(": ", 1)[1]
        config, rest = head.split(" [", 1)
        return config.strip(), rest.split("]", 1)[0].split(",")[0].strip()
    except (IndexError, ValueError, AttributeError):
        return None, None


# ---------------------------------------------------------------------------------------------
# Tuning


def sidecar_path(db):
    """Where a --db keeps the tune results of earlier runs (problem key -> result)."""
    return Path(str(db) + ".tunes.json")


def read_sidecar(db):
    try:
        return json.loads(sidecar_path(db).read_text())
    except (OSError, ValueError):
        return {}


def write_sidecar(db, entries):
    data = read_sidecar(db)
    data.update(entries)
    sidecar_path(db).write_text(json.dumps(compare._finite_or_none(data), indent=1) + "\n")


def tune_case(ssmtune, fn, case, inp, leaves, dout, args):
    """Records the problems one call (and with --backward one training step) prepares, then
    tunes them into the tuned database: {problem key: result dict}. With --no-tune, a --db's
    results from earlier runs (marked "earlier")."""
    with ssmtune.record() as rec:
        with torch.no_grad():
            fwd_call(fn, inp, case.last_state)
        if args.backward:
            ginp = dataclasses.replace(inp, **leaves)
            out = fwd_call(fn, ginp, case.last_state)[0]
            torch.autograd.grad(out, list(leaves.values()), dout)
            del out
    keys = list(rec)
    earlier = read_sidecar(args.db) if args.db else {}
    if not args.tune:
        return {k: dict(earlier[k], earlier=True) for k in keys if k in earlier}
    try:
        summary = ssmtune.tune(rec, time_limit=args.tune_time_limit or None, progress=True)
        error = None
    except RuntimeError as e:  # a problem failed; the others' results are on the error
        summary, error = getattr(e, "summary", []), str(e)
    results = {r.problem: r.as_dict() for r in summary}
    for k in keys:
        if k not in results:
            results[k] = {"problem": k, "error": error or "not tuned"}
    fresh = {k: r for k, r in results.items() if not r.get("already_tuned") and not r.get("error")}
    if args.db and fresh:
        write_sidecar(args.db, fresh)
    for k, r in results.items():  # already tuned in this --db: show how that tune went
        if r.get("already_tuned") and k in earlier:
            results[k] = dict(earlier[k], earlier=True)
    return results


# ---------------------------------------------------------------------------------------------
# One shape

def case_seed(base, case):
    return (base + zlib.crc32(case.name.encode())) % (1 << 63)


def make_dout(case, seed):
    gen = torch.Generator(device=compare.DEVICE).manual_seed(seed ^ 0x5EED)
    return torch.randn(case.batch, case.dim, case.seqlen, generator=gen, device=compare.DEVICE,
                       dtype=compare.DTYPES[case.dtype])


def reference(case, inp, dout):
    """The fp64 reference: out, last state, their rounding floors, and with dout every
    gradient (grad_reference.py)."""
    if dout is not None:
        import grad_reference
        ref = grad_reference.forward_backward_fp64(inp, dout)
    else:
        out, last = compare.reference_fp64(inp, last_state=True)
        ref = {"out": out, "last_state": last}
    ref["out_floor"] = compare.rounding_floor(ref["out"], case.dtype)
    ref["last_floor"] = compare.rounding_floor(ref["last_state"], "fp32")
    return ref


def run_contender(name, case, inp, leaves, dout, ref, ctx, args, tag):
    result = {"status": None}
    try:
        if name == "mamba_ssm":
            if ctx.mamba is None:
                raise Skipped(ctx.mamba_why)
            fn = ctx.mamba
        else:
            ctx.dbs.use(name)
            fn = ctx.ssmtune.selective_scan_fn
            if name == "tuned" and (args.tune or args.db):
                t0 = time.perf_counter()
                try:
                    result["tune"] = tune_case(ctx.ssmtune, fn, case, inp, leaves, dout, args)
                except Exception as e:  # noqa: BLE001 - measured as selected; the cell says so
                    failed = {"error": f"{type(e).__name__}: {e}", "wall_s": None}
                    result["tune"] = {"fwd:(tune failed)": failed, "bwd:(tune failed)": failed}
                    result["tune_traceback"] = traceback.format_exc()
                compare.progress(f"{tag} {name} tune ... {time.perf_counter() - t0:.1f} s")
            if ctx.dbs.device == 0:
                try:
                    result["explain"] = ctx.ssmtune.explain(
                        inp.u, inp.delta, inp.A, inp.B, inp.C, inp.D, inp.z, inp.delta_bias,
                        inp.delta_softplus, case.last_state)
                    result["config"], result["rule"] = parse_explain(result["explain"])
                except Exception as e:  # noqa: BLE001 - the config column shows n/a
                    result["explain"] = f"explain failed: {type(e).__name__}: {e}"
        t0 = time.perf_counter()
        with torch.no_grad():
            acc = check_forward(fn, case, inp, ref)
        result["fwd"] = {"accuracy": acc}
        compare.progress(f"{tag} {name} fwd check ... {acc['verdict']} rel L2 "
                         f"{acc['out']['rel_l2']:.3g} ({time.perf_counter() - t0:.1f} s)")
        if acc["verdict"] == "defect" and not args.time_failed:
            result["fwd"]["status"] = result["status"] = "defect"
            return result
        with torch.no_grad():
            result["fwd"]["timing"] = compare.time_call(
                lambda: fwd_call(fn, inp, case.last_state), flush=ctx.flush, args=args)
        result["fwd"]["status"] = "ok"
        compare.progress(f"{tag} {name} fwd {result['fwd']['timing']['median_ms']:.4g} ms")
        if args.backward:
            if name == "mamba_ssm" and not ctx.mamba_backward:
                result["bwd"] = result["step"] = {"status": "skipped",
                                                  "reason": "no backward: " + ctx.mamba_source}
            else:
                backward_parts(fn, case, inp, leaves, dout, ctx.flush, args, result,
                               lambda g: check_grads(g, ref, leaves))
                bwd = result["bwd"]
                compare.progress(
                    f"{tag} {name} bwd {bwd['accuracy']['verdict']} "
                    + (f"{bwd['timing']['median_ms']:.4g} ms, step "
                       f"{result['step']['timing']['median_ms']:.4g} ms" if "timing" in bwd
                       else "(not timed)"))
        result["status"] = "ok"
    except Skipped as e:
        result["status"], result["reason"] = "skipped", str(e)
        compare.progress(f"{tag} {name} ... skipped: {e}")
    except Exception as e:  # noqa: BLE001 - a contender's failure is a result
        result["status"], result["reason"] = "error", f"{type(e).__name__}: {e}"
        result["traceback"] = traceback.format_exc()
        compare.progress(f"{tag} {name} ... error: {result['reason']}")
    return result


def run_case(pos, total, case, ctx, args):
    tag = f"[{pos}/{total} {case.name}]"
    seed = case_seed(args.seed, case)
    rec = {"case": dataclasses.asdict(case), "name": case.name, "label": case.label,
           "flags": case.flags_text, "seed": seed,
           "floor_ms": {p: case.floor_ms(p) for p in ("fwd", "bwd", "step")},
           "contenders": {}}
    t0 = time.perf_counter()
    compare.progress(f"{tag} {case.label} {case.flags_text}: inputs (seed {seed}) and fp64 "
                     "reference ...")
    try:
        inp = compare.make_inputs(case.shape, case.flags, seed)
        dout = make_dout(case, seed) if args.backward else None
        ref = reference(case, inp, dout)
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001
        rec["error"] = f"reference: {type(e).__name__}: {e}"
        broken = compare.cuda_broken()
        if broken:
            rec["aborted"] = f"CUDA context unusable after the reference: {broken}"
        compare.progress(f"{tag} reference failed: {rec['error']}")
        return rec
    rec["ref_s"] = time.perf_counter() - t0
    rec["rounding_floor"] = ref["out_floor"]
    leaves = make_leaves(inp) if args.backward else None
    for name in CONTENDERS:
        res = run_contender(name, case, inp, leaves, dout, ref, ctx, args, tag)
        rec["contenders"][name] = res
        if res["status"] == "error":
            broken = compare.cuda_broken()
            if broken:
                rec["aborted"] = f"CUDA context unusable after {name}: {broken}"
                break
        torch.cuda.empty_cache()
    rec["case_s"] = time.perf_counter() - t0
    return rec


@dataclasses.dataclass
class Context:
    ssmtune: object
    dbs: Databases
    flush: torch.Tensor
    mamba: object
    mamba_why: str
    mamba_source: str
    mamba_backward: bool


# ---------------------------------------------------------------------------------------------
# Command line


def list_text(cases, args):
    rows = ["| name | group | shape | flags | dtype | fwd floor ms | bwd floor ms |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for c in cases:
        rows.append(f"| {c.name} | {c.group} | ({c.batch},{c.dim},{c.seqlen},{c.dstate}) | "
                    f"{c.flags_text} | {c.dtype} | {c.fwd_floor_ms():.4g} | "
                    f"{c.bwd_floor_ms():.4g} |")
    rows.append("")
    rows.append(format_estimate(estimate(cases, args), len(cases)))
    return "\n".join(rows)


TIMING_DEFAULTS = {  # (normal, --quick)
    "warmup": (2, 1), "reps": (30, 10), "min_reps": (10, 3), "max_seconds": (1.0, 0.25)}


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="The benchmark of record: the selective scan at Mamba model shapes with "
        "the block's flags, mamba_ssm vs ssmtune untuned (empty database) vs ssmtune tuned, "
        "every output checked against fp64 first. Markdown on stdout, progress on stderr.")
    p.add_argument("--shapes", type=parse_shapes, default=None,
                   help="comma-separated names, groups (train, prefill, plain, edge, all), "
                   "patterns (train-*-bf16) or BxDxLxN[:dtype][:plain][:last] (the block's "
                   "flags unless :plain; default: all, see --list)")
    p.add_argument("--list", action="store_true",
                   help="print the shapes, their floors and the run-time estimate, and exit")
    p.add_argument("--backward", action="store_true",
                   help="also the backward and the training step through torch.autograd")
    p.add_argument("--tune-time-limit", type=float, default=30.0,
                   help="ssmtune.tune's measuring limit per problem, seconds (0: none; "
                   "compiling comes on top; default %(default)s)")
    p.add_argument("--no-tune", dest="tune", action="store_false",
                   help="do not tune: the tuned column is --db as it is (n/a without --db)")
    p.add_argument("--db", default=None,
                   help="the tuned database, kept across runs (default: a temporary file); "
                   "tune results go beside it in DB.tunes.json")
    p.add_argument("--quick", action="store_true",
                   help="fewer timed calls per measurement (warm-up 1, up to 10 reps, 0.25 s)")
    p.add_argument("--reps", type=int, default=None, help="most timed calls per measurement")
    p.add_argument("--min-reps", type=int, default=None, help="fewest timed calls")
    p.add_argument("--warmup", type=int, default=None, help="untimed calls before timing")
    p.add_argument("--max-seconds", type=float, default=None,
                   help="seconds of timing per measurement, within the rep bounds")
    p.add_argument("--flush-mib", type=int, default=1024,
                   help="MiB written before each timed call (default %(default)s; L2 is 60 MB)")
    p.add_argument("--seed", type=int, default=None, help="input seed (default: the clock)")
    p.add_argument("--mamba-path", default=None,
                   help="directory put first on sys.path (mamba_ssm or selective_scan_cuda)")
    p.add_argument("--time-failed", action="store_true", help="time defects too")
    p.add_argument("--json", default="bench_models.json",
                   help="where every number goes (default %(default)s)")
    args = p.parse_args(argv)
    args.cases = args.shapes or default_cases()
    for key, (normal, quick) in TIMING_DEFAULTS.items():
        if getattr(args, key) is None:
            setattr(args, key, quick if args.quick else normal)
    if args.min_reps < 1 or args.reps < args.min_reps:
        p.error("want 1 <= --min-reps <= --reps")
    if args.tune_time_limit < 0:
        p.error("--tune-time-limit must be >= 0")
    args.tuned_column = bool(args.tune or args.db)
    return args


def prepare_environment(untuned_db):
    """Before the ssmtune library loads: the untuned database, no tune on first use, no forced
    config. Returns what it changed, for the report."""
    if "ssmtune" in sys.modules:
        raise RuntimeError("ssmtune was imported before its environment was set")
    notes = []
    os.environ["SSMTUNE_DB"] = str(untuned_db)
    os.environ["SSMTUNE_TUNE_ON_FIRST_USE"] = "off"
    forced = os.environ.pop("SSMTUNE_FORCE_CONFIG", None)
    if forced:
        notes.append(f"SSMTUNE_FORCE_CONFIG={forced} unset for this run")
    return notes


def exit_code(records):
    """1 when a reference failed, the CUDA context broke or an ssmtune output failed its fp64
    check; else 0."""
    for r in records:
        if "error" in r or r.get("aborted"):
            return 1
        for name in ("untuned", "tuned"):
            if any(verdict_of(r, name, part) in FAILED for part in ("fwd", "bwd")):
                return 1
    return 0


def main(argv=None):
    args = parse_args(argv)
    if args.list:
        print(list_text(args.cases, args))
        return 0
    compare.progress(format_estimate(estimate(args.cases, args), len(args.cases)))
    if not torch.cuda.is_available():
        print("models.py: no CUDA device (torch.cuda.is_available() is False)", file=sys.stderr)
        return 2
    if args.seed is None:
        args.seed = time.time_ns() % (1 << 31)
    compare.progress(f"seed {args.seed}")
    tmp = Path(tempfile.mkdtemp(prefix="ssmtune_models_"))
    try:
        notes = prepare_environment(tmp / "untuned.db")
        tuned_db = args.db or (str(tmp / "tuned.db") if args.tune else None)
        ssmtune = compare.load_ssmtune()
        dbs = Databases(ssmtune, torch.cuda.current_device(), tuned_db)
        try:
            mamba, source, has_bwd = load_mamba(args.mamba_path)
            why = None
        except Exception as e:  # noqa: BLE001 - mamba_ssm shows as n/a
            mamba, source, has_bwd, why = None, "n/a", False, f"not importable ({e})"
        ctx = Context(ssmtune, dbs, torch.empty(args.flush_mib << 20, dtype=torch.uint8,
                                                device="cuda"),
                      mamba, why, source, has_bwd)
        args.full = "per shape"  # compare.device_meta's field
        meta = compare.device_meta(args, {})
        meta.update({"mamba": why or source, "tuned_db": args.db or
                     ("a temporary file" if tuned_db else "none"),
                     "notes": notes, "tune_time_limit": args.tune_time_limit,
                     "tune": args.tune, "backward": args.backward,
                     "estimate_s": estimate(args.cases, args)})
        for note in notes:
            compare.progress(note)
        compare.progress(f"mamba_ssm: {meta['mamba']}")
        records = []
        started = time.perf_counter()
        for pos, case in enumerate(args.cases, 1):
            records.append(run_case(pos, len(args.cases), case, ctx, args))
            torch.cuda.empty_cache()
            meta["wall_s"] = time.perf_counter() - started
            compare.write_json(args.json, meta, records)  # after each shape: a crash keeps them
            if records[-1].get("aborted"):
                break
        print(report(meta, records, args), flush=True)
        compare.progress(f"wrote {args.json}; {meta['wall_s'] / 60:.1f} min")
        return exit_code(records)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
