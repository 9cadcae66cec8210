"""bench/models.py without a GPU: the shape list and its selection, floors, the estimate,
argument parsing, the tuning bookkeeping, and one whole run of a shape on the CPU with stand-in
contenders (the fp64 step loop as the kernel), down to the markdown table and the exit code."""
import json
import sys
import types
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

BENCH = Path(__file__).resolve().parent.parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import compare  # noqa: E402
import model_report  # noqa: E402
import model_shapes  # noqa: E402
import models  # noqa: E402
import scan_reference  # noqa: E402  (python/tests, put on sys.path by models)

# ---------------------------------------------------------------------------------------------
# Shapes


def test_default_list_covers_the_issue():
    cases = models.default_cases()
    names = [c.name for c in cases]
    assert len(names) == len(set(names))
    train = [c for c in cases if c.group == "train"]
    assert {c.dim for c in train} == {1536, 2048, 3072, 4096, 5120}
    assert {c.batch for c in train} == {8, 16}
    assert {c.dtype for c in train} == {"bf16", "fp16"}
    assert all(c.seqlen == 2048 and c.dstate == 16 and c.flags and not c.last_state
               for c in train)
    prefill = [c for c in cases if c.group == "prefill"]
    assert {c.seqlen for c in prefill} == {4096, 8192, 16384}
    assert min(c.dim for c in prefill) == 2048 and max(c.dim for c in prefill) == 5120
    assert all(c.batch == 1 and c.flags and c.last_state for c in prefill)
    assert {c.dtype for c in prefill} == {"bf16", "fp16"}
    plain = [c for c in cases if c.group == "plain"]
    assert [(c.batch, c.dim, c.seqlen, c.dstate, c.dtype) for c in plain] == \
        list(compare.DEFAULT_SHAPES)
    assert not any(c.flags for c in plain)
    assert any(c.seqlen % 2 for c in cases) and any(c.dstate == 64 for c in cases)
    assert any(c.seqlen > 4096 and c.seqlen % 2 for c in cases)


def test_issue_shapes_are_in_the_list():
    have = {(c.batch, c.dim, c.seqlen, c.dstate, c.dtype, c.flags) for c in models.default_cases()}
    for shape in [(8, 1536, 2048, 16, "bf16", True), (16, 2048, 2048, 16, "bf16", True),
                  (1, 4096, 4096, 16, "fp16", True), (1, 5120, 16384, 16, "bf16", True),
                  (8, 1536, 2048, 16, "bf16", False)]:
        assert shape in have, shape


def test_shape_selection():
    pick = models.parse_shapes
    assert [c.name for c in pick("train-130m-b8-bf16")] == ["train-130m-b8-bf16"]
    assert len(pick("train")) == 20 and len(pick("prefill")) == 18
    assert len(pick("all")) == len(models.default_cases())
    bf16 = pick("train-*-bf16")
    assert len(bf16) == 10 and all(c.dtype == "bf16" for c in bf16)
    assert len(pick("train-130m-b8-bf16,train,train-130m-b8-bf16")) == 20  # once each
    custom = pick("8x1536x2047x16:fp16")[0]
    assert (custom.dims, custom.dtype, custom.flags, custom.last_state) == \
        ((8, 1536, 2047, 16), "fp16", True, False)
    plain = pick("2x64x100x4:fp32:plain:last")[0]
    assert (plain.dtype, plain.flags, plain.last_state) == ("fp32", False, True)
    assert pick("1x8x16x4")[0].dtype == "bf16"
    for bad in ("nonsense", "train-*-fp64", "8x1536x2048:bf16", "8x1536x2048x16:fp64",
                "8x0x2048x16", ","):
        with pytest.raises(Exception):
            pick(bad)


