"""ssmtune: the Mamba selective scan with kernels tuned per GPU and shape.

`selective_scan_fn` is a drop-in for mamba_ssm's (forward only for now),
over the registered op torch.ops.ssmtune.selective_scan_fwd (torch >= 2.4:
torch.compile and CUDA graphs work through it); `selective_scan_fwd` is the
op with all its outputs; `explain` says which kernel config a call runs and
why; `tune` tunes a shape into the database with the `ssmtune` command.
Importing ssmtune imports torch when it is installed (to register the ops).
"""
import subprocess

from . import _lib
from ._ctypes_path import explain
from .ops import selective_scan_fn, selective_scan_fwd

__all__ = ["selective_scan_fn", "selective_scan_fwd", "explain", "tune", "version",
           "library_dir"]

library_dir = _lib.library_dir


def version():
    """The library's version (its C ABI's ssmtune_version)."""
    from . import _ext
    return _ext.ext().version()


def tune(batch, dim, seqlen, dstate, groups=1, dtype="fp32", *, constant_bc=False, with_d=False,
         with_z=False, delta_bias=False, softplus=False, last_state=False, initial_state=False,
         time_limit=None, db=None):
    """Runs `ssmtune tune` for one shape; returns its summary table as text.

    Sizes must be positive ints; a wrong type or value raises TypeError or
    ValueError naming the argument before anything runs."""
    for name, v in (("batch", batch), ("dim", dim), ("seqlen", seqlen), ("dstate", dstate),
                    ("groups", groups)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"ssmtune.tune: {name} must be an int, got {type(v).__name__} {v!r}")
        if v < 1:
            raise ValueError(f"ssmtune.tune: {name} must be >= 1, got {v}")
    if dtype not in ("fp32", "fp16", "bf16"):
        raise ValueError(f"ssmtune.tune: dtype must be 'fp32', 'fp16' or 'bf16', got {dtype!r}")
    if time_limit is not None:
        if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)):
            raise TypeError(f"ssmtune.tune: time_limit must be a number of seconds, got "
                            f"{time_limit!r}")
        if not (time_limit >= 0 and time_limit != float("inf")):
            raise ValueError(f"ssmtune.tune: time_limit must be finite and >= 0, got {time_limit}")
    import shutil
    exe = _lib.executable() or shutil.which("ssmtune")
    if exe is None:
        raise FileNotFoundError("ssmtune: the ssmtune command was not found beside the library")
    cmd = [str(exe), "tune", "--batch", str(batch), "--dim", str(dim), "--seqlen", str(seqlen),
           "--dstate", str(dstate), "--groups", str(groups), "--dtype", dtype]
    for flag, on in (("--constant-bc", constant_bc), ("--with-d", with_d), ("--with-z", with_z),
                     ("--delta-bias", delta_bias), ("--softplus", softplus),
                     ("--last-state", last_state), ("--initial-state", initial_state)):
        if on:
            cmd.append(flag)
    if time_limit is not None:
        cmd += ["--time-limit", str(time_limit)]
    if db is not None:
        cmd += ["--db", str(db)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        # Every line: CLI11 puts the reason first and "Run with --help" last.
        lines = [ln for ln in r.stderr.strip().splitlines()
                 if ln and not ln.startswith("Run with --help")]
        why = "; ".join(lines) or f"exit code {r.returncode}"
        raise RuntimeError(f"ssmtune tune failed (exit code {r.returncode}): {why}")
    return r.stdout
