"""bench/ab_defaults.py without a GPU: against stand-in ssmtune binaries that answer `explain`
and `bench` as the real ones print them, and log each call."""
import json
import stat
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import ab_defaults  # noqa: E402

# A stand-in binary: its default per dstate, and each config's time; every call is appended
# to LOG as JSON (argv and the database it was given).
FAKE = """#!{python}
import json, os, sys
DEFAULTS = {defaults}
TIMES = {times}
argv = sys.argv[1:]
with open({log!r}, "a") as f:
    f.write(json.dumps({{"argv": argv, "db": os.environ.get("SSMTUNE_DB"),
                        "bin": os.path.basename(sys.argv[0])}}) + "\\n")
dstate = int(argv[argv.index("--dstate") + 1])
if argv[0] == "explain":
    print(json.dumps([{{"config": DEFAULTS[str(dstate)], "why": "rule " + str(dstate)}}]))
elif argv[0] == "bench":
    keys = [argv[i + 1] for i, a in enumerate(argv) if a == "--config"]
    rows = [{{"config": k, "status": "ok" if k in TIMES else "inaccurate",
              "median_ms": TIMES.get(k, 9.0), "rel_l2": 1e-3}} for k in keys]
    print(json.dumps(rows))
"""


def fake(tmp_path, name, defaults, times):
    log = tmp_path / "calls.log"
    path = tmp_path / name
    path.write_text(FAKE.format(python=sys.executable, defaults=json.dumps(defaults),
                                times=json.dumps(times), log=str(log)))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path), log


TIMES = {"old.K4": 2.0, "new.K8": 1.5, "extra.K16": 1.8, "same.K2": 0.5}


def calls(log):
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_shapes_parse_and_bad_ones_are_refused():
    s = ab_defaults.parse_shape("bwd:6,1024,2048,44,bf16+seq.K8.fast+ws.K256.fast")
    assert (s.family, s.sizes, s.dtype) == ("bwd", (6, 1024, 2048, 44), "bf16")
    assert s.extras == ["seq.K8.fast", "ws.K256.fast"]
    for bad in ("bwd:6,1024,2048,bf16", "step:1,2,3,4,fp32", "fwd:1,2,3,4,fp8", "fwd:0,2,3,4,fp32",
                "fwd 1,2,3,4,fp32"):
        with pytest.raises(Exception, match="expected FAMILY"):
            ab_defaults.parse_shape(bad)


def test_both_defaults_are_timed_in_one_process_in_alternating_order(tmp_path, capsys):
    a, log = fake(tmp_path, "a", {"44": "old.K4", "4": "same.K2"}, TIMES)
    b, _ = fake(tmp_path, "b", {"44": "new.K8", "4": "same.K2"}, TIMES)
    out = tmp_path / "ab.json"
    rc = ab_defaults.main(["--a", a, "--b", b, "--shape", "bwd:6,1024,2048,44,bf16+extra.K16",
                           "--shape", "fwd:8,512,1024,4,fp32", "--runs", "3", "--seed", "7",
                           "--json", str(out)])
    assert rc == 0
    captured = capsys.readouterr()
    text = captured.out
    row = "| bwd (6, 1024, 2048, 44) bf16 | old.K4 | new.K8 | 2.0000 / 2.0000 / 2.0000 | " \
          "1.5000 / 1.5000 / 1.5000 | 0.750 | extra.K16 1.8000 / 1.8000 / 1.8000 |"
    assert row in text
    # Each shape's row also went to stderr as it finished (a run cut off keeps those).
    assert row in captured.err and captured.err.index(row) < captured.err.index("fwd (8, 512")
    assert "| fwd (8, 512, 1024, 4) fp32 | same.K2 | same.K2 |" in text and "same config" in text
    log_calls = calls(log)
    # Every call had an empty database of the script's own, the same one throughout.
    dbs = {c["db"] for c in log_calls}
    assert len(dbs) == 1 and dbs.pop().endswith("empty.db")
    benches = [c["argv"] for c in log_calls if c["argv"][0] == "bench"]
    assert len(benches) == 6  # 3 runs x 2 shapes, all by --b (the default timer)
    bwd_orders = [[x for i, x in enumerate(v) if i and v[i - 1] == "--config"]
                  for v in benches if "bwd" in v]
    assert bwd_orders == [["old.K4", "new.K8", "extra.K16"], ["extra.K16", "new.K8", "old.K4"],
                          ["old.K4", "new.K8", "extra.K16"]]
    assert all("--saved-states" in v for v in benches if "bwd" in v)
    assert not any("--saved-states" in v for v in benches if "fwd" in v)
    assert all("--with-z" in v and v[v.index("--seed") + 1] == "7" for v in benches)
    # A config both defaults share is timed once a run.
    fwd_keys = [[x for i, x in enumerate(v) if i and v[i - 1] == "--config"]
                for v in benches if "fwd" in v]
    assert fwd_keys == [["same.K2"]] * 3
    rec = json.loads(out.read_text())
    assert rec["seed"] == 7 and rec["records"][0]["a_why"] == "rule 44"


