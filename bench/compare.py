#!/usr/bin/env python3
"""Side-by-side forward benchmark of the Mamba-1 selective scan on one GPU.

ssmtune's drop-in, mamba_ssm's CUDA kernel (selective_scan_cuda), the seed's Triton kernel
(--seed-kernels) and a plain PyTorch loop (small shapes) run on the same fresh random inputs per
shape. Each is checked against an fp64 reference on poisoned outputs before it is timed (CUDA
events around one call, L2 flushed before each; median and IQR). Markdown tables go to stdout
(last), progress to stderr, every number to a JSON file. bench/NOTES.md says how to run it.
"""
import argparse
import dataclasses
import importlib.util
import json
import math
import platform
import sys
import time
import traceback
import zlib
from pathlib import Path

import torch
import torch.nn.functional as F

# Ceilings of the lent H200 from shared/docs/perf.md (measured 2026-12-02, driver 580.159,
# CUDA 13.0): a large device-to-device copy moves 4.22e12 bytes/s counting bytes read plus
# bytes written; the exp unit (MUFU) gives 16 results per clock per SM, 16 x 132 x 1.98 GHz.
COPY_BYTES_PER_S = 4.22e12
EXP_PER_S = 4.18e12

# (batch, dim, seqlen, dstate, dtype): perf.md's shapes, many short sequences, one long one.
DEFAULT_SHAPES = (
    (8, 256, 1024, 4, "fp32"),  # the seed's large case
    (8, 1536, 2048, 16, "fp32"),
    (8, 1536, 2048, 16, "bf16"),
    (4, 5120, 8192, 16, "bf16"),
    (256, 1536, 64, 16, "bf16"),
    (1, 2048, 65536, 16, "bf16"),
)
CONTENDERS = ("mamba_ssm", "ssmtune", "seed_triton", "torch_loop")  # run (and shown) in this order

DEVICE = "cuda"
DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
INT_VIEWS = {"fp32": torch.int32, "fp16": torch.int16, "bf16": torch.int16}
# Two quiet-NaN bit patterns per dtype whose payloads arithmetic does not produce (the GPU's own
# NaNs are canonical): an element still holding one was never written. The first is the pattern
# ssmtune's evaluator uses (docs/accuracy.md); each check runs once on each.
POISON = {"fp32": (0x7FC0ADDE, 0x7FC0BEEF), "fp16": (0x7E5A, 0x7E77), "bf16": (0x7FDA, 0x7FE5)}
POISON_BLOCKS = 3  # out, out_z and one spare: see poisoned_run

# Verdicts as docs/accuracy.md defines them for fp32 accumulation:
# budget = ACC_BUDGET_FP32 + 1.5 * rounding floor; defect past DEFECT_FACTOR * budget.
ACC_BUDGET_FP32 = 1e-4
DEFECT_FACTOR = 10.0

REF_BLOCK_BYTES = 512 << 20  # fp64 reference: size of one (time block, batch, dim, dstate) tensor
REF_MAX_BLOCK_STEPS = 1024
TORCH_LOOP_MAX_WORK = 1 << 24  # batch*dim*dstate*seqlen up to which the PyTorch loop runs
TRITON_MAX_NUMEL = 1 << 20  # Triton's limit on one block tensor's elements


class Skipped(Exception):
    """A contender that cannot run this shape (or is not available); the message says why."""


# ---------------------------------------------------------------------------------------------
# Shapes and inputs


@dataclasses.dataclass(frozen=True)
class Shape:
    batch: int
    dim: int
    seqlen: int
    dstate: int
    dtype: str
    groups: int = 1

    @property
    def label(self):
        return f"{self.batch}x{self.dim}x{self.seqlen}x{self.dstate}:{self.dtype}"

    @property
    def elem_size(self):
        return torch.finfo(DTYPES[self.dtype]).bits // 8

    @property
    def exps(self):
        """The minimal special-function work: one exp per (batch, dim, dstate, seqlen)."""
        return self.batch * self.dim * self.dstate * self.seqlen

    def min_bytes(self, full):
        """Each input read once, out written once (perf.md); --full adds z, D and delta_bias."""
        row = self.batch * self.dim * self.seqlen * self.elem_size  # u, delta, out (and z)
        bc = self.batch * self.groups * self.dstate * self.seqlen * self.elem_size
        total = 3 * row + 2 * bc + self.dim * self.dstate * 4  # A is fp32
        if full:
            total += row + 2 * self.dim * 4
        return total

    def floor_s(self, full):
        return max(self.min_bytes(full) / COPY_BYTES_PER_S, self.exps / EXP_PER_S)


def parse_shapes(spec):
    """'0,2,8x1536x2048x16:bf16': indices into DEFAULT_SHAPES or BxDxLxN[:dtype] (fp32)."""
    shapes = []
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        if item.isdigit():
            if int(item) >= len(DEFAULT_SHAPES):
                raise argparse.ArgumentTypeError(
                    f"shape index {item} out of range (0..{len(DEFAULT_SHAPES) - 1})"
                )
            shapes.append(Shape(*DEFAULT_SHAPES[int(item)]))
            continue
        dims, _, dtype = item.partition(":")
        parts = dims.lower().split("x")
        dtype = dtype or "fp32"
        if len(parts) != 4 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise argparse.ArgumentTypeError(f"bad shape {item!r}: want BxDxLxN[:dtype]")
        if dtype not in DTYPES:
            raise argparse.ArgumentTypeError(f"bad dtype in {item!r}: one of {', '.join(DTYPES)}")
        shapes.append(Shape(*map(int, parts), dtype))
    if not shapes:
        raise argparse.ArgumentTypeError("no shapes given")
    return shapes


