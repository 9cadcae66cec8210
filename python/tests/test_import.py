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


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A fake checkout: repo/python/ssmtune (the package) and repo/build."""
    pkg = tmp_path / "repo" / "python" / "ssmtune"
    build = tmp_path / "repo" / "build"
    pkg.mkdir(parents=True)
    build.mkdir()
    monkeypatch.setattr(_lib, "_HERE", pkg)
    monkeypatch.delenv("SSMTUNE_LIBRARY_DIR", raising=False)
    return pkg, build, tmp_path


def test_nothing_found_names_every_place(tree):
    with pytest.raises(OSError, match="libssmtune.so not found.*beside the package.*build folder"):
        _lib.library_dir()


def test_build_folder_last(tree):
    pkg, build, _ = tree
    (build / "libssmtune.so").touch()
    assert _lib.library_dir() == build


def test_library_dir_that_lacks_the_library_is_an_error(tree, monkeypatch):
    pkg, build, tmp = tree
    (build / "libssmtune.so").touch()  # no silent fallback to it
    monkeypatch.setenv("SSMTUNE_LIBRARY_DIR", str(tmp / "nowhere"))
    with pytest.raises(OSError, match="SSMTUNE_LIBRARY_DIR=.*nowhere holds no libssmtune.so"):
        _lib.library_dir()
    (tmp / "nowhere").mkdir()
    (tmp / "nowhere" / "libssmtune.so").touch()
    assert _lib.library_dir() == tmp / "nowhere"


def test_beside_the_package_first(tree, monkeypatch):
    pkg, build, tmp = tree
    (pkg / "libssmtune.so").touch()
    monkeypatch.setenv("SSMTUNE_LIBRARY_DIR", str(tmp / "nowhere"))
    assert _lib.library_dir() == pkg


def test_executable_beside_the_library(tree):
    pkg, build, _ = tree
    (build / "libssmtune.so").touch()
    assert _lib.executable() is None
    exe = build / "ssmtune"
    exe.touch()
    exe.chmod(0o755)
    assert _lib.executable() == exe


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


@pytest.mark.parametrize("args,kind,word", [
    ((1.5, 64, 128, 16), TypeError, "batch"),
    ((1, "64", 128, 16), TypeError, "dim"),
    ((1, 64, 0, 16), ValueError, "seqlen"),
    ((True, 64, 128, 16), TypeError, "batch"),
])
def test_tune_checks_its_arguments_before_running(args, kind, word):
    with pytest.raises(kind, match=word):
        ssmtune.tune(*args)


def test_tune_checks_time_limit_and_dtype():
    with pytest.raises(ValueError, match="time_limit"):
        ssmtune.tune(1, 64, 128, 16, time_limit=float("nan"))
    with pytest.raises(ValueError, match="dtype"):
        ssmtune.tune(1, 64, 128, 16, dtype="fp8")