def test_a_config_not_ok_fails_the_run(tmp_path, capsys):
    a, _ = fake(tmp_path, "a", {"16": "old.K4"}, TIMES)
    b, _ = fake(tmp_path, "b", {"16": "unknown.K1"}, TIMES)
    rc = ab_defaults.main(["--a", a, "--b", b, "--shape", "bwd:2,64,256,16,fp32", "--runs", "1",
                           "--flags", "off"])
    assert rc == 1
    captured = capsys.readouterr()
    assert "not ok: [2, 64, 256, 16] unknown.K1: inaccurate" in captured.err


def test_a_binary_that_cannot_explain_is_reported(tmp_path, capsys):
    a, _ = fake(tmp_path, "a", {"16": "old.K4"}, TIMES)
    broken = tmp_path / "broken"
    broken.write_text("#!/bin/sh\necho 'no CUDA driver' >&2\nexit 6\n")
    broken.chmod(0o755)
    rc = ab_defaults.main(["--a", a, "--b", str(broken), "--timer", a, "--shape",
                           "fwd:2,64,256,16,fp32", "--runs", "1"])
    assert rc == 1
    captured = capsys.readouterr()
    assert "exit 6: no CUDA driver" in captured.out
    assert "not ok" in captured.err


def test_kernels_mode_times_each_config_with_both_builds_in_alternating_order(tmp_path, capsys):
    # The same defaults in both builds (a template change); B's kernels faster.
    a, log = fake(tmp_path, "a", {"16": "seq.K16"}, {"seq.K16": 1.0, "extra.K8": 2.0})
    b, _ = fake(tmp_path, "b", {"16": "seq.K16"}, {"seq.K16": 0.9, "extra.K8": 2.2})
    rc = ab_defaults.main(["--a", a, "--b", b, "--kernels", "--shape",
                           "bwd:8,1536,2048,16,bf16+extra.K8", "--runs", "3"])
    assert rc == 0
    captured = capsys.readouterr()
    assert "| bwd (8, 1536, 2048, 16) bf16 | seq.K16 | 1.0000 / 1.0000 / 1.0000 | " \
           "0.9000 / 0.9000 / 0.9000 | 0.900 |" in captured.out
    assert "| bwd (8, 1536, 2048, 16) bf16 | extra.K8 | 2.0000 / 2.0000 / 2.0000 | " \
           "2.2000 / 2.2000 / 2.2000 | 1.100 |" in captured.out
    # Each run: both builds, each timing every config, the builds' order reversed each run.
    benches = [(c["bin"], c["argv"]) for c in calls(log) if c["argv"][0] == "bench"]
    assert [bin_ for bin_, _ in benches] == ["a", "b", "b", "a", "a", "b"]
    assert all(sorted(x for i, x in enumerate(v) if i and v[i - 1] == "--config") ==
               ["extra.K8", "seq.K16"] for _, v in benches)


def test_kernels_mode_takes_no_timer(tmp_path):
    a, _ = fake(tmp_path, "a", {"16": "seq.K16"}, TIMES)
    with pytest.raises(SystemExit):
        ab_defaults.main(["--a", a, "--b", a, "--timer", a, "--kernels", "--shape",
                          "bwd:2,64,256,16,fp32"])
