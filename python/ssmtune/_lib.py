"""Finds ssmtune's compiled files and loads libssmtune.so with ctypes.

Where the library (and the extension beside it) is found, in order: beside
this package (an installed wheel bundles it); $SSMTUNE_LIBRARY_DIR when set
(a set directory without the library is an error, never skipped); the
repository's build/ folder (a source checkout on PYTHONPATH).
The ctypes binding here is the reference path (fp64-checked by the GPU suite)
and serves `explain`; calls go through the extension (_ext.py).
"""
import ctypes
import os
from pathlib import Path

_NAME = "libssmtune.so"
EXT_NAME = "_ssmtune_ext.abi3.so"
_HERE = Path(__file__).resolve().parent


class Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int32),
        ("rank", ctypes.c_int32),
        ("shape", ctypes.c_int64 * 4),
        ("stride", ctypes.c_int64 * 4),
    ]


class FwdArgs(ctypes.Structure):
    _fields_ = [(n, Tensor) for n in (
        "u", "delta", "A", "B", "C", "D", "z", "delta_bias", "h0", "out", "out_z", "last_state")
    ] + [("delta_softplus", ctypes.c_int32)]


def candidates():
    """The folders searched, in order, as (folder, why) pairs."""
    out = [(_HERE, "beside the package")]
    env = os.environ.get("SSMTUNE_LIBRARY_DIR")
    if env:
        out.append((Path(env), "SSMTUNE_LIBRARY_DIR"))
    out.append((_HERE.parent.parent / "build", "the repository's build folder"))
    return out


def library_dir():
    """The folder holding libssmtune.so; OSError naming every place looked."""
    tried = []
    for folder, why in candidates():
        if (folder / _NAME).is_file():
            return folder
        if why == "SSMTUNE_LIBRARY_DIR":
            raise OSError(f"ssmtune: SSMTUNE_LIBRARY_DIR={folder} holds no {_NAME} "
                          "(unset it to use the build folder, or point it at a build)")
        tried.append(f"{folder} ({why})")
    raise OSError(f"ssmtune: {_NAME} not found; install the package with pip, build the "
                  "project, or set SSMTUNE_LIBRARY_DIR (looked in: " + ", ".join(tried) + ")")


def executable():
    """The `ssmtune` command beside the library, or None."""
    try:
        exe = library_dir() / "ssmtune"
    except OSError:
        return None
    return exe if exe.is_file() and os.access(exe, os.X_OK) else None


_lib = None


def library():
    """The library through ctypes (loaded once)."""
    global _lib
    if _lib is not None:
        return _lib
    lib = ctypes.CDLL(str(library_dir() / _NAME))
    lib.ssmtune_runtime_create.argtypes = [
        ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]
    lib.ssmtune_runtime_create.restype = ctypes.c_int
    lib.ssmtune_runtime_destroy.argtypes = [ctypes.c_void_p]
    lib.ssmtune_runtime_destroy.restype = None
    lib.ssmtune_selective_scan_fwd.argtypes = [
        ctypes.c_void_p, ctypes.POINTER(FwdArgs), ctypes.c_void_p]
    lib.ssmtune_selective_scan_fwd.restype = ctypes.c_int
    lib.ssmtune_explain.argtypes = [
        ctypes.c_void_p, ctypes.POINTER(FwdArgs), ctypes.c_char_p, ctypes.c_size_t]
    lib.ssmtune_explain.restype = ctypes.c_int
    lib.ssmtune_last_error.argtypes = []
    lib.ssmtune_last_error.restype = ctypes.c_char_p
    _lib = lib
    return lib


def last_error():
    return library().ssmtune_last_error().decode()


_runtime = None


def runtime():
    """The ctypes path's runtime (device 0, the default tuning database)."""
    global _runtime
    if _runtime is None:
        lib = library()
        handle = ctypes.c_void_p()
        db = os.environ.get("SSMTUNE_DB")
        rc = lib.ssmtune_runtime_create(db.encode() if db is not None else None, 0,
                                        ctypes.byref(handle))
        if rc != 0:
            raise RuntimeError("ssmtune: " + last_error())
        _runtime = handle
    return _runtime
