"""Tuning from Python without a GPU (and without torch): problem keys built
through the library's validation, recordings, the summary table and the
progress lines, and argument errors."""
import ctypes
import io

import pytest

import ssmtune
from ssmtune import _tune


def test_shape_keys_come_from_the_library():
    assert ssmtune.problem_key(8, 1536, 2048, 16, dtype="bf16") == \
        "fwd:b8.d1536.l2048.n16.g1.bf16.vB.vC"
    assert ssmtune.problem_key(2, 64, 100, 16, 1, "fp16", constant_b=True, with_d=True,
                               with_z=True, delta_bias=True, softplus=True, last_state=True,
                               initial_state=True) == \
        "fwd:b2.d64.l100.n16.g1.fp16.vC.D.z.bias.sp.last.h0"
    assert ssmtune.problem_key(3, 48, 7, 4, groups=2, dtype="float32") == \
        "fwd:b3.d48.l7.n4.g2.fp32.vB.vC"
    assert ssmtune.problem_key(1, 8, 16, 2, constant_bc=True) == "fwd:b1.d8.l16.n2.g1.fp32"


def test_backward_keys():
    assert ssmtune.problem_key(2, 64, 256, 4, family="bwd") == "bwd:b2.d64.l256.n4.g1.fp32.vB.vC"
    assert ssmtune.problem_key(2, 64, 256, 4, family="bwd", last_state=True, dlast=True) == \
        "bwd:b2.d64.l256.n4.g1.fp32.vB.vC.last.dlast"
    with pytest.raises(ValueError, match="dlast needs last_state"):
        ssmtune.problem_key(2, 64, 256, 4, family="bwd", dlast=True)
    with pytest.raises(ValueError, match="backward flag"):
        ssmtune.problem_key(2, 64, 256, 4, last_state=True, dlast=True)
    with pytest.raises(ValueError, match="family 'step'"):
        ssmtune.problem_key(2, 64, 256, 4, family="step")


def test_bad_shapes_are_refused_with_the_library_message():
    with pytest.raises(ValueError, match="dtype 'fp64'"):
        ssmtune.problem_key(2, 64, 256, 4, dtype="fp64")
    with pytest.raises(ValueError, match="ssmtune: .*dstate"):
        ssmtune.problem_key(2, 64, 256, 100000)
    with pytest.raises(ValueError, match="ssmtune: .*group"):
        ssmtune.problem_key(2, 63, 256, 4, groups=2)


def test_layout_keys_match_prepared_layouts():
    """ops._prepare's metas (dtype code, shape, strides) give the same key."""
    bdl = (2, (2, 64, 100), (6400, 100, 1))
    metas = [bdl, bdl, (0, (64, 16), (16, 1)), (2, (2, 1, 16, 100), (1600, 1600, 100, 1)),
             (0, (64, 16), (16, 1)), (0, (64,), (1,)), bdl, None, None, bdl, bdl, None]
    assert _tune.layout_key(metas, True) == "fwd:b2.d64.l100.n16.g1.bf16.vB.D.z.sp"
    with pytest.raises(ValueError, match="expected 12 tensor descriptions"):
        _tune.layout_key(metas[:5], True)
    with ssmtune.record() as rec:
        _tune.note_fwd(metas, True)
        _tune.note_bwd(metas, True)
        _tune.note_bwd(metas[:11] + [(0, (2, 64, 16), (1024, 16, 1))], True, dlast=True)
    assert list(rec) == ["fwd:b2.d64.l100.n16.g1.bf16.vB.D.z.sp",
                         "bwd:b2.d64.l100.n16.g1.bf16.vB.D.z.sp",
                         "bwd:b2.d64.l100.n16.g1.bf16.vB.D.z.sp.last.dlast"]