@dataclasses.dataclass
class Inputs:
    u: torch.Tensor  # (batch, dim, seqlen), the shape's dtype
    delta: torch.Tensor  # (batch, dim, seqlen), the shape's dtype
    A: torch.Tensor  # (dim, dstate), fp32
    B: torch.Tensor  # (batch, groups, dstate, seqlen): mamba_ssm's grouped "variable" layout
    C: torch.Tensor  # (batch, groups, dstate, seqlen)
    D: torch.Tensor = None  # (dim,), fp32; --full only, like z, delta_bias and softplus
    z: torch.Tensor = None  # (batch, dim, seqlen), the shape's dtype
    delta_bias: torch.Tensor = None  # (dim,), fp32
    delta_softplus: bool = False

    def args(self):
        """Positional arguments of selective_scan_fn and of selective_scan_cuda.fwd (the
        fields are in their order)."""
        return tuple(getattr(self, f.name) for f in dataclasses.fields(self))

    @property
    def full(self):
        return self.D is not None


def shape_seed(base, shape):
    """A shape's inputs depend on --seed and the shape only, so --shapes reproduces them."""
    return (base + zlib.crc32(shape.label.encode())) % (1 << 63)


def make_inputs(shape, full, seed):
    """Inputs as in perf.md (mamba_ssm's tests): u, B, C ~ randn, delta = 0.5 rand,
    A = -0.5 rand; drawn in their storage dtype from a generator seeded with `seed`."""
    gen = torch.Generator(device=DEVICE)
    gen.manual_seed(seed)
    dt = DTYPES[shape.dtype]
    b, d, L, n, g = shape.batch, shape.dim, shape.seqlen, shape.dstate, shape.groups

    def randn(*size, dtype=dt):
        return torch.randn(*size, generator=gen, device=DEVICE, dtype=dtype)

    def rand(*size, dtype=dt):
        return torch.rand(*size, generator=gen, device=DEVICE, dtype=dtype)

    inp = Inputs(
        u=randn(b, d, L),
        delta=0.5 * rand(b, d, L),
        A=-0.5 * rand(d, n, dtype=torch.float32),
        B=randn(b, g, n, L),
        C=randn(b, g, n, L),
    )
    if full:
        inp.D = randn(d, dtype=torch.float32)
        inp.z = randn(b, d, L)
        inp.delta_bias = 0.5 * rand(d, dtype=torch.float32)
        inp.delta_softplus = True
    return inp


# ---------------------------------------------------------------------------------------------
# fp64 reference


def _time_major(x, t0, t1):
    """x[..., t0:t1] of a (batch, dim | groups[, dstate], seqlen) tensor as contiguous fp64
    (t, batch, ...), so each step's slice is contiguous and broadcasts stay time-major."""
    return x[..., t0:t1].double().movedim(-1, 0).contiguous()


