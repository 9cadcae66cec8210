"""The benchmark of record's shapes (bench/models.py): the built-in list of Mamba training and
prefill shapes, plain and edge cases, their selection by name, group, pattern or BxDxLxN, their
floors, and the run-time estimate printed before a run."""
import argparse
import dataclasses
import fnmatch

import compare
import compare_bwd

# ---------------------------------------------------------------------------------------------
# Shapes

# Mamba-1 sizes: d_inner = 2 d_model (expand 2), dstate 16.
MODELS = (("130m", 1536), ("370m", 2048), ("790m", 3072), ("1.4b", 4096), ("2.8b", 5120))
TRAIN_BATCHES = (8, 16)
TRAIN_SEQLEN = 2048
PREFILL_DIMS = (2048, 4096, 5120)
PREFILL_SEQLENS = (4096, 8192, 16384)
MODEL_DTYPES = ("bf16", "fp16")
GROUPS = ("train", "prefill", "plain", "edge")
FLAGS_TEXT = "D z bias sp"


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    batch: int
    dim: int
    seqlen: int
    dstate: int
    dtype: str
    flags: bool  # D, z, delta_bias and delta_softplus=True: the Mamba block's call
    last_state: bool  # return_last_state (prefill keeps the state for decoding)
    group: str

    @property
    def shape(self):
        return compare.Shape(self.batch, self.dim, self.seqlen, self.dstate, self.dtype)

    @property
    def label(self):
        return self.shape.label

    @property
    def flags_text(self):
        parts = ([FLAGS_TEXT] if self.flags else []) + (["last"] if self.last_state else [])
        return " ".join(parts) or "none"

    @property
    def dims(self):
        return (self.batch, self.dim, self.seqlen, self.dstate)

    def fwd_bytes(self):
        """Inputs read once, outputs written once (compare.Shape), plus the fp32 last state."""
        last = self.batch * self.dim * self.dstate * 4 if self.last_state else 0
        return self.shape.min_bytes(self.flags) + last

    def fwd_floor_ms(self):
        """The larger of the bytes at the copy rate and one exp per element at the MUFU's."""
        return max(self.fwd_bytes() / compare.COPY_BYTES_PER_S,
                   self.shape.exps / compare.EXP_PER_S) * 1e3

    def bwd_floor_ms(self):
        return compare_bwd.floors(self.dims + (self.dtype,), self.flags)

    def floor_ms(self, part):
        if part == "fwd":
            return self.fwd_floor_ms()
        if part == "bwd":
            return self.bwd_floor_ms()
        return self.fwd_floor_ms() + self.bwd_floor_ms()  # "step"


def _case(name, dims, dtype, flags, last, group):
    return Case(name, *dims, dtype, flags, last, group)


def default_cases():
    """The built-in list, in run order: training, prefill, compare.py's plain shapes, edges."""
    cases = []
    for dtype in MODEL_DTYPES:
        for model, dim in MODELS:
            for batch in TRAIN_BATCHES:
                cases.append(_case(f"train-{model}-b{batch}-{dtype}",
                                   (batch, dim, TRAIN_SEQLEN, 16), dtype, True, False, "train"))
    for dtype in MODEL_DTYPES:
        for dim in PREFILL_DIMS:
            for seqlen in PREFILL_SEQLENS:
                cases.append(_case(f"prefill-d{dim}-l{seqlen // 1024}k-{dtype}",
                                   (1, dim, seqlen, 16), dtype, True, True, "prefill"))
    for b, d, l, n, dtype in compare.DEFAULT_SHAPES:
        cases.append(_case(f"plain-{b}x{d}x{l}x{n}-{dtype}", (b, d, l, n), dtype, False, False,
                           "plain"))
    cases += [
        _case("odd-l2047-bf16", (8, 1536, 2047, 16), "bf16", True, False, "edge"),
        _case("odd-l4097-prefill-fp16", (1, 2048, 4097, 16), "fp16", True, True, "edge"),
        _case("dstate64-bf16", (8, 1536, 2048, 64), "bf16", True, False, "edge"),
    ]
    return cases


