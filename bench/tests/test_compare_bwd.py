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
