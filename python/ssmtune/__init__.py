"""ssmtune: the Mamba selective scan with kernels tuned per GPU and shape.

`selective_scan_fn` is a drop-in for mamba_ssm's, forward and backward,
over the registered ops torch.ops.ssmtune.selective_scan_fwd and
selective_scan_bwd (torch >= 2.4: torch.compile and CUDA graphs work through
them); `selective_scan_fwd` is the forward op with all its outputs (and an
initial state); `explain` says which kernel config a call runs and
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
    """Runs `ssmtune tune` for one shape; returns its summary table as text."""
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
        raise RuntimeError("ssmtune tune failed: " + r.stderr.strip().splitlines()[-1])
    return r.stdout
