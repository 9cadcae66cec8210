"""Tuning from Python through the library: ssmtune_tune in libssmtune.so
(over ctypes: tuning is not per-call hot), in this process, with each config
measured in an `ssmtune worker` process (the bundled command), so a kernel
that faults cannot take Python down.

    ssmtune.tune(8, 1536, 2048, 16, dtype="bf16", time_limit=30)   # a shape
    with ssmtune.record() as rec:                                   # a model's shapes
        model(x)
    print(ssmtune.tune(rec, time_limit=30))

`record()` collects the problem keys of the layouts the ops prepare inside
the block (ops.py notes a layout on a plan-cache miss only; entering the
block empties the plan caches, so every layout the block runs is seen once;
re-preparing a layout the runtime knows is one lookup in C). After a tune
the runtime selects again, and the plan caches are emptied, so the next
calls run the tuned configs. Needs no torch except for recording.
"""
import ctypes
import os
import sys
import time

from . import _lib

_DTYPES = {"fp32": 0, "float32": 0, "fp16": 1, "float16": 1, "half": 1, "bf16": 2,
           "bfloat16": 2}

EVENT_NAMES = ("start", "compiling", "compiled", "measured", "done")


class TuneOptions(ctypes.Structure):
    _fields_ = [("time_limit_s", ctypes.c_double), ("strategy", ctypes.c_char_p),
                ("max_configs", ctypes.c_int32), ("seed", ctypes.c_uint64),
                ("force", ctypes.c_int32), ("resume", ctypes.c_int32),
                ("max_error", ctypes.c_double), ("config_timeout_s", ctypes.c_double)]


class TuneEvent(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int32), ("problem_key", ctypes.c_char_p),
                ("message", ctypes.c_char_p), ("compiled", ctypes.c_int32),
                ("timed", ctypes.c_int32), ("planned", ctypes.c_int32),
                ("config", ctypes.c_char_p), ("ms", ctypes.c_double), ("usable", ctypes.c_int32),
                ("best_config", ctypes.c_char_p), ("best_ms", ctypes.c_double),
                ("elapsed_s", ctypes.c_double)]


class TuneResultC(ctypes.Structure):
    _fields_ = ([("problem_key", ctypes.c_char * 256), ("config", ctypes.c_char * 256),
                 ("best_ms", ctypes.c_double), ("best_rel_l2", ctypes.c_double)]
                + [(n, ctypes.c_int32) for n in (
                    "found", "already_tuned", "configs", "pruned", "compiled", "compile_failed",
                    "timed", "faulted", "inaccurate", "from_db", "cut_short", "cancelled")]
                + [("wall_s", ctypes.c_double)])


PROGRESS_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(TuneEvent), ctypes.c_void_p)

_bound = None


def _library():
    """libssmtune.so with the tuning entry points' signatures set (once)."""
    global _bound
    if _bound is not None:
        return _bound
    lib = _lib.library()
    lib.ssmtune_tune.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(TuneOptions),
                                 PROGRESS_FN, ctypes.c_void_p, ctypes.POINTER(TuneResultC)]
    lib.ssmtune_tune.restype = ctypes.c_int
    lib.ssmtune_fwd_problem_key.argtypes = [ctypes.POINTER(_lib.FwdArgs), ctypes.c_char_p,
                                            ctypes.c_size_t]
    lib.ssmtune_fwd_problem_key.restype = ctypes.c_int
    _bound = lib
    return lib


# ---- Problem keys --------------------------------------------------------

def _fwd_args(metas, delta_softplus):
    """A layout (data NULL, present = rank > 0) from 12 (dtype, shape, strides) or None,
    in ssmtune_fwd_args order (as _plans.layout takes them)."""
    a = _lib.FwdArgs()
    names = ("u", "delta", "A", "B", "C", "D", "z", "delta_bias", "h0", "out", "out_z",
             "last_state")
    if len(metas) != len(names):
        raise ValueError(f"ssmtune: expected {len(names)} tensor descriptions, got {len(metas)}")
    for name, m in zip(names, metas):
        if m is None:
            continue
        t = getattr(a, name)
        dtype, shape, strides = m
        if not 1 <= len(shape) <= 4 or len(strides) != len(shape):
            raise ValueError(f"ssmtune: {name}: rank {len(shape)} is not in [1, 4]")
        t.dtype, t.rank = dtype, len(shape)
        for i, (n, s) in enumerate(zip(shape, strides)):
            t.shape[i], t.stride[i] = n, s
    a.delta_softplus = 1 if delta_softplus else 0
    return a


