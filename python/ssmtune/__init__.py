"""ssmtune: the Mamba selective scan with kernels tuned per GPU and shape.

`selective_scan_fn` is a drop-in for mamba_ssm's, forward and backward,
over the registered ops torch.ops.ssmtune.selective_scan_fwd and
selective_scan_bwd (torch >= 2.4: torch.compile and CUDA graphs work through
them); `selective_scan_fwd` is the forward op with all its outputs (and an
initial state); `selective_state_update` is the decode step (mamba_ssm's,
the state updated in place); `explain` says which kernel config a call runs and why;
`tune` tunes shapes (given, or recorded with `record` while a model runs)
into the database through the library, with progress.
Importing ssmtune imports torch when it is installed (to register the ops).
"""
from . import _lib
from ._ctypes_path import explain
from ._tune import Recording, TuneResult, TuneSummary, problem_key, record, tune
from .ops import selective_scan_fn, selective_scan_fwd
from .step import explain_step, selective_state_update

__all__ = ["selective_scan_fn", "selective_scan_fwd", "selective_state_update", "explain",
           "explain_step", "tune", "record", "problem_key", "Recording", "TuneResult",
           "TuneSummary", "version", "library_dir"]

library_dir = _lib.library_dir


def version():
    """The library's version (its C ABI's ssmtune_version)."""
    from . import _ext
    return _ext.ext().version()