def _adhoc(item):
    """BxDxLxN[:dtype][:plain][:last]: the block's flags unless :plain."""
    dims, *mods = item.split(":")
    parts = dims.lower().split("x")
    if len(parts) != 4 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(
            f"bad shape {item!r}: want a name, a group ({', '.join(GROUPS)}, all), a pattern "
            "(train-*-bf16) or BxDxLxN[:dtype][:plain][:last]")
    dtype, flags, last = "bf16", True, False
    for m in mods:
        m = m.strip().lower()
        if m in compare.DTYPES:
            dtype = m
        elif m == "plain":
            flags = False
        elif m == "flags":
            flags = True
        elif m == "last":
            last = True
        else:
            raise argparse.ArgumentTypeError(
                f"bad modifier {m!r} in {item!r}: a dtype ({', '.join(compare.DTYPES)}), "
                "plain, flags or last")
    b, d, l, n = map(int, parts)
    name = f"{b}x{d}x{l}x{n}-{dtype}" + ("" if flags else "-plain") + ("-last" if last else "")
    return _case(name, (b, d, l, n), dtype, flags, last, "custom")


def parse_shapes(spec):
    """Comma-separated names, groups, fnmatch patterns over names, or ad-hoc shapes; each case
    once, in the order first named."""
    cases = default_cases()
    by_name = {c.name: c for c in cases}
    picked = []
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        if item == "all":
            found = cases
        elif item in GROUPS:
            found = [c for c in cases if c.group == item]
        elif item in by_name:
            found = [by_name[item]]
        elif any(ch in item for ch in "*?["):
            found = [c for c in cases if fnmatch.fnmatchcase(c.name, item)]
            if not found:
                raise argparse.ArgumentTypeError(f"no shape name matches {item!r} (--list)")
        elif item[0].isdigit():
            found = [_adhoc(item)]
        else:
            raise argparse.ArgumentTypeError(f"unknown shape {item!r} (--list shows the names)")
        for c in found:
            if c not in picked:
                picked.append(c)
    if not picked:
        raise argparse.ArgumentTypeError("no shapes given")
    return picked


# ---------------------------------------------------------------------------------------------
# Run-time estimate (printed first; rough: the timing model of compare.time_call, a guessed
# per-kernel compile and reference cost, tunes at about twice their measuring limit)

COMPILE_S = 3.0  # one new kernel through NVRTC, per family and database, roughly
FLUSH_MS = 0.35  # compare's 1 GiB L2 flush before every timed call
REF_STEP_S = 60e-6  # fp64 reference: per time step (a few launches)
REF_BYTES_PER_S = 0.5e12  # and per byte of its fp64 block tensors
TUNE_OVERHEAD = 1.8  # a tune's wall time over its measuring limit (compiling comes on top)


def _timing_s(call_ms, args):
    per = (call_ms + FLUSH_MS) * 1e-3
    reps = max(args.min_reps, min(args.reps, int(args.max_seconds / per)))
    return (args.warmup + 3 + 2 + reps) * per  # warm-up, the probe, the checks, the reps


def estimate(cases, args):
    """Seconds: {"measure", "tune", "total"} for these cases under these options."""
    parts = ("fwd", "bwd", "step") if args.backward else ("fwd",)
    contenders = 3 if args.tuned_column else 2
    measure = 5.0  # start: CUDA context, imports, the flush buffer
    for c in cases:
        work = c.batch * c.dim * c.dstate * c.seqlen * 8
        ref = c.seqlen * REF_STEP_S + 4 * work / REF_BYTES_PER_S
        measure += ref * (3 if args.backward else 1)
        for part in parts:
            guess_ms = 3 * c.floor_ms(part)  # a contender at ~3x its floor
            measure += contenders * _timing_s(guess_ms, args)
        measure += COMPILE_S * (2 if args.backward else 1)  # the untuned database's kernels
    tune = 0.0
    if args.tune:
        per = args.tune_time_limit * TUNE_OVERHEAD + 5.0
        tune = len(cases) * per * (2 if args.backward else 1)
    return {"measure": measure, "tune": tune, "total": measure + tune}


def format_estimate(est, n):
    text = (f"estimate for {n} shapes: {est['total'] / 60:.1f} min (measuring "
            f"{est['measure'] / 60:.1f} min, tuning {est['tune'] / 60:.1f} min; rough)")
    if est["total"] > 600:
        text += ("; over a 10-minute command: tune in slices (--shapes, --db) first, then "
                 "measure all with --db --no-tune")
    return text
