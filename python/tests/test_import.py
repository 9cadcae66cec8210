"""The package without a GPU: it imports, finds the library, and says
clearly what is missing."""
import importlib.util

import pytest

import ssmtune
from ssmtune import _lib


def test_imports_and_exports_the_drop_in():
    assert callable(ssmtune.selective_scan_fn)
    assert callable(ssmtune.explain)
    assert callable(ssmtune.tune)


def test_finds_the_library():
    lib = _lib.library()
    assert lib.ssmtune_last_error() is not None


def test_library_dir_override_that_is_wrong_names_every_place(monkeypatch, tmp_path):
    monkeypatch.setattr(_lib, "_lib", None)
    monkeypatch.setattr(_lib, "candidates", lambda: [tmp_path / "libssmtune.so"])
    with pytest.raises(OSError, match="libssmtune.so not found"):
        _lib.library()


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="torch is installed")
def test_without_torch_the_call_says_so():
    with pytest.raises(ImportError, match="needs PyTorch"):
        ssmtune.selective_scan_fn(None, None, None, None, None)


def test_without_a_gpu_the_runtime_says_so(monkeypatch):
    import ctypes
    lib = _lib.library()
    handle = ctypes.c_void_p()
    rc = lib.ssmtune_runtime_create(b"", 0, ctypes.byref(handle))
    if rc == 0:
        lib.ssmtune_runtime_destroy(handle)
        pytest.skip("a GPU is present")
    assert rc == 5  # SSMTUNE_ERROR_NO_DRIVER
    assert "no CUDA driver found" in _lib.last_error()
    monkeypatch.setattr(_lib, "_runtime", None)
    monkeypatch.setenv("SSMTUNE_DB", "")
    with pytest.raises(RuntimeError, match="no CUDA driver found"):
        _lib.runtime()
