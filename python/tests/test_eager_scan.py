"""ops._EagerScan (selective_scan_fn's eager training path) on the CPU with
stand-in CUDA implementations: what the forward saves, which backward launch
each output gradient makes, and that every leaf gets its gradient back in
place (the kernels themselves are tested on the GPU, test_gpu_bwd.py)."""
import pytest

torch = pytest.importorskip("torch")

from ssmtune import ops  # noqa: E402


class Fakes:
    """Stand-ins: the forward returns [out, out_z?, last?] from u; the
    backward records its call and returns gradients filled with their slot
    number, so each leaf's gradient says where it came from."""

    def __init__(self):
        self.bwd_calls = []

    def fwd(self, u, delta, A, B, C, D, z, delta_bias, h0, softplus, last, saved=None):
        if saved is not None:  # the eager path asks for the backward's states
            saved.append((torch.full((7,), 5.0), 16))
        outs = [u.detach() * 2]
        if z is not None:
            outs.append(u.detach() * 3)
        if last:
            outs.append(torch.zeros(u.shape[0], u.shape[1], A.shape[-1]))
        return outs

    def bwd(self, u, delta, A, B, C, D, z, delta_bias, h0, out, dout, dlast, softplus,
            saved=None):
        self.bwd_calls.append(dict(z=z is not None, out=out, dout=dout.clone(), dlast=dlast,
                                   softplus=softplus, saved=saved))
        present = [u, delta, A, B, C] + [x for x in (D, z, delta_bias, h0) if x is not None]
        return [torch.full_like(x, float(i + 1)) for i, x in enumerate(present)]


@pytest.fixture
def fakes(monkeypatch):
    f = Fakes()
    monkeypatch.setattr(ops, "_fwd_cuda", f.fwd)
    monkeypatch.setattr(ops, "_bwd_cuda", f.bwd)
    return f


def leaves(seed, with_flags, batch=2, dim=3, seqlen=5, dstate=4):
    g = torch.Generator().manual_seed(seed)
    t = {n: torch.randn(*s, generator=g) for n, s in (
        ("u", (batch, dim, seqlen)), ("delta", (batch, dim, seqlen)), ("A", (dim, dstate)),
        ("B", (batch, 1, dstate, seqlen)), ("C", (batch, 1, dstate, seqlen)))}
    if with_flags:
        t.update(D=torch.randn(dim, generator=g), z=torch.randn(batch, dim, seqlen, generator=g),
                 delta_bias=torch.randn(dim, generator=g))
    for x in t.values():
        x.requires_grad_()
    return t


def apply(t, last):
    return ops._EagerScan.apply(t["u"], t["delta"], t["A"], t["B"], t["C"], t.get("D"),
                                t.get("z"), t.get("delta_bias"), None, True, last)


def test_plain_gradients_reach_every_leaf(fakes):
    t = leaves(11, False)
    out, = apply(t, False)
    dout = torch.randn(out.shape, generator=torch.Generator().manual_seed(12))
    out.backward(dout)
    call, = fakes.bwd_calls
    assert not call["z"] and call["out"] is None and call["dlast"] is None and call["softplus"]
    torch.testing.assert_close(call["dout"], dout, rtol=0, atol=0)
    for i, name in enumerate(("u", "delta", "A", "B", "C")):
        assert t[name].grad.shape == t[name].shape
        assert torch.all(t[name].grad == i + 1), name


def test_flags_gate_and_last_state_in_one_launch(fakes):
    t = leaves(21, True)
    out, out_z, last = apply(t, True)
    dz = torch.randn(out_z.shape, generator=torch.Generator().manual_seed(22))
    dl = torch.randn(last.shape, generator=torch.Generator().manual_seed(23))
    torch.autograd.backward([out_z, last], [dz, dl])
    call, = fakes.bwd_calls
    assert call["z"]
    torch.testing.assert_close(call["out"], out, rtol=0, atol=0)  # y before the gate was saved
    torch.testing.assert_close(call["dout"], dz, rtol=0, atol=0)
    torch.testing.assert_close(call["dlast"], dl, rtol=0, atol=0)
    for i, name in enumerate(("u", "delta", "A", "B", "C", "D", "z", "delta_bias")):
        assert torch.all(t[name].grad == i + 1), name


def test_leaves_without_requires_grad_get_nothing(fakes):
    t = leaves(31, False)
    t["A"] = t["A"].detach()
    t["B"] = t["B"].detach()
    out, = apply(t, False)
    out.sum().backward()
    assert t["A"].grad is None and t["B"].grad is None
    assert torch.all(t["u"].grad == 1) and torch.all(t["C"].grad == 5)


def test_the_states_the_forward_saved_reach_the_backward(fakes):
    t = leaves(31, True)
    out, out_z = apply(t, False)
    torch.autograd.backward([out, out_z], [torch.ones_like(out), torch.ones_like(out_z)])
    assert len(fakes.bwd_calls) == 2  # the gated launch and out's own
    for call in fakes.bwd_calls:
        states, interval = call["saved"]
        assert interval == 16 and torch.all(states == 5.0) and states.shape == (7,)