def per_channel(x, t0, t1, dim):
    """B or C (batch, groups, dstate, seqlen) over [t0, t1) as fp64 (t, batch, dim or 1,
    dstate): one group stays 1 wide and broadcasts, more groups repeat to every channel."""
    x = _time_major(x, t0, t1)
    return x if x.shape[2] == 1 else x.repeat_interleave(dim // x.shape[2], dim=2)


def ref_block_steps(inp):
    """Steps per time block of the fp64 reference: about REF_BLOCK_BYTES per
    (time block, batch, dim, dstate) tensor, at most REF_MAX_BLOCK_STEPS."""
    batch, dim, _ = inp.u.shape
    per_step = batch * dim * inp.A.shape[1] * 8
    return max(1, min(REF_MAX_BLOCK_STEPS, REF_BLOCK_BYTES // per_step))


def scan_block(inp, t0, t1, h):
    """The recurrence over steps [t0, t1) from the fp64 state h (batch, dim, dstate):
    returns (delta, u, decay, states), time-major fp64, delta after delta_bias and softplus,
    decay = exp(delta A) and states[i] = h after step t0 + i."""
    delta = _time_major(inp.delta, t0, t1)  # (t, batch, dim)
    if inp.delta_bias is not None:
        delta = delta + inp.delta_bias.double()
    if inp.delta_softplus:
        delta = F.softplus(delta)  # threshold 20, as mamba_ssm's kernel
    u = _time_major(inp.u, t0, t1)
    decay = (delta[..., None] * inp.A.double()).exp_()  # (t, batch, dim, dstate)
    drive = (delta * u)[..., None] * per_channel(inp.B, t0, t1, inp.u.shape[1])
    states = torch.empty_like(decay)
    for dec, drv, state in zip(decay.unbind(0), drive.unbind(0), states.unbind(0)):
        torch.addcmul(drv, dec, h, out=state)
        h = state
    return delta, u, decay, states


def reference_fp64(inp, last_state=False, checkpoints=None):
    """out (batch, dim, seqlen) in fp64 from the same rounded inputs; (out, last state)
    with last_state.

    h_t = exp(delta_t A) h_{t-1} + delta_t u_t B_t, y_t = sum_n C_t h_t (+ D u, * silu(z)).
    A loop over t vectorized over (batch, dim, dstate). Time goes in blocks of
    ref_block_steps steps whose decays, inputs and states (about REF_BLOCK_BYTES each) are
    materialized at once, so memory stays bounded at any seqlen and a step is one addcmul.
    `checkpoints`, a list, receives (t0, state before step t0) per block (for a backward).
    """
    batch, dim, seqlen = inp.u.shape
    dstate = inp.A.shape[1]
    D = None if inp.D is None else inp.D.double()
    out = torch.empty(batch, dim, seqlen, dtype=torch.float64, device=inp.u.device)
    h = torch.zeros(batch, dim, dstate, dtype=torch.float64, device=inp.u.device)
    block = ref_block_steps(inp)
    for t0 in range(0, seqlen, block):
        t1 = min(seqlen, t0 + block)
        if checkpoints is not None:
            checkpoints.append((t0, h))
        _, u, decay, states = scan_block(inp, t0, t1, h)
        del decay
        h = states[-1].clone()  # the carry into the next block, without keeping this one
        y = (states * per_channel(inp.C, t0, t1, dim)).sum(-1)  # (t, batch, dim)
        del states
        if D is not None:
            y += D * u
        if inp.z is not None:
            y *= F.silu(_time_major(inp.z, t0, t1))
        out[:, :, t0:t1] = y.permute(1, 2, 0)
    return (out, h) if last_state else out


# ---------------------------------------------------------------------------------------------
# Accuracy


def rounding_floor(ref, dtype):
    """rel L2 error of the exact result rounded to the output dtype: no kernel does better."""
    rounded = ref.to(DTYPES[dtype]).double()
    return float((rounded - ref).norm() / ref.norm())


def verdict(rel_l2, floor, bad):
    """docs/accuracy.md's verdict for fp32 accumulation; `bad`: unwritten or non-finite."""
    budget = ACC_BUDGET_FP32 + 1.5 * floor
    if bad or not math.isfinite(rel_l2) or rel_l2 > DEFECT_FACTOR * budget:
        return "defect"
    if rel_l2 > budget:
        return "outside"
    if rel_l2 <= 1.25 * floor:
        return "at-limit"
    return "inside"


def score(out, ref, floor, unwritten):
    """Errors of one output against the fp64 reference. rel_l2 is +inf when anything is
    unwritten or non-finite (docs/accuracy.md); the *_finite figures leave those out."""
    got = out.to(torch.float64, copy=True)
    finite = torch.isfinite(got)
    nonfinite = got.numel() - int(finite.sum())
    err = got.sub_(ref).masked_fill_(~finite, 0.0)
    ref_max = float(ref.abs().max())
    rel_finite = float(err.norm() / ref.norm())
    max_err = float(err.abs().max()) / ref_max if ref_max > 0 else math.inf
    rel_l2 = rel_finite if nonfinite == 0 else math.inf
    return {
        "rel_l2": rel_l2,
        "rel_l2_finite": rel_finite,
        "max_abs_err_over_max_ref": max_err,
        # Unwritten elements hold a NaN poison: count them apart from the NaN/Inf a kernel wrote.
        "nan_inf": nonfinite - (unwritten or 0),
        "unwritten": unwritten,
        "rounding_floor": floor,
        "budget": ACC_BUDGET_FP32 + 1.5 * floor,
        "verdict": verdict(rel_l2, floor, nonfinite > 0 or bool(unwritten)),
    }


def poisoned_run(contender, shape, pattern):
    """One call with its output poisoned beforehand; returns (out, whether it was poisoned)."""
    int_dtype = INT_VIEWS[shape.dtype]
    if contender.poison == "buffer":
        contender.out_buffer.view(int_dtype).fill_(pattern)
        return contender.call(), True
    if contender.poison != "allocator":
        return contender.call(), False
    # The call allocates its output through torch's caching allocator. Leave nothing cached but
    # a few poisoned blocks of the output's size, so its allocation reuses one of them; its
    # address then says whether it did. (A same-sized temporary that the call writes and frees
    # before allocating its output would make unwritten elements read as that temporary's data.)
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    size = (shape.batch, shape.dim, shape.seqlen)
    blocks = [
        torch.full(size, pattern, dtype=int_dtype, device=DEVICE) for _ in range(POISON_BLOCKS)
    ]
    addresses = {blk.data_ptr() for blk in blocks}
    del blocks  # freed on this stream: the call's allocations reuse them in stream order
    out = contender.call()
    return out, out.data_ptr() in addresses


def check(contender, shape, ref, floor):
    """Runs twice on two different poisons: accuracy of the first run, unwritten elements of
    either, and whether the two runs agree bit for bit."""
    int_dtype = INT_VIEWS[shape.dtype]
    first, unwritten, poisoned_runs, repeat_equal = None, None, 0, None
    for pattern in POISON[shape.dtype]:
        out, poisoned = poisoned_run(contender, shape, pattern)
        torch.cuda.synchronize()
        if tuple(out.shape) != tuple(ref.shape) or out.dtype != DTYPES[shape.dtype]:
            raise RuntimeError(
                f"output is {tuple(out.shape)} {out.dtype}, expected {tuple(ref.shape)} "
                f"{DTYPES[shape.dtype]}"
            )
        if poisoned:
            poisoned_runs += 1
            unwritten = max(unwritten or 0, int((out.view(int_dtype) == pattern).sum()))
        if first is None:
            first = out.clone()  # a contender may reuse its output buffer
        else:
            repeat_equal = torch.equal(first.view(int_dtype), out.view(int_dtype))
        del out
    result = score(first, ref, floor, unwritten)
    result["bitwise_repeat"] = repeat_equal
    if poisoned_runs:
        result["unwritten_check"] = f"{contender.poison} poison, {poisoned_runs} of 2 runs"
    elif contender.poison == "allocator":
        result["unwritten_check"] = "skipped: the output did not land in a poisoned block"
    else:
        result["unwritten_check"] = "skipped: " + (contender.no_poison_reason or "no out buffer")
    return result


# ---------------------------------------------------------------------------------------------
# Timing: warm-up, then CUDA events around one call after an L2 flush; median of many


def _event_times(call, flush, reps):
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for start, end in zip(starts, ends):
        # Writing a buffer larger than L2 evicts the inputs, so each call reads them from HBM.
        # It also hides host launch overhead: the host enqueues the call (Python, ctypes,
        # argument checks) while the flush runs, so the call is queued when `start` fires.
        # Host work longer than the flush would show up in the time.
        flush.zero_()
        start.record()
        call()
        end.record()
    torch.cuda.synchronize()
    return [start.elapsed_time(end) for start, end in zip(starts, ends)]


def _quantile(sorted_values, q):
    pos = q * (len(sorted_values) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def time_call(call, flush, args):
    """Median, IQR and extremes (ms) of one call over up to args.reps repeats (at least
    args.min_reps) or about args.max_seconds, after args.warmup untimed calls; all on torch's
    current stream."""
    for _ in range(args.warmup):
        call()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    _event_times(call, flush, 3)
    per_rep = (time.perf_counter() - t0) / 3
    reps = max(args.min_reps, min(args.reps, int(args.max_seconds / max(per_rep, 1e-6))))
    times = sorted(_event_times(call, flush, reps))
    q1, q3 = _quantile(times, 0.25), _quantile(times, 0.75)
    return {
        "median_ms": _quantile(times, 0.5),
        "q1_ms": q1,
        "q3_ms": q3,
        "iqr_ms": q3 - q1,
        "min_ms": times[0],
        "max_ms": times[-1],
        "reps": reps,
    }


# ---------------------------------------------------------------------------------------------
# Contenders


@dataclasses.dataclass
class Contender:
    call: object  # () -> out (batch, dim, seqlen) in the shape's dtype (out * silu(z) with z)
    poison: str  # "buffer": out_buffer is poisoned before a check; "allocator"; "none"
    out_buffer: torch.Tensor = None
    no_poison_reason: str = None


def load_ssmtune():
    """The ssmtune package beside this script (python/); it finds libssmtune.so through
    $SSMTUNE_LIBRARY_DIR, beside the package or in build/ (python/ssmtune/_lib.py)."""
    python_dir = str(Path(__file__).resolve().parent.parent / "python")
    if python_dir not in sys.path:
        sys.path.insert(0, python_dir)
    import ssmtune

    return ssmtune


def load_mamba(path):
    """mamba_ssm's compiled extension, selective_scan_cuda (after torch, which it links)."""
    if path and path not in sys.path:
        sys.path.insert(0, path)
    import selective_scan_cuda

    return selective_scan_cuda


def load_seed(path):
    """The seed's Triton file, loaded from where it is (its code stays outside the project)."""
    path = Path(path).resolve()
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    spec = importlib.util.spec_from_file_location("seed_kernels", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as an import would, for tools that look modules up there
    spec.loader.exec_module(module)
    return module


def setup_ssmtune(module, shape, inp, args, result):
    """ssmtune.selective_scan_fn; with --tune, tunes the shape first (twice: the second call
    finds the database filled). The explain text and tune times go into `result`."""
    if args.tune:
        kwargs = dict(
            groups=shape.groups,
            dtype=shape.dtype,
            with_d=inp.full,
            with_z=inp.full,
            delta_bias=inp.full,
            softplus=inp.full,
            time_limit=args.tune_time_limit,
        )
        dims = (shape.batch, shape.dim, shape.seqlen, shape.dstate)
        tune = result["tune"] = {}
        try:
            t0 = time.perf_counter()
            tune["summary"] = module.tune(*dims, **kwargs)
            tune["first_s"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            module.tune(*dims, **kwargs)
            tune["cached_s"] = time.perf_counter() - t0
        except Exception as e:  # timed untuned then; the table says why
            tune["error"] = f"{type(e).__name__}: {e}"
    try:
        result["explain"] = module.explain(*inp.args())
    except Exception as e:
        result["explain"] = f"explain failed: {type(e).__name__}: {e}"
    return Contender(
        call=lambda: module.selective_scan_fn(*inp.args()),
        poison="allocator",  # selective_scan_fn allocates its outputs; it takes no out tensors
    )


def setup_mamba(module, shape, inp, args, result):
    """selective_scan_cuda.fwd(u, delta, A, B, C, D, z, delta_bias, delta_softplus) returns
    [out, x (chunk states)] plus out_z when z is given; B and C must be 4-D (the Python wrapper
    does that unsqueeze), last dims contiguous, D and delta_bias fp32 or None. Some forks add a
    tenth argument (prev_state): tried with None when the nine-argument call is refused."""
    base = inp.args()
    extra = ()
    try:
        module.fwd(*base)
    except TypeError:  # pybind11's "incompatible function arguments"
        extra = (None,)
        module.fwd(*base, *extra)
        result["note"] = "fwd takes a 10th argument (prev_state): passed None"
    pick = 2 if inp.z is not None else 0
    return Contender(call=lambda: module.fwd(*base, *extra)[pick], poison="allocator")


def _pow2(x):
    return x > 0 and x & (x - 1) == 0


def setup_seed(module, shape, inp, args, result):
    """The seed's two-pass chunked kernel, forward only: mamba(x, a, b, c, delta, extra, K,
    D_step, back=0) runs pass 1 (chunk carries), a scan over chunks, pass 2 (y)."""
    if shape.dtype != "fp32":
        raise Skipped(f"fp32 only (the seed builds fp32 tensors and scratch); not {shape.dtype}")
    if inp.full:
        raise Skipped("the seed kernel has no D, z, delta_bias or softplus (--full)")
    b, d, L, n = shape.batch, shape.dim, shape.seqlen, shape.dstate
    k = min(args.seed_k, L)
    dstep = args.seed_dstep or max(1, min(16, 64 // n))  # 16 at dstate 4, as perf.md measured
    while d % dstep:
        dstep //= 2
    why = []
    if not _pow2(n):
        why.append(f"dstate {n} is not a power of two (tl.arange over states)")
    if not _pow2(k):
        why.append(f"K={k} is not a power of two")
    if L % k:
        why.append(f"seqlen {L} is not a multiple of K={k}")
    elif not _pow2(L // k):
        why.append(f"{L // k} chunks is not a power of two (one tl.arange scans the carries)")
    if not _pow2(dstep):
        why.append(f"D_step={dstep} is not a power of two")
    if n * dstep * k > TRITON_MAX_NUMEL:
        why.append(f"block of dstate x D_step x K = {n * dstep * k} elements is over Triton's max")
    if max(b * d * L, 4 * b * n * d * max(1, L // k)) >= 1 << 31:
        why.append("offsets overflow int32")
    if why:
        raise Skipped("; ".join(why))
    result["config"] = {"K": k, "D_step": dstep}
    # Its layouts, built outside the timed region: u, delta (batch, 1, dim, L); A per batch and
    # transposed (batch, dstate, dim, 1); B, C (batch, dstate, 1, L), which is the memory of our
    # (batch, 1, dstate, L); y (batch, 1, dim, L).
    x = inp.u.view(b, 1, d, L)
    delta = inp.delta.view(b, 1, d, L)
    a = inp.A.t().unsqueeze(0).expand(b, n, d).unsqueeze(-1).contiguous()
    bb = inp.B.view(b, n, 1, L)
    cc = inp.C.view(b, n, 1, L)
    y = torch.empty(b, 1, d, L, device=DEVICE, dtype=torch.float32)
    # Chunk carries sized for the K in use (the seed report's error was buffers sized for
    # another K). The gradient buffers are not touched with back=0: one small stand-in.
    h = torch.zeros(2, 2, b, n, d, L // k, device=DEVICE, dtype=torch.float32)
    unused = torch.zeros(2, 2, 1, device=DEVICE, dtype=torch.float32)
    extra = (unused, unused, unused, unused, unused, y, unused, h, unused)

    def call():
        module.mamba(x, a, bb, cc, delta, extra, K=k, D_step=dstep, back=0)
        return y.view(b, d, L)

    return Contender(call=call, poison="buffer", out_buffer=y)


def torch_loop_forward(inp):
    """The obvious implementation: fp32, one step of the recurrence per time step."""
    u, delta = inp.u.float(), inp.delta.float()
    if inp.delta_bias is not None:
        delta = delta + inp.delta_bias[None, :, None]
    if inp.delta_softplus:
        delta = F.softplus(delta)
    dim, groups = u.shape[1], inp.B.shape[1]
    B, C = inp.B.float(), inp.C.float()  # (batch, groups, dstate, seqlen)
    if groups > 1:
        B, C = (x.repeat_interleave(dim // groups, dim=1) for x in (B, C))
    decay = torch.exp(delta[:, :, None, :] * inp.A[None, :, :, None])  # (batch, dim, dstate, L)
    drive = (delta * u)[:, :, None, :] * B
    h = torch.zeros_like(decay[..., 0])
    ys = []
    for t in range(u.shape[2]):
        h = decay[..., t] * h + drive[..., t]
        ys.append((h * C[..., t]).sum(-1))
    y = torch.stack(ys, dim=-1)
    if inp.D is not None:
        y = y + inp.D[None, :, None] * u
    if inp.z is not None:
        y = y * F.silu(inp.z.float())
    return y.to(inp.u.dtype)


def setup_torch_loop(module, shape, inp, args, result):
    if shape.exps > args.torch_max_work:
        raise Skipped(f"batch*dim*dstate*seqlen {shape.exps} > --torch-max-work")
    return Contender(
        call=lambda: torch_loop_forward(inp),
        poison="none",
        no_poison_reason="its output is built by torch ops",
    )


SETUPS = {
    "mamba_ssm": setup_mamba,
    "ssmtune": setup_ssmtune,
    "seed_triton": setup_seed,
    "torch_loop": setup_torch_loop,
}


def load_contenders(args):
    """name -> (module or None, why it is not there) for each selected contender."""
    loaders = {
        "mamba_ssm": lambda: load_mamba(args.mamba_path),
        "ssmtune": load_ssmtune,
        "seed_triton": lambda: load_seed(args.seed_kernels),
        "torch_loop": lambda: None,  # needs no module
    }
    loaded = {}
    for name in args.contenders:
        if name == "seed_triton" and not args.seed_kernels:
            loaded[name] = (None, "not requested (--seed-kernels PATH)")
            continue
        try:
            loaded[name] = (loaders[name](), None)
        except Exception as e:
            loaded[name] = (None, f"not importable ({type(e).__name__}: {e})")
    return loaded


# ---------------------------------------------------------------------------------------------
# One shape


def progress(msg):
    print(msg, file=sys.stderr, flush=True)


def cuda_broken():
    """The message of a sticky CUDA error (a fault poisons the context), else None."""
    try:
        torch.cuda.synchronize()
        return None
    except Exception as e:
        return f"{type(e).__name__}: {e}"


def run_contender(name, loaded, shape, inp, ref, floor, flush, args, tag):
    result = {"status": None}
    module, why_not = loaded[name]
    try:
        if why_not:
            raise Skipped(why_not)
        t0 = time.perf_counter()
        contender = SETUPS[name](module, shape, inp, args, result)
        acc = result["accuracy"] = check(contender, shape, ref, floor)
        progress(
            f"{tag} {name} check ... {acc['verdict']} rel L2 {acc['rel_l2']:.3g} "
            f"({time.perf_counter() - t0:.1f} s)"
        )
        if acc["verdict"] == "defect" and not args.time_failed:
            result["status"] = "defect"
            result["reason"] = "not timed (a defect; --time-failed times it anyway)"
            return result
        t0 = time.perf_counter()
        timing = result["timing"] = time_call(contender.call, flush, args)
        result["status"] = "ok"
        progress(
            f"{tag} {name} time ... {timing['median_ms']:.4g} ms median of {timing['reps']} "
            f"({time.perf_counter() - t0:.1f} s)"
        )
    except Skipped as e:
        result["status"], result["reason"] = "skipped", str(e)
        progress(f"{tag} {name} ... skipped: {e}")
    except Exception as e:
        result["status"], result["reason"] = "error", f"{type(e).__name__}: {e}"
        result["traceback"] = traceback.format_exc()
        progress(f"{tag} {name} ... error: {result['reason']}")
    return result


def add_speed(record, shape, full):
    """GB/s, Gexp/s, time over the floor and the ratio to mamba_ssm, from each median."""
    mamba = record["contenders"].get("mamba_ssm", {}).get("timing")
    mamba_ms = mamba["median_ms"] if mamba else None
    for result in record["contenders"].values():
        timing = result.get("timing")
        if not timing:
            continue
        s = timing["median_ms"] * 1e-3
        result["speed"] = {
            "gb_per_s": shape.min_bytes(full) / s / 1e9,
            "gexp_per_s": shape.exps / s / 1e9,
            "x_floor": s / shape.floor_s(full),
            "vs_mamba": mamba_ms / timing["median_ms"] if mamba_ms else None,
        }


def run_shape(pos, total, shape, loaded, flush, args):
    tag = f"[shape {pos}/{total} {shape.label}]"
    seed = shape_seed(args.seed, shape)
    record = {
        "shape": dataclasses.asdict(shape),
        "label": shape.label,
        "seed": seed,
        "min_bytes": shape.min_bytes(args.full),
        "exps": shape.exps,
        "bytes_floor_ms": shape.min_bytes(args.full) / COPY_BYTES_PER_S * 1e3,
        "exp_floor_ms": shape.exps / EXP_PER_S * 1e3,
        "floor_ms": shape.floor_s(args.full) * 1e3,
        "contenders": {},
    }
    t0 = time.perf_counter()
    progress(f"{tag} inputs (seed {seed}) and fp64 reference ...")
    try:
        inp = make_inputs(shape, args.full, seed)
        ref = reference_fp64(inp)
        floor = rounding_floor(ref, shape.dtype)
        torch.cuda.synchronize()
    except Exception as e:
        record["error"] = f"reference: {type(e).__name__}: {e}"
        broken = cuda_broken()
        if broken:
            record["aborted"] = f"CUDA context unusable after the reference: {broken}"
        progress(f"{tag} ref ... failed: {record['error']}")
        return record
    record["ref_s"] = time.perf_counter() - t0
    record["rounding_floor"] = floor
    progress(f"{tag} ref ... ok {record['ref_s']:.1f} s")
    for name in (c for c in CONTENDERS if c in args.contenders):
        result = run_contender(name, loaded, shape, inp, ref, floor, flush, args, tag)
        record["contenders"][name] = result
        if result["status"] == "error":
            broken = cuda_broken()
            if broken:
                record["aborted"] = f"CUDA context unusable after {name}: {broken}"
                progress(f"{tag} {record['aborted']}; stopping")
                break
    del inp, ref  # main empties torch's cache after each shape
    add_speed(record, shape, args.full)
    return record


# ---------------------------------------------------------------------------------------------
# Reporting


def _fmt(value, spec):
    return "n/a" if value is None else format(value, spec)


def _short(text, width=60):
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 3] + "..."


def report(meta, records, args):
    out = ["# Selective scan forward, side by side", ""]
    out.append(
        f"{meta['device']} ({meta['sm_count']} SMs, cc {meta['capability']}), "
        f"torch {meta['torch']}, CUDA {meta['cuda']}, triton {meta['triton']}"
    )
    out.append(
        f"seed {meta['seed']} (--seed {meta['seed']} draws the same inputs); "
        + ("--full: D, z, delta_bias, softplus" if args.full else "no D, z, bias or softplus")
    )
    for name, why in meta["unavailable"].items():
        out.append(f"{name}: {why}")
    out.append(
        f"floor = max(bytes / {COPY_BYTES_PER_S:.3g} B/s, exps / {EXP_PER_S:.3g} exp/s) "
        "(shared/docs/perf.md); vs mamba = mamba ms / ms (>1: faster than mamba_ssm)"
    )
    for rec in records:
        ssm = rec["contenders"].get("ssmtune", {})
        if "explain" in ssm:
            out += ["", f"## ssmtune explain {rec['label']}", "", "```", ssm["explain"].rstrip()]
            out.append("```")
    if args.tune:
        out += ["", "## ssmtune tune", "", "| shape | tune s | cached tune s | note |"]
        out.append("| --- | --- | --- | --- |")
        for rec in records:
            tune = rec["contenders"].get("ssmtune", {}).get("tune", {})
            out.append(
                f"| {rec['label']} | {_fmt(tune.get('first_s'), '.1f')} | "
                f"{_fmt(tune.get('cached_s'), '.2f')} | {_short(tune.get('error', ''))} |"
            )
    out += ["", "## Floors", "", "| shape | MB moved | Gexp | bytes floor us | exp floor us |"]
    out.append("| --- | --- | --- | --- | --- |")
    for rec in records:
        out.append(
            f"| {rec['label']} | {rec['min_bytes'] / 1e6:.1f} | {rec['exps'] / 1e9:.3f} | "
            f"{rec['bytes_floor_ms'] * 1e3:.1f} | {rec['exp_floor_ms'] * 1e3:.1f} |"
        )
    out += ["", "## Forward", ""]
    out.append(
        "| shape | contender | median ms | IQR ms | vs mamba | GB/s | Gexp/s | x floor "
        "| rel L2 | max err | nan/inf | unwritten | verdict |"
    )
    out.append("| --- " * 13 + "|")
    for rec in records:
        if "error" in rec:
            out.append(f"| {rec['label']} | all | " + "n/a | " * 10 + _short(rec["error"]) + " |")
        for name, res in rec["contenders"].items():
            t, s, a = res.get("timing") or {}, res.get("speed") or {}, res.get("accuracy") or {}
            rel = a.get("rel_l2")
            verdict_text = a.get("verdict", "n/a")
            if res["status"] != "ok":
                verdict_text = f"{res['status']}: {_short(res.get('reason', ''))}"
            out.append(
                f"| {rec['label']} | {name} | {_fmt(t.get('median_ms'), '.4g')} | "
                f"{_fmt(t.get('iqr_ms'), '.2g')} | {_fmt(s.get('vs_mamba'), '.2f')} | "
                f"{_fmt(s.get('gb_per_s'), '.0f')} | {_fmt(s.get('gexp_per_s'), '.0f')} | "
                f"{_fmt(s.get('x_floor'), '.1f')} | {_fmt(rel, '.2e')} | "
                f"{_fmt(a.get('max_abs_err_over_max_ref'), '.2e')} | "
                f"{_fmt(a.get('nan_inf'), 'd')} | {_fmt(a.get('unwritten'), 'd')} | "
                f"{verdict_text} |"
            )
    return "\n".join(out)


def _finite_or_none(value):
    """JSON has no NaN or Infinity: non-finite figures become null (the counts say why)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_or_none(v) for v in value]
    return value


def write_json(path, meta, records):
    with open(path, "w") as f:
        json.dump(_finite_or_none({"meta": meta, "shapes": records}), f, indent=1)
        f.write("\n")


def device_meta(args, loaded):
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    try:
        import triton

        triton_version = triton.__version__
    except Exception:
        triton_version = "n/a"
    return {
        "device": props.name,
        "capability": f"{props.major}.{props.minor}",
        "sm_count": props.multi_processor_count,
        "total_memory": props.total_memory,
        "l2_cache_bytes": getattr(props, "L2_cache_size", None),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "triton": triton_version,
        "python": platform.python_version(),
        "seed": args.seed,
        "full": args.full,
        "argv": sys.argv,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "floors": {"copy_bytes_per_s": COPY_BYTES_PER_S, "exp_per_s": EXP_PER_S},
        "timing": {
            "warmup": args.warmup,
            "reps": args.reps,
            "min_reps": args.min_reps,
            "max_seconds": args.max_seconds,
            "flush_mib": args.flush_mib,
        },
        "unavailable": {name: why for name, (_, why) in loaded.items() if why},
    }


# ---------------------------------------------------------------------------------------------
# Command line


def parse_args(argv):
    shapes_help = "; ".join(f"{i}: {Shape(*s).label}" for i, s in enumerate(DEFAULT_SHAPES))
    p = argparse.ArgumentParser(
        description="Side-by-side forward benchmark of the selective scan: ssmtune, mamba_ssm's "
        "CUDA kernel, the seed's Triton kernel and a PyTorch loop, each checked against fp64 "
        "before it is timed.",
    )
    p.add_argument(
        "--shapes",
        type=parse_shapes,
        default=None,
        help=f"comma-separated indices or BxDxLxN[:dtype] (default: all; {shapes_help})",
    )
    p.add_argument("--seed", type=int, default=None, help="input seed (default: from the clock)")
    p.add_argument(
        "--full", action="store_true", help="add D, z, delta_bias and delta_softplus=True"
    )
    p.add_argument(
        "--contenders",
        default=",".join(CONTENDERS),
        help="comma-separated subset of " + ", ".join(CONTENDERS),
    )
    p.add_argument(
        "--tune",
        action="store_true",
        help="ssmtune.tune each shape before timing (twice: fresh, then cached)",
    )
    p.add_argument(
        "--tune-time-limit",
        type=float,
        default=30.0,
        help="seconds of measuring per tune (0: no limit; default %(default)s)",
    )
    p.add_argument(
        "--mamba-path",
        default=None,
        help="directory put first on sys.path before import selective_scan_cuda",
    )
    p.add_argument(
        "--seed-kernels",
        default=None,
        help="path of the seed's seed_kernels.py (shared/seed/): time its kernel",
    )
    p.add_argument(
        "--seed-k", type=int, default=128, help="seed kernel chunk length K (default %(default)s)"
    )
    p.add_argument(
        "--seed-dstep",
        type=int,
        default=0,
        help="seed kernel channels per block (0: 16 at dstate 4, 64/dstate above)",
    )
    p.add_argument(
        "--torch-max-work",
        type=int,
        default=TORCH_LOOP_MAX_WORK,
        help="largest batch*dim*dstate*seqlen the PyTorch loop runs (default %(default)s)",
    )
    p.add_argument(
        "--warmup", type=int, default=3, help="untimed calls before timing (default %(default)s)"
    )
    p.add_argument(
        "--reps", type=int, default=100, help="most timed calls per contender (default %(default)s)"
    )
    p.add_argument(
        "--min-reps",
        type=int,
        default=10,
        help="fewest timed calls per contender (default %(default)s)",
    )
    p.add_argument(
        "--max-seconds",
        type=float,
        default=2.0,
        help="seconds of timing per contender, within the rep bounds (default %(default)s)",
    )
    p.add_argument(
        "--flush-mib",
        type=int,
        default=1024,
        help="MiB written before each timed call to flush L2 (default %(default)s; L2 is 60 MB)",
    )
    p.add_argument("--time-failed", action="store_true", help="time defects too")
    p.add_argument(
        "--json",
        default="bench_compare.json",
        help="where to write all numbers (default %(default)s)",
    )
    args = p.parse_args(argv)
    args.shapes = args.shapes or [Shape(*s) for s in DEFAULT_SHAPES]
    args.contenders = [c.strip() for c in args.contenders.split(",") if c.strip()]
    unknown = set(args.contenders) - set(CONTENDERS)
    if unknown:
        p.error(f"unknown contenders: {', '.join(sorted(unknown))}")
    if args.min_reps < 1 or args.reps < args.min_reps:
        p.error("want 1 <= --min-reps <= --reps")
    return args


def main(argv=None):
    args = parse_args(argv)
    if not torch.cuda.is_available():
        print("compare.py: no CUDA device (torch.cuda.is_available() is False)", file=sys.stderr)
        return 2
    if args.seed is None:
        args.seed = time.time_ns() % (1 << 31)
    progress(f"seed {args.seed}")
    loaded = load_contenders(args)
    meta = device_meta(args, loaded)
    for name, why in meta["unavailable"].items():
        print(f"{name}: {why}", flush=True)
    flush = torch.empty(args.flush_mib << 20, dtype=torch.uint8, device=DEVICE)
    records = []
    for pos, shape in enumerate(args.shapes, 1):
        with torch.no_grad():
            records.append(run_shape(pos, len(args.shapes), shape, loaded, flush, args))
        torch.cuda.empty_cache()  # give back the shape's inputs, reference and outputs
        write_json(args.json, meta, records)  # after every shape, so a crash keeps the rest
        if records[-1].get("aborted"):
            break
    print(report(meta, records, args), flush=True)
    progress(f"wrote {args.json}")
    return 1 if any(r.get("aborted") or "error" in r for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