def test_recordings_keep_distinct_keys_in_order_and_only_inside_the_block():
    _tune.note_key("fwd:outside")
    with ssmtune.record() as rec:
        assert _tune.recorders == [rec]
        _tune.note_key("fwd:b1.d8.l16.n2.g1.fp32.vB.vC")
        with ssmtune.record() as inner:
            _tune.note_key("fwd:b2.d8.l16.n2.g1.fp32.vB.vC")
        _tune.note_key("fwd:b1.d8.l16.n2.g1.fp32.vB.vC")
    assert _tune.recorders == []
    assert list(rec) == ["fwd:b1.d8.l16.n2.g1.fp32.vB.vC", "fwd:b2.d8.l16.n2.g1.fp32.vB.vC"]
    assert list(inner) == ["fwd:b2.d8.l16.n2.g1.fp32.vB.vC"]
    assert len(rec) == 2


def test_an_empty_recording_tunes_nothing():
    with ssmtune.record() as rec:
        pass
    summary = ssmtune.tune(rec)
    assert list(summary) == []
    with pytest.raises(TypeError, match="options only"):
        ssmtune.tune(rec, 5)


def test_summary_table_and_progress_lines():
    s = _tune.TuneSummary([
        _tune.TuneResult(problem="fwd:b1.d8.l16.n2.g1.fp32.vB.vC", config="seq.K64", best_ms=0.0123,
                         timed=12, wall_s=3.5, cut_short=True),
        _tune.TuneResult(problem="fwd:b2.d8.l16.n2.g1.fp32.vB.vC", error="no GPU")])
    text = str(s).splitlines()
    assert text[0].split() == ["problem", "best", "ms", "timed", "wall", "s", "note"]
    assert "seq.K64" in text[1] and "0.0123" in text[1] and "cut short" in text[1]
    assert "(none)" in text[2] and "no GPU" in text[2]

    out = io.StringIO()
    p = _tune.Printer(out, every_s=3600, index="[1/2] ")
    ev = dict(kind="measured", problem="fwd:k", message="", compiled=0, timed=1, planned=9,
              config="a", ms=1.0, usable=True, best_config="a", best_ms=1.0, elapsed_s=2.0)
    p(dict(ev, kind="start", message="starting the worker"))
    p(ev)
    p(dict(ev, timed=2))  # within every_s of the last line: not printed
    p(dict(ev, kind="done", timed=2, message=""))
    lines = out.getvalue().splitlines()
    assert lines == ["[1/2] tune fwd:k: starting the worker",
                     "[1/2] tune fwd:k: timed 1/9, best a 1.0000 ms, 2 s",
                     "[1/2] tune fwd:k: done in 2.0 s, timed 2, best a 1.0000 ms"]


def test_event_dicts_from_the_c_struct():
    e = _tune.TuneEvent(kind=3, problem_key=b"fwd:k", message=b"", compiled=4, timed=2,
                        planned=5, config=b"c", ms=0.5, usable=1, best_config=None, best_ms=0,
                        elapsed_s=1.5)
    d = _tune._event_dict(e)
    assert d["kind"] == "measured" and d["problem"] == "fwd:k" and d["best_config"] == ""
    assert d["usable"] is True and d["timed"] == 2 and d["planned"] == 5


def _has_driver():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


@pytest.mark.skipif(_has_driver(), reason="needs a machine without a CUDA driver")
def test_without_a_driver_tune_says_so(tmp_path):
    with pytest.raises(RuntimeError, match="no CUDA driver"):
        ssmtune.tune(1, 8, 16, 2, db=tmp_path / "t.db", progress=False)


def test_results_from_the_c_struct():
    c = _tune.TuneResultC(problem_key=b"fwd:k", config=b"seq.K64", best_ms=0.5, best_rel_l2=1e-6,
                          found=1, already_tuned=0, timed=7, from_db=2, cut_short=1, wall_s=4.0)
    r = _tune.TuneResult.from_c(c)
    assert r.problem == "fwd:k" and r.config == "seq.K64" and r.best_ms == 0.5
    assert r.found is True and r.already_tuned is False and r.cut_short is True
    assert r.timed == 7 and r.from_db == 2 and r.wall_s == 4.0 and r.error is None
    assert _tune.TuneResult.from_c(_tune.TuneResultC()).config is None
