"""bench/compare_bwd.py without a GPU: the drawn sweep's shapes are reproducible, inside their
ranges and distinct; the issue's shapes parse by index and by spelling."""
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

BENCH = Path(__file__).resolve().parent.parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import compare_bwd  # noqa: E402


def test_drawn_shapes_replay_and_stay_in_range():
    shapes = compare_bwd.draw_shapes(40, 2929)
    assert shapes == compare_bwd.draw_shapes(40, 2929)
    assert shapes != compare_bwd.draw_shapes(40, 2930)
    assert len(set(shapes)) == 40
    for b, d, l, n, dtype in shapes:
        assert 1 <= b <= 16 and 256 <= d <= 5120 and 64 <= l <= 8192 and 1 <= n <= 64
        assert dtype in compare_bwd.DTYPES
        assert 2e5 <= b * d * l <= 6.4e7
    # The ranges are used, not one corner of them.
    assert len({s[3] for s in shapes}) >= 6 and len({s[4] for s in shapes}) == 3


def test_shapes_parse():
    assert compare_bwd.parse_shapes("0,2") == [compare_bwd.DEFAULT_SHAPES[0],
                                              compare_bwd.DEFAULT_SHAPES[2]]
    assert compare_bwd.parse_shapes("2x64x100x4:bf16,1x8x16x4") == [(2, 64, 100, 4, "bf16"),
                                                                     (1, 8, 16, 4, "fp32")]


def test_table_prints_a_saved_run(tmp_path, capsys):
    # What a cut-off run leaves: the JSON rewritten after each shape, one contender failed.
    meta = {"gpu": "GPU X", "torch": "t", "python": "p", "seed": 7, "reps": 3,
            "timing": "kernels"}
    records = [
        {"shape": [8, 256, 1024, 4, "fp32"], "flags": True, "seed": 1, "floor_bwd_ms": 0.01,
         "mamba_ssm": {"fwd_ms": 0.03, "bwd_ms": 0.08, "step_ms": 0.11},
         "ssmtune": {"fwd_ms": 0.02, "bwd_ms": 0.04, "step_ms": 0.06},
         "rel_l2_between": {"du": 1e-7, "dB": 3e-7}},
        {"shape": [2, 64, 100, 16, "bf16"], "flags": False, "seed": 2, "floor_bwd_ms": 0.002,
         "mamba_ssm": {"error": "RuntimeError: boom"},
         "ssmtune": {"fwd_ms": 0.01, "bwd_ms": 0.02, "step_ms": 0.03}},
    ]
    path = tmp_path / "cut.json"
    compare_bwd.write_json(path, meta, records)
    assert compare_bwd.main(["--table", str(path)]) == 0
    out = capsys.readouterr().out
    assert "GPU X, seed 7, median of 3" in out
    rows = [line for line in out.splitlines() if line.startswith("| (")]
    assert len(rows) == 2
    assert "| 2.00x |" in rows[0] and "| 4.0 |" in rows[0] and "3.00e-07" in rows[0]
    assert "RuntimeError: boom" in rows[1] and "| - |" in rows[1]
