"""Child of test_gpu_tune.py (a process of its own: the runtimes read
$SSMTUNE_DB, a fresh database, once): records the problem a call runs,
tunes it through ssmtune.tune with progress events, and checks that the
next call runs the tuned config (exact entry, in use) and still matches
fp64; a shape given explicitly is then found tuned; a progress function
that returns True stops a forced tune after one config."""
import sys

import torch

import ssmtune
from ssmtune import ops
from gpu_support import as_groups, make_inputs
from scan_reference import reference


def main():
    shape = (2, 64, 256, 4)
    u, delta, A, B, C, *_ = make_inputs(*shape, torch.float32, three_d=True, salt=("tune",))
    ssmtune.selective_scan_fn(u, delta, A, B, C)  # prepared before recording: still recorded
    with ssmtune.record() as rec:
        ssmtune.selective_scan_fn(u, delta, A, B, C)
        ssmtune.selective_scan_fn(u, delta, A, B, C)
    want_key = ssmtune.problem_key(*shape)
    print("recorded", list(rec))
    if list(rec) != [want_key]:
        print(f"FAIL: recorded {list(rec)}, expected [{want_key}]")
        return 1
    before = ssmtune.explain(u, delta, A, B, C)
    print("before:", before)

    events = []
    summary = ssmtune.tune(rec, time_limit=3, seed=5, progress=events.append)
    print(summary)
    r = summary[0]
    kinds = [e["kind"] for e in events]
    if not r.found or not r.config or r.timed < 3 or r.problem != want_key:
        print(f"FAIL: {r!r}")
        return 1
    if kinds[0] != "start" or kinds[-1] != "done" or "compiled" not in kinds or \
            kinds.count("measured") < r.timed + r.faulted + r.inaccurate:
        print(f"FAIL: events {kinds}")
        return 1

    out = ssmtune.selective_scan_fn(u, delta, A, B, C)  # prepares again: the tuned config
    plan = list(ops._cache._plans.values())[-1][0]
    in_use = ops._ext.ext().fwd_explain(plan)
    print("after:", in_use)
    if f": {r.config} [exact, in use]" not in in_use:
        print("FAIL: the next call does not run the tuned config")
        return 1
    want = reference(u, delta, A, as_groups(B), as_groups(C))
    torch.testing.assert_close(out.double(), want, rtol=6e-4, atol=2e-3)
    explained = ssmtune.explain(u, delta, A, B, C)
    if "[exact" not in explained or r.config not in explained:
        print(f"FAIL: explain says {explained}")
        return 1

    again = ssmtune.tune(*shape, progress=True)[0]  # printed progress on stderr
    if not again.already_tuned or again.config != r.config:
        print(f"FAIL: explicit shape: {again!r}")
        return 1
    stopped = ssmtune.tune(want_key, force=True, progress=lambda e: e["kind"] == "measured")[0]
    if not stopped.cancelled or stopped.timed > 1:
        print(f"FAIL: stop from progress: {stopped!r}")
        return 1
    print("tune ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