def test_floors():
    case = models.parse_shapes("train-130m-b8-bf16")[0]
    exps = 8 * 1536 * 2048 * 16
    assert case.fwd_floor_ms() == pytest.approx(exps / 4.18e12 * 1e3)  # exp-bound
    assert case.fwd_floor_ms() == pytest.approx(case.shape.floor_s(True) * 1e3)
    assert case.bwd_floor_ms() == pytest.approx(
        compare_bwd_floor(8, 1536, 2048, 16, "bf16", True))
    assert case.floor_ms("step") == pytest.approx(case.fwd_floor_ms() + case.bwd_floor_ms())
    # A bytes-bound shape: the last state's fp32 bytes count.
    small = models.parse_shapes("1x4096x64x4:fp32:last")[0]
    plain_bytes = small.shape.min_bytes(True)
    assert small.fwd_bytes() == plain_bytes + 4096 * 4 * 4
    assert small.fwd_floor_ms() == pytest.approx(small.fwd_bytes() / 4.22e12 * 1e3)


def compare_bwd_floor(*shape_and_flags):
    import compare_bwd
    *shape, flags = shape_and_flags
    return compare_bwd.floors(tuple(shape), flags)


# ---------------------------------------------------------------------------------------------
# Arguments and the estimate


def test_arguments():
    a = models.parse_args([])
    assert a.tune and a.tune_time_limit == 30 and not a.backward and a.db is None
    assert (a.warmup, a.reps, a.min_reps, a.max_seconds) == (2, 30, 10, 1.0)
    assert len(a.cases) == len(models.default_cases()) and a.tuned_column
    q = models.parse_args(["--quick", "--reps", "7", "--no-tune", "--shapes", "edge"])
    assert (q.warmup, q.reps, q.min_reps, q.max_seconds) == (1, 7, 3, 0.25)
    assert not q.tune and not q.tuned_column and len(q.cases) == 3
    d = models.parse_args(["--no-tune", "--db", "x.db", "--tune-time-limit", "5"])
    assert d.tuned_column and d.tune_time_limit == 5
    for bad in (["--reps", "2", "--min-reps", "3"], ["--tune-time-limit", "-1"],
                ["--shapes", "nope"]):
        with pytest.raises(SystemExit):
            models.parse_args(bad)


def test_estimate():
    cases = models.default_cases()
    no_tune = models.estimate(cases, models.parse_args(["--no-tune"]))
    assert no_tune["tune"] == 0 and no_tune["total"] == no_tune["measure"]
    assert no_tune["measure"] < 6 * 60  # the default list measures within ~6 minutes
    quick = models.estimate(cases, models.parse_args(["--no-tune", "--quick"]))
    assert quick["measure"] < no_tune["measure"]
    tuned = models.estimate(cases, models.parse_args(["--tune-time-limit", "30"]))
    assert tuned["tune"] > 30 * len(cases)
    both = models.estimate(cases, models.parse_args(["--backward"]))
    assert both["tune"] == pytest.approx(2 * tuned["tune"])
    assert "tune in slices" in models.format_estimate(tuned, len(cases))
    assert "slices" not in models.format_estimate(models.estimate(cases[:1], models.parse_args(
        ["--no-tune"])), 1)


def test_list_runs_without_a_gpu(capsys):
    assert models.main(["--list", "--shapes", "prefill"]) == 0
    out = capsys.readouterr().out
    assert "prefill-d5120-l16k-bf16" in out and "estimate for 18 shapes" in out


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_without_cuda_the_run_says_so(capsys):
    assert models.main(["--shapes", "edge", "--no-tune"]) == 2
    assert "no CUDA device" in capsys.readouterr().err


def test_parse_explain():
    text = ("fwd:b8.d1536.l2048.n16.g1.bf16.vB.vC.D.z.bias.sp: pipelined.K32.D32.fp32.t128.i3.s4"
            ".fast [exact, in use] tuned 0.2 ms")
    assert models.parse_explain(text) == ("pipelined.K32.D32.fp32.t128.i3.s4.fast", "exact")
    assert models.parse_explain("k: cfg [default] nothing tuned") == ("cfg", "default")
    assert models.parse_explain("explain failed: x") == (None, None)


