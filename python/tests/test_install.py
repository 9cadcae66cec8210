"""One install: the wheel built from the repository root carries the library,
the extension and the command, tagged cp310-abi3-linux_x86_64, and a fresh
venv (Debian's Python, offline) imports it with no environment variable.

Opt-in (it builds the project: about a minute with a warm ccache, several
on a cold one): SSMTUNE_TEST_INSTALL=1, or ctest -L install.
"""
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

if os.environ.get("SSMTUNE_TEST_INSTALL") != "1":
    pytest.skip("set SSMTUNE_TEST_INSTALL=1 to build and install the wheel",
                allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
BINARIES = ("libssmtune.so", "_ssmtune_ext.abi3.so", "ssmtune")


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{cmd} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-index", "--no-deps",
         "-w", str(out), str(ROOT)], cwd=ROOT)
    wheels = list(out.glob("ssmtune-*.whl"))
    assert len(wheels) == 1
    return wheels[0]


def test_wheel_is_abi3_and_carries_the_binaries(wheel):
    assert wheel.name.endswith("-cp310-abi3-linux_x86_64.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for b in BINARIES:
            assert f"ssmtune/{b}" in names  # at the root (platlib), not under .data
            mode = z.getinfo(f"ssmtune/{b}").external_attr >> 16
            assert mode & 0o111, f"{b} lost its executable bit"
        tags = z.read(next(n for n in names if n.endswith(".dist-info/WHEEL"))).decode()
        assert "Root-Is-Purelib: false" in tags and "Tag: cp310-abi3-linux_x86_64" in tags


def test_fresh_venv_imports_with_no_environment(wheel, tmp_path):
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)])
    py = venv / "bin" / "python"
    run([str(py), "-m", "pip", "install", "--no-index", "--no-deps", str(wheel)])
    env = {k: v for k, v in os.environ.items()
           if k not in ("SSMTUNE_LIBRARY_DIR", "PYTHONPATH", "SSMTUNE_EXE")}
    out = run([str(py), "-c",
               "import ssmtune, sys; from ssmtune import _ext; e = _ext.ext(); "
               "print(ssmtune.library_dir()); print(e.__file__); print(ssmtune.version())"],
              env=env, cwd=tmp_path)
    lib_dir, ext_file, version = out.split()
    assert Path(lib_dir).is_relative_to(venv) and Path(ext_file).is_relative_to(venv)
    assert version == "0.1.0"
    assert "JIT autotuner" in run([str(venv / "bin" / "ssmtune"), "--help"], env=env)
