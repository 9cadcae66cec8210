"""The compiled binding (_ssmtune_ext, abi3): loaded from beside the package
or, in a source checkout, from the folder _lib.library_dir() names; and one
runtime per CUDA device, made on first use and kept for the process."""
import importlib.machinery
import importlib.util
import os
import threading

from . import _lib

_ext = None
_runtimes = {}
_lock = threading.Lock()


def ext():
    """The extension module (loaded once); OSError saying what is missing."""
    global _ext
    if _ext is not None:
        return _ext
    folder = _lib.library_dir()
    path = folder / _lib.EXT_NAME
    if not path.is_file():
        raise OSError(f"ssmtune: {path} not found beside {folder / 'libssmtune.so'}; rebuild "
                      "with Python's headers installed (apt-get install python3-dev)")
    loader = importlib.machinery.ExtensionFileLoader("ssmtune._ssmtune_ext", str(path))
    spec = importlib.util.spec_from_file_location("ssmtune._ssmtune_ext", str(path), loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    _ext = module
    return module


def runtime(device):
    """The runtime handle for a CUDA device index (database: $SSMTUNE_DB or the default)."""
    rt = _runtimes.get(device)
    if rt is not None:
        return rt
    with _lock:
        rt = _runtimes.get(device)
        if rt is None:
            rt = ext().runtime_create(os.environ.get("SSMTUNE_DB"), device)
            _runtimes[device] = rt
    return rt