def layout_key(metas, delta_softplus):
    """The forward problem key of a layout (the library validates it as prepare does)."""
    buf = ctypes.create_string_buffer(256)
    args = _fwd_args(metas, delta_softplus)
    if _library().ssmtune_fwd_problem_key(ctypes.byref(args), buf, len(buf)) != 0:
        raise ValueError("ssmtune: " + _lib.last_error())
    return buf.value.decode()


def _dtype_code(dtype):
    name = str(dtype).replace("torch.", "")
    if name not in _DTYPES:
        raise ValueError(f"ssmtune: dtype {dtype!r}: expected fp32, fp16 or bf16")
    return _DTYPES[name]


def _contiguous(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def problem_key(batch, dim, seqlen, dstate, groups=1, dtype="fp32", *, family="fwd",
                constant_b=False, constant_c=False, constant_bc=False, with_d=False,
                with_z=False, delta_bias=False, softplus=False, last_state=False,
                initial_state=False, dlast=False):
    """The problem key of a shape, e.g. problem_key(8, 1536, 2048, 16, dtype="bf16") ==
    "fwd:b8.d1536.l2048.n16.g1.bf16.vB.vC". family="bwd" gives the backward's key
    ("bwd:" + the forward key's body; dlast=True adds ".dlast": a gradient flows
    into last_state, which needs last_state=True)."""
    for name, v in (("batch", batch), ("dim", dim), ("seqlen", seqlen), ("dstate", dstate),
                    ("groups", groups)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"ssmtune: {name} must be an int, got {type(v).__name__} {v!r}")
        if v < 1:
            raise ValueError(f"ssmtune: {name} must be >= 1, got {v}")
    if family not in ("fwd", "bwd"):
        raise ValueError(f"ssmtune: family {family!r}: expected 'fwd' or 'bwd'")
    if dlast and family != "bwd":
        raise ValueError("ssmtune: dlast is a backward flag (family='bwd')")
    if dlast and not last_state:
        raise ValueError("ssmtune: dlast needs last_state=True")
    dt = _dtype_code(dtype)
    b, d, l, n, g = (int(x) for x in (batch, dim, seqlen, dstate, groups))
    bdl = (dt, (b, d, l), _contiguous((b, d, l)))
    const = (0, (d, n), _contiguous((d, n)))
    var = (dt, (b, g, n, l), _contiguous((b, g, n, l)))
    vec = (0, (d,), (1,))
    state = (0, (b, d, n), _contiguous((b, d, n)))
    metas = [bdl, bdl, const,
             const if (constant_b or constant_bc) else var,
             const if (constant_c or constant_bc) else var,
             vec if with_d else None, bdl if with_z else None, vec if delta_bias else None,
             state if initial_state else None,
             bdl, bdl if with_z else None, state if last_state else None]
    key = layout_key(metas, softplus)
    return bwd_key(key, dlast) if family == "bwd" else key


def bwd_key(fwd_key, dlast=False):
    """The backward problem of a forward key: "bwd:" + its body (+ ".dlast")."""
    return "bwd:" + fwd_key.split(":", 1)[-1] + (".dlast" if dlast else "")


# ---- Recording -------------------------------------------------------------

recorders = []  # active Recordings; ops notes layouts into them (only while non-empty)


class Recording:
    """The distinct problem keys the ops prepared inside a `with record():`
    block, in the order first seen. Iterable; pass it to tune()."""

    def __init__(self):
        self.keys = []

    def __enter__(self):
        _clear_plan_caches()
        recorders.append(self)
        return self

    def __exit__(self, *exc):
        recorders.remove(self)
        return False

    def add(self, key):
        if key not in self.keys:
            self.keys.append(key)

    def __iter__(self):
        return iter(self.keys)

    def __len__(self):
        return len(self.keys)

    def __repr__(self):
        return f"Recording({self.keys!r})"


def record():
    """A context manager recording the problems the ssmtune ops run inside it."""
    return Recording()


def note_key(key):
    """Records `key` into every active recording (ops call this on a miss)."""
    for r in recorders:
        r.add(key)


def note_fwd(metas, delta_softplus):
    """Records a forward layout (as ops._prepare describes it)."""
    note_key(layout_key(metas, delta_softplus))


def note_bwd(fwd_metas, delta_softplus, dlast=False):
    """Records a backward problem from its forward's layout (for the backward
    op's plan-cache miss: `if _tune.recorders: _tune.note_bwd(...)`)."""
    note_key(bwd_key(layout_key(fwd_metas, delta_softplus), dlast))


def _clear_plan_caches():
    """Empties the ops' plan caches, so the next call of each layout prepares
    (and selects) again; nothing to do when the ops were never imported."""
    ops = sys.modules.get(__package__ + ".ops")
    if ops is None:
        return
    from ._plans import PlanCache
    for value in list(vars(ops).values()):
        if isinstance(value, PlanCache):
            value.clear()


# ---- Tuning ------------------------------------------------------------------

class TuneResult:
    """One problem's outcome (the fields of ssmtune_tune_result), or its error."""

    FIELDS = ("problem", "config", "best_ms", "best_rel_l2", "found", "already_tuned",
              "configs", "pruned", "compiled", "compile_failed", "timed", "faulted",
              "inaccurate", "from_db", "cut_short", "cancelled", "wall_s", "error")

    def __init__(self, **kw):
        for f in self.FIELDS:
            setattr(self, f, kw.get(f))

    @classmethod
    def from_c(cls, r):
        kw = {f: getattr(r, f) for f in cls.FIELDS[2:-1]}
        for f in ("found", "already_tuned", "cut_short", "cancelled"):
            kw[f] = bool(kw[f])
        return cls(problem=r.problem_key.decode(), config=r.config.decode() or None, **kw)

    def as_dict(self):
        return {f: getattr(self, f) for f in self.FIELDS}

    def __repr__(self):
        return f"TuneResult({self.as_dict()!r})"


class TuneSummary(list):
    """The TuneResults of one tune() call; str() is a table."""

    def __str__(self):
        rows = [("problem", "best", "ms", "timed", "wall s", "note")]
        for r in self:
            note = (r.error or ("already tuned" if r.already_tuned else
                                "cancelled" if r.cancelled else
                                "cut short" if r.cut_short else ""))
            rows.append((r.problem, r.config or "(none)",
                         f"{r.best_ms:.4f}" if r.best_ms else "-", str(r.timed or 0),
                         f"{r.wall_s:.1f}" if r.wall_s else "-", note))
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
                         for row in rows)