def test_environment_is_set_before_the_library(monkeypatch, tmp_path):
    monkeypatch.delitem(sys.modules, "ssmtune", raising=False)
    monkeypatch.delenv("SSMTUNE_DB", raising=False)  # restored afterwards
    monkeypatch.setenv("SSMTUNE_FORCE_CONFIG", "fwd=x")
    monkeypatch.setenv("SSMTUNE_TUNE_ON_FIRST_USE", "30")
    notes = models.prepare_environment(tmp_path / "u.db")
    import os
    assert os.environ["SSMTUNE_DB"] == str(tmp_path / "u.db")
    assert os.environ["SSMTUNE_TUNE_ON_FIRST_USE"] == "off"
    assert "SSMTUNE_FORCE_CONFIG" not in os.environ and notes
    monkeypatch.setitem(sys.modules, "ssmtune", types.ModuleType("ssmtune"))
    with pytest.raises(RuntimeError):
        models.prepare_environment(tmp_path / "u.db")


# ---------------------------------------------------------------------------------------------
# Databases and tuning with stand-ins for the package


class FakeExt:
    def __init__(self):
        self.created = []

    def runtime_create(self, path, device):
        self.created.append(path)
        return 1000 + len(self.created)


def fake_package(monkeypatch):
    ext_mod = types.SimpleNamespace(_runtimes={}, ext=None)
    fake = FakeExt()
    ext_mod.ext = lambda: fake

    def runtime(device):
        return ext_mod._runtimes.setdefault(device, 1)
    ext_mod.runtime = runtime
    lib_mod = types.SimpleNamespace(_runtime=None)
    cleared = []
    tune_mod = types.SimpleNamespace(_clear_plan_caches=lambda: cleared.append(1))
    pkg = types.ModuleType("ssmtune")
    pkg._ext, pkg._lib, pkg._tune = ext_mod, lib_mod, tune_mod
    monkeypatch.setitem(sys.modules, "ssmtune", pkg)
    return pkg, fake, cleared


def test_databases_switch_the_package_runtime(monkeypatch):
    pkg, fake, cleared = fake_package(monkeypatch)
    dbs = models.Databases(pkg, 0, "/tmp/t.db")
    assert fake.created == ["/tmp/t.db"]
    dbs.use("tuned")
    assert pkg._ext._runtimes[0] == 1001 and pkg._lib._runtime.value == 1001
    dbs.use("tuned")
    assert len(cleared) == 1  # no switch, no clearing
    dbs.use("untuned")
    assert pkg._ext._runtimes[0] == 1 and pkg._lib._runtime.value == 1 and len(cleared) == 2
    none = models.Databases(pkg, 0, None)
    with pytest.raises(models.Skipped):
        none.use("tuned")


class Result:
    def __init__(self, **kw):
        self.problem = kw["problem"]
        self.kw = kw

    def as_dict(self):
        return dict(self.kw)


class FakeTuner:
    """ssmtune.record and ssmtune.tune: the call notes its problem keys."""

    def __init__(self, already=False, fail=False):
        self.already, self.fail, self.calls, self.active = already, fail, [], None

    def record(self):
        tuner = self

        class Rec(list):
            def __enter__(self):
                tuner.active = self
                return self

            def __exit__(self, *exc):
                tuner.active = None
                return False
        return Rec()

    def fn(self, u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False,
           return_last_state=False):
        if self.active is not None:
            key = "bwd:x" if torch.is_grad_enabled() and u.requires_grad else "fwd:x"
            if key not in self.active:
                self.active.append(key)
        return stand_in(u, delta, A, B, C, D, z, delta_bias, delta_softplus, return_last_state)

    def tune(self, rec, time_limit=None, progress=True):
        self.calls.append((list(rec), time_limit))
        results = [Result(problem=k, config=f"cfg-{k}", wall_s=12.5, timed=101, compiled=300,
                          already_tuned=self.already, cut_short=True) for k in rec]
        if self.fail:
            err = RuntimeError("tuning failed: bwd:x: boom")
            err.summary = results[:1]
            raise err
        return results


def small_case(**kw):
    return model_shapes.Case("t", 2, 4, 9, 3, kw.get("dtype", "fp32"), kw.get("flags", True),
                       kw.get("last", False), "custom")


