"""Loads libssmtune.so (the C ABI in include/ssmtune/ssmtune.h) with ctypes.

Search order: $SSMTUNE_LIBRARY_DIR, beside this package, the repository's
build folder. No compiled extension is needed.
"""
import ctypes
import os
from pathlib import Path

_NAME = "libssmtune.so"


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
    out = []
    env = os.environ.get("SSMTUNE_LIBRARY_DIR")
    if env:
        out.append(Path(env) / _NAME)
    here = Path(__file__).resolve().parent
    out.append(here / _NAME)
    out.append(here.parent.parent / "build" / _NAME)
    return out


_lib = None


def library():
    """The loaded library; raises OSError naming every place it looked."""
    global _lib
    if _lib is not None:
        return _lib
    tried = []
    for path in candidates():
        tried.append(str(path))
        if path.is_file():
            lib = ctypes.CDLL(str(path))
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
    raise OSError("ssmtune: libssmtune.so not found; set SSMTUNE_LIBRARY_DIR or build the "
                  "project (looked in: " + ", ".join(tried) + ")")


def last_error():
    return library().ssmtune_last_error().decode()


_runtime = None


def runtime():
    """The process's runtime (device 0, the default tuning database)."""
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