def _event_dict(e):
    def s(b):
        return b.decode() if b else ""
    return {"kind": EVENT_NAMES[e.kind] if 0 <= e.kind < len(EVENT_NAMES) else str(e.kind),
            "problem": s(e.problem_key), "message": s(e.message), "compiled": e.compiled,
            "timed": e.timed, "planned": e.planned, "config": s(e.config), "ms": e.ms,
            "usable": bool(e.usable), "best_config": s(e.best_config), "best_ms": e.best_ms,
            "elapsed_s": e.elapsed_s}


class Printer:
    """Progress on a stream: on a terminal one line redrawn in place, else a
    line per event (measured configs at most every `every_s` seconds)."""

    def __init__(self, stream=None, every_s=2.0, index=None):
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.every_s = every_s
        self.index = index or ""  # "[2/3] " when tuning several problems
        self._last = float("-inf")  # when a measured line was last printed

    def line(self, e):
        best = (f"best {e['best_config']} {e['best_ms']:.4f} ms" if e["best_config"]
                else "no best yet")
        if e["kind"] == "measured":
            return (f"{self.index}tune {e['problem']}: timed {e['timed']}/{e['planned']}, "
                    f"{best}, {e['elapsed_s']:.0f} s")
        if e["kind"] == "compiling":
            return f"{self.index}tune {e['problem']}: {e['message'] or 'compiling'}"
        if e["kind"] == "done":
            tail = f"; {e['message']}" if e["message"] else ""
            return (f"{self.index}tune {e['problem']}: done in {e['elapsed_s']:.1f} s, "
                    f"timed {e['timed']}, {best}{tail}")
        return f"{self.index}tune {e['problem']}: {e['message'] or e['kind']}"

    def __call__(self, e):
        text = self.line(e)
        if self.tty:
            end = "\n" if e["kind"] == "done" else ""
            self.stream.write("\r\x1b[K" + text + end)
        else:
            if e["kind"] == "measured":
                now = time.monotonic()
                if now - self._last < self.every_s:
                    return False
                self._last = now
            self.stream.write(text + "\n")
        self.stream.flush()
        return False


def _runtime_handle(device, db):
    """(handle, owned): the extension's runtime for `device` (the one the ops
    use, so they see the tuned configs) when `db` is the default; else a runtime
    of our own on `db`, destroyed after the tune."""
    if db is None or os.fspath(db) == os.environ.get("SSMTUNE_DB"):
        try:
            from . import _ext
            return ctypes.c_void_p(_ext.runtime(device)), False
        except (OSError, ImportError):
            if device == 0:
                return _lib.runtime(), False
    handle = ctypes.c_void_p()
    path = None if db is None else os.fspath(db).encode()
    if _lib.library().ssmtune_runtime_create(path, device, ctypes.byref(handle)) != 0:
        raise RuntimeError("ssmtune: " + _lib.last_error())
    return handle, True