def test_tune_case_records_tunes_and_keeps_results_beside_the_db(tmp_path, monkeypatch):
    monkeypatch.setattr(compare, "DEVICE", "cpu")
    case = small_case()
    inp = compare.make_inputs(case.shape, True, 5)
    leaves = models.make_leaves(inp)
    dout = models.make_dout(case, 5)
    tuner = FakeTuner()
    db = tmp_path / "tuned.db"
    args = models.parse_args(["--backward", "--db", str(db), "--tune-time-limit", "7"])
    got = models.tune_case(tuner, tuner.fn, case, inp, leaves, dout, args)
    assert tuner.calls == [(["fwd:x", "bwd:x"], 7)]
    assert set(got) == {"fwd:x", "bwd:x"} and got["fwd:x"]["timed"] == 101
    side = json.loads(models.sidecar_path(db).read_text())
    assert set(side) == {"fwd:x", "bwd:x"}
    # A later run on the same --db: already tuned shows the earlier tune, marked.
    tuner.already = True
    again = models.tune_case(tuner, tuner.fn, case, inp, leaves, dout, args)
    assert again["fwd:x"]["earlier"] and again["fwd:x"]["wall_s"] == 12.5
    # --no-tune with the --db: the earlier results, nothing tuned.
    no_tune = models.parse_args(["--backward", "--db", str(db), "--no-tune"])
    quiet = FakeTuner()
    shown = models.tune_case(quiet, quiet.fn, case, inp, leaves, dout, no_tune)
    assert quiet.calls == [] and shown["bwd:x"]["earlier"]
    # A failed problem: an error for it, the others' results kept.
    failing = FakeTuner(fail=True)
    bad = models.tune_case(failing, failing.fn, case, inp, leaves, dout,
                           models.parse_args(["--backward"]))
    assert bad["fwd:x"]["timed"] == 101 and "boom" in bad["bwd:x"]["error"]


# ---------------------------------------------------------------------------------------------
# One whole shape on the CPU


def stand_in(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False,
             return_last_state=False):
    """A selective_scan_fn made of the fp64 step loop, rounded to the input dtype."""
    out, last = scan_reference.reference(u, delta, A, B, C, D, z, delta_bias, delta_softplus,
                                         True)
    out = out.to(u.dtype)
    return (out, last.float()) if return_last_state else out


def broken(u, *args, return_last_state=False, **kw):
    out = torch.zeros_like(u)
    return (out, torch.zeros(u.shape[0], u.shape[1], args[1].shape[1])) \
        if return_last_state else out


@pytest.fixture
def cpu_run(monkeypatch):
    monkeypatch.setattr(compare, "DEVICE", "cpu")
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda *a: None)
    times = iter(range(1, 10**6))

    def fake_time(call, flush, args):
        call()
        return {"median_ms": float(next(times)), "reps": 1}
    monkeypatch.setattr(compare, "time_call", fake_time)


