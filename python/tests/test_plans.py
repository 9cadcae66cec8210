"""The descriptor cache without torch: layout tuples for fwd_prepare, mamba's
3-D B/C as one group, and one prepare per distinct key."""
import pytest

from ssmtune import _plans


def test_contiguous_strides():
    assert _plans.contiguous_strides((2, 3, 5)) == (15, 5, 1)
    assert _plans.contiguous_strides((7,)) == (1,)


def test_three_d_bc_is_one_group():
    shape, strides = _plans.bc_meta((2, 16, 33), (600, 40, 1))
    assert shape == (2, 1, 16, 33)
    assert strides == (600, 600, 40, 1)
    assert _plans.bc_meta((8, 16), (16, 1)) == ((8, 16), (16, 1))  # constant B/C unchanged
    assert _plans.bc_meta((2, 3, 16, 33), (1, 2, 3, 1)) == ((2, 3, 16, 33), (1, 2, 3, 1))


def test_layout_tuple():
    u = (_plans.BF16, (2, 8, 33), (264, 33, 1))
    A = (_plans.FP32, (8, 16), (16, 1))
    metas = [u, u, A, None, None, None, None, None, None, u, None, None]
    t = _plans.layout(metas, True)
    assert len(t) == 121 and all(isinstance(x, int) for x in t)
    assert t[0:10] == (3, _plans.BF16, 2, 8, 33, 0, 264, 33, 1, 0)
    assert t[20:30] == (2, _plans.FP32, 8, 16, 0, 0, 16, 1, 0, 0)
    assert t[30:40] == (0,) * 10  # B absent
    assert t[90:100] == t[0:10]  # out
    assert t[-1] == 1
    assert _plans.layout(metas, False)[-1] == 0


def test_layout_rejects_bad_descriptions():
    with pytest.raises(ValueError, match="expected 12"):
        _plans.layout([None] * 3, False)
    bad = [None] * 12
    bad[0] = (_plans.FP32, (1, 2, 3, 4, 5), (1, 1, 1, 1, 1))
    with pytest.raises(ValueError, match="u: rank 5"):
        _plans.layout(bad, False)


class FakeExt:
    def __init__(self):
        self.prepared = []

    def fwd_prepare(self, runtime, layout):
        self.prepared.append((runtime, layout))
        return 1000 + len(self.prepared)

    def fwd_scratch_bytes(self, plan):
        return 256 if plan % 2 == 0 else 0


def test_cache_prepares_once_per_key():
    fake = FakeExt()
    cache = _plans.PlanCache(lambda: fake)
    metas = [None] * 12
    assert cache.get("k1") is None
    e1 = cache.prepare("k1", 7, metas, False, extra="dev")
    assert e1 == (1001, 0, "dev")
    assert cache.get("k1") is e1
    e2 = cache.prepare("k2", 7, metas, True)
    assert e2 == (1002, 256, None)
    assert len(cache) == 2 and len(fake.prepared) == 2
    assert fake.prepared[1][0] == 7 and fake.prepared[1][1][-1] == 1
    assert cache.get("k1") is e1  # a hit prepares nothing
    assert len(fake.prepared) == 2
    cache.clear()
    assert cache.get("k1") is None


def test_cache_get_is_the_dict_lookup():
    cache = _plans.PlanCache(lambda: FakeExt())
    assert cache.get.__self__ is cache._plans  # a hit is one C-level dict lookup


def test_bwd_layout_tuple():
    u = (_plans.FP16, (2, 8, 33), (264, 33, 1))
    A = (_plans.FP32, (8, 16), (16, 1))
    B = (_plans.FP16, (2, 1, 16, 33), (528, 528, 33, 1))
    last = (_plans.FP32, (2, 8, 16), (128, 16, 1))
    metas = [u, u, A, B, B] + [None] * 4 + [None, u, last] + [u, u, A, B, B] + [None] * 4
    t = _plans.layout(metas, False, _plans.BWD_SLOTS)
    assert len(t) == 211 and all(isinstance(x, int) for x in t)
    assert _plans.BWD_SLOTS.index("dout") == 10 and _plans.BWD_SLOTS.index("dh0") == 20
    assert t[100:110] == t[0:10]  # dout
    assert t[110:120] == (3, _plans.FP32, 2, 8, 16, 0, 128, 16, 1, 0)  # dlast
    assert t[150:160] == t[30:40]  # dB like B
    assert t[-1] == 0
    with pytest.raises(ValueError, match="expected 21"):
        _plans.layout(metas[:12], False, _plans.BWD_SLOTS)


class FakeBwdExt(FakeExt):
    def bwd_prepare(self, runtime, layout):
        self.prepared.append(("bwd", layout))
        return 2000 + len(self.prepared)

    def bwd_scratch_bytes(self, plan):
        return 4096

    def bwd_states_interval(self, plan):
        return 16

    def bwd_states_scratch_bytes(self, plan):
        return 1024


def test_bwd_cache_prepares_backward_plans():
    fake = FakeBwdExt()
    cache = _plans.PlanCache(lambda: fake, "bwd")
    e = cache.prepare("k", 7, [None] * 21, True, extra=(0,))
    assert e == (2001, 4096, (0,), 16, 1024)  # saved states: their interval, the scratch
    assert fake.prepared[0][0] == "bwd" and len(fake.prepared[0][1]) == 211
    assert cache.get("k") is e
    with pytest.raises(ValueError, match="unknown kernel family"):
        _plans.PlanCache(lambda: fake, "sideways")


def test_headed_inserts_the_missing_head_or_group_dimension():
    # Mamba-1's forms get a dimension of one (stride 0) where the heads form has one.
    assert _plans.headed((4, 64, 16), (1024, 16, 1), 4, 1) == ((4, 1, 64, 16), (1024, 0, 16, 1))
    assert _plans.headed((4, 64), (64, 1), 3, 1) == ((4, 1, 64), (64, 0, 1))
    assert _plans.headed((64, 16), (16, 1), 3, 0) == ((1, 64, 16), (0, 16, 1))
    assert _plans.headed((64,), (1,), 2, 0) == ((1, 64), (0, 1))
    # Already headed (Mamba-2): as given, broadcast strides kept.
    assert _plans.headed((8, 64, 128), (1, 0, 0), 3, 0) == ((8, 64, 128), (1, 0, 0))
    assert _plans.headed((5,), (1,), 1, 0) == ((5,), (1,))
    with pytest.raises(ValueError, match="expected rank 3 or 4"):
        _plans.headed((4,), (1,), 4, 1)


class FakeStepExt:
    def __init__(self):
        self.prepared = []

    def step_prepare(self, runtime, layout):
        self.prepared.append(layout)
        return 3001


def test_step_cache_prepares_step_plans():
    fake = FakeStepExt()
    cache = _plans.PlanCache(lambda: fake, "step")
    metas = [None] * 11
    metas[0] = (_plans.FP32, (2, 1, 64, 16), (1024, 0, 16, 1))
    metas[10] = (_plans.INT32, (2,), (1,))
    e = cache.prepare("k", 7, metas, True, extra=0)
    assert e == (3001, 0, 0)
    layout = fake.prepared[0]
    assert len(layout) == 111 and layout[-1] == 1
    assert layout[:10] == (4, _plans.FP32, 2, 1, 64, 16, 1024, 0, 16, 1)
    assert layout[100:102] == (1, _plans.INT32)
    assert cache.get("k") is e
