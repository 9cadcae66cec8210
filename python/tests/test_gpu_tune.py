"""ssmtune.tune and ssmtune.record on the GPU, in a child process with a
fresh tuning database (gpu_tune_child.py says what is checked)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)


def test_record_then_tune_then_the_tuned_config_runs(tmp_path):
    child = Path(__file__).with_name("gpu_tune_child.py")
    env = dict(os.environ, SSMTUNE_DB=str(tmp_path / "tuning.db"))
    env["PYTHONPATH"] = os.pathsep.join([str(child.parent.parent), str(child.parent)] +
                                        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    r = subprocess.run([sys.executable, str(child)], env=env, capture_output=True, text=True,
                       timeout=600)
    print(r.stdout, r.stderr)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "tune ok" in r.stdout