def _keys_of(args, shape):
    if args and isinstance(args[0], Recording):
        if len(args) > 1 or shape:
            raise TypeError("ssmtune.tune(recording, ...) takes options only")
        return list(args[0].keys)
    if args and isinstance(args[0], str):
        return list(args)
    if args and isinstance(args[0], (list, tuple)):
        if len(args) > 1 or shape:
            raise TypeError("ssmtune.tune(keys, ...) takes options only")
        return list(args[0])
    return [problem_key(*args, **shape)]


def tune(*args, time_limit=None, strategy="halving", max_configs=0, seed=0, force=False,
         resume=False, max_error=0.0, config_timeout=0.0, device=None, db=None,
         progress=True, **shape):
    """Tunes problems on a GPU into the tuning database, in this process.

    What: a shape, tune(batch, dim, seqlen, dstate, groups=1, dtype="fp32",
    family="fwd"|"bwd", with_d=, with_z=, delta_bias=, softplus=, last_state=,
    initial_state=, constant_b=, constant_c=, constant_bc=, dlast=) (see
    problem_key); a Recording (record()); or problem keys (strings, or one list).
    Options: time_limit wall seconds per problem, compiling included (None: no
    limit), strategy "halving" | "exhaustive" | "random",
    max_configs (0: no limit), seed (inputs and the random strategy; 0: fresh),
    force (measure everything again), resume (measure what a tuned problem
    lacks), max_error (a tighter rel L2 budget), config_timeout seconds per
    config (0: 60), device (None: torch's current CUDA device, else 0), db (None:
    $SSMTUNE_DB or the default; the runtime the ops use), progress: True (print
    to stderr), False, or a function of an event dict that returns True to stop.
    Ctrl-C stops after the config being measured (the best so far is recorded)
    and then raises KeyboardInterrupt.

    Returns a TuneSummary (a list of TuneResult; str() is a table). A problem
    that fails is a result with `error`; RuntimeError after the others ran
    when any failed (its .summary holds the results)."""
    if time_limit is not None:
        if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)):
            raise TypeError(f"ssmtune.tune: time_limit must be a number of seconds, got "
                            f"{time_limit!r}")
        if not (time_limit >= 0 and time_limit != float("inf")):
            raise ValueError(f"ssmtune.tune: time_limit must be finite and >= 0, got {time_limit}")
    keys = _keys_of(args, shape)
    if device is None:
        device = 0
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            device = torch.cuda.current_device()
    lib = _library()
    opts = TuneOptions(time_limit_s=float(time_limit or 0), strategy=strategy.encode(),
                       max_configs=int(max_configs), seed=int(seed), force=int(bool(force)),
                       resume=int(bool(resume)), max_error=float(max_error),
                       config_timeout_s=float(config_timeout))
    summary = TuneSummary()
    if not keys:
        return summary
    handle, owned = _runtime_handle(device, db)
    interrupted = []
    try:
        for i, key in enumerate(keys):
            index = f"[{i + 1}/{len(keys)}] " if len(keys) > 1 else ""
            if progress is True:
                show = Printer(index=index)
            elif callable(progress):
                show = progress
            else:
                show = None

            def on_event(event, user, show=show):
                try:
                    if interrupted:
                        return 1
                    if show is not None and show(_event_dict(event.contents)):
                        return 1
                    return 0
                except BaseException as e:  # noqa: B036 - nothing may cross into C
                    interrupted.append(e)
                    return 1

            callback = PROGRESS_FN(on_event)
            result = TuneResultC()
            rc = lib.ssmtune_tune(handle, key.encode(), ctypes.byref(opts), callback, None,
                                  ctypes.byref(result))
            if rc != 0:
                summary.append(TuneResult(problem=key, error=_lib.last_error()))
            else:
                summary.append(TuneResult.from_c(result))
            if interrupted:
                break
    finally:
        if owned:
            lib.ssmtune_runtime_destroy(handle)
        _clear_plan_caches()
    if interrupted:
        raise interrupted[0]
    failed = [r for r in summary if r.error]
    if failed:
        err = RuntimeError("ssmtune: tuning failed: " +
                           "; ".join(f"{r.problem}: {r.error}" for r in failed))
        err.summary = summary
        raise err
    return summary