def make_context(monkeypatch, kernel=None, mamba=stand_in, tuned_db="tuned.db"):
    tuner = FakeTuner()
    pkg, _, _ = fake_package(monkeypatch)
    pkg.selective_scan_fn = kernel or tuner.fn
    pkg.record, pkg.tune = tuner.record, tuner.tune
    pkg.explain = lambda *a: "fwd:x: seq.K64 [default] nothing tuned"
    dbs = models.Databases(pkg, 0, tuned_db)
    return models.Context(pkg, dbs, torch.empty(0), mamba, None if mamba else "not importable",
                          "stand-in", True)


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize("last", [False, True], ids=["", "last"])
def test_one_shape_end_to_end(cpu_run, monkeypatch, capsys, dtype, last):
    args = models.parse_args(["--backward", "--seed", "3", "--shapes",
                              f"2x4x9x3:{dtype}" + (":last" if last else "")])
    ctx = make_context(monkeypatch)
    rec = models.run_case(1, 1, args.cases[0], ctx, args)
    assert "error" not in rec, rec.get("error")
    for name in models.CONTENDERS:
        res = rec["contenders"][name]
        assert res["status"] == "ok", res.get("traceback")
        assert res["fwd"]["accuracy"]["verdict"] in ("at-limit", "inside")
        assert ("last_state" in res["fwd"]["accuracy"]) == last
        assert res["bwd"]["accuracy"]["verdict"] == "inside"
        assert set(res["bwd"]["accuracy"]["grads"]) == \
            {"du", "ddelta", "dA", "dB", "dC", "dD", "dz", "ddelta_bias"}
        for part in ("fwd", "bwd", "step"):
            assert res[part]["timing"]["median_ms"] > 0
    assert rec["contenders"]["tuned"]["tune"]["fwd:x"]["timed"] == 101
    assert rec["contenders"]["untuned"]["config"] == "seq.K64"
    meta = {"device": "cpu", "sm_count": 0, "capability": "-", "torch": torch.__version__,
            "cuda": None, "seed": 3, "mamba": "stand-in", "tuned_db": "tuned.db"}
    text = models.report(meta, [rec], args)
    assert text.splitlines()[-1].startswith("| 2x4x9x3")  # the table comes last
    for heading in ("## Targets", "## Forward", "## Backward", "## Training step"):
        assert heading in text
    fwd_row = text.split("## Forward")[1].splitlines()[4]
    cells = [c.strip() for c in fwd_row.strip("|").split("|")]
    assert cells[2] == "D z bias sp" + (" last" if last else "") and cells[3] == dtype
    assert cells[4:10] == ["1", "4", "0.25x", "7", "0.14x", "0.57x"]
    assert cells[13] == "12.5 s / 101 cut short"
    assert models.exit_code([rec]) == 0
    json.dumps(compare._finite_or_none({"shapes": [rec]}))  # the record serializes


def test_a_wrong_kernel_fails_the_run_and_mamba_can_be_missing(cpu_run, monkeypatch):
    args = models.parse_args(["--seed", "4", "--no-tune", "--shapes", "2x4x9x3:fp32"])
    ctx = make_context(monkeypatch, kernel=broken, mamba=None, tuned_db=None)
    rec = models.run_case(1, 1, args.cases[0], ctx, args)
    assert rec["contenders"]["mamba_ssm"]["status"] == "skipped"
    assert rec["contenders"]["untuned"]["fwd"]["accuracy"]["verdict"] == "defect"
    assert "timing" not in rec["contenders"]["untuned"]["fwd"]
    assert rec["contenders"]["tuned"]["status"] == "skipped"  # no --db, no tuning
    assert models.exit_code([rec]) == 1
    meta = {"device": "cpu", "sm_count": 0, "capability": "-", "torch": "-", "cuda": None,
            "seed": 4, "mamba": "n/a", "tuned_db": "none"}
    row = models.report(meta, [rec], args).splitlines()[-1]
    assert "| n/a | defect | n/a | n/a |" in row and "n/a / defect / n/a" in row


def test_a_failed_reference_is_reported_and_fails_the_run(cpu_run, monkeypatch):
    args = models.parse_args(["--seed", "4", "--no-tune", "--shapes", "2x4x9x3:fp32"])
    ctx = make_context(monkeypatch)

    def boom(*a, **k):
        raise MemoryError("out of memory")
    monkeypatch.setattr(models, "reference", boom)
    rec = models.run_case(1, 1, args.cases[0], ctx, args)
    assert "reference" in rec["error"] and models.exit_code([rec]) == 1
    meta = {"device": "cpu", "sm_count": 0, "capability": "-", "torch": "-", "cuda": None,
            "seed": 4, "mamba": "n/a", "tuned_db": "none"}
    assert "out of memory" in models.report(meta, [rec], args).splitlines()[-1]


def test_a_failing_tune_still_measures_the_selection(cpu_run, monkeypatch):
    args = models.parse_args(["--seed", "5", "--shapes", "2x4x9x3:fp32"])
    ctx = make_context(monkeypatch)

    def no_worker(*a, **k):
        raise OSError("ssmtune worker not found")
    ctx.ssmtune.tune = no_worker
    rec = models.run_case(1, 1, args.cases[0], ctx, args)
    tuned = rec["contenders"]["tuned"]
    assert tuned["status"] == "ok" and tuned["fwd"]["timing"]["median_ms"] > 0
    assert model_report.tune_cell(rec, "fwd") == "error"
