"""ops._backward_impl without torch or a GPU: the forward's saved tensors
and output gradients in, the backward op's calls (which tensors, in which
order, zeros where torch gave None) and one gradient per op input out.
Tensors are strings; torch's zeros_like and add are stand-ins."""
import types

import pytest

from ssmtune import ops


class Ctx:
    def __init__(self, saved, last=False, needs=None, interval=0):
        self.saved_tensors = saved
        self.states_interval = interval
        self.delta_softplus = True
        self.return_last_state = last
        self.needs_input_grad = needs or tuple(x is not None for x in saved[:9]) + (False,) * 2


class BwdOp:
    """Records its calls; returns one named gradient per output it owes."""

    def __init__(self):
        self.calls = []

    def __call__(self, u, delta, A, B, C, D, z, delta_bias, h0, out, dout, dlast, softplus,
                 *states):
        self.calls.append(dict(z=z, out=out, dout=dout, dlast=dlast, softplus=softplus))
        if states:  # only when the backward takes them
            self.calls[-1]["saved"] = states[0]
        n = len(self.calls)
        names = ["du", "ddelta", "dA", "dB", "dC"] + [
            g for x, g in ((D, "dD"), (z, "dz"), (delta_bias, "ddelta_bias"), (h0, "dh0"))
            if x is not None]
        return [f"{g}{n}" for g in names]


@pytest.fixture(autouse=True)
def fake_torch(monkeypatch):
    fake = types.SimpleNamespace(zeros_like=lambda t, memory_format=None: f"zeros({t})",
                                 add=lambda a, b: f"{a}+{b}", contiguous_format=None)
    monkeypatch.setattr(ops, "torch", fake)


def saved(D=None, z=None, delta_bias=None, h0=None, states=None):
    return ("u", "delta", "A", "B", "C", D, z, delta_bias, h0, "out" if z else None, states)


def test_plain_one_launch():
    op = BwdOp()
    got = ops._backward_impl(op, Ctx(saved()), (["g"],))
    assert op.calls == [dict(z=None, out=None, dout="g", dlast=None, softplus=True)]
    assert got == ("du1", "ddelta1", "dA1", "dB1", "dC1", None, None, None, None, None, None)


def test_with_z_the_gradient_of_out_z_is_dout_and_out_is_passed():
    op = BwdOp()
    got = ops._backward_impl(op, Ctx(saved(D="D", z="z", delta_bias="db"), last=True),
                             ([None, "gz", "gl"],))  # one list
    assert op.calls == [dict(z="z", out="out", dout="gz", dlast="gl", softplus=True)]
    assert got == ("du1", "ddelta1", "dA1", "dB1", "dC1", "dD1", "dz1", "ddelta_bias1", None,
                   None, None)


def test_only_last_state_used_makes_a_zero_dout():
    op = BwdOp()
    got = ops._backward_impl(op, Ctx(saved(h0="h0"), last=True), (None, "gl"))
    assert op.calls[0]["dout"] == "zeros(u)" and op.calls[0]["dlast"] == "gl"
    assert got[8] == "dh01"


def test_nothing_used_launches_nothing():
    op = BwdOp()
    assert ops._backward_impl(op, Ctx(saved(), last=True), (None, None)) == (None,) * 11
    assert op.calls == []


def test_out_and_out_z_both_used_sum_two_launches():
    op = BwdOp()
    got = ops._backward_impl(op, Ctx(saved(D="D", z="z", h0="h0"), last=True),
                             ("go", "gz", "gl"))
    assert [c["z"] for c in op.calls] == ["z", None]
    assert op.calls[1] == dict(z=None, out=None, dout="go", dlast=None, softplus=True)
    assert got[0] == "du1+du2" and got[5] == "dD1+dD2" and got[8] == "dh01+dh02"
    assert got[6] == "dz1"  # only the gated launch has a dz


def test_inputs_that_need_no_gradient_get_none():
    op = BwdOp()
    needs = (True, False, True, False, False, False, False, False, False, False, False)
    got = ops._backward_impl(op, Ctx(saved(D="D"), needs=needs), ("g",))
    assert got == ("du1", None, "dA1", None, None, None, None, None, None, None, None)


def test_one_gradient_per_input_the_op_received():
    # The dispatcher drops trailing arguments equal to their defaults (here
    # D=None ... return_last_state=False): torch then passes five needs and
    # wants five gradients back.
    op = BwdOp()
    got = ops._backward_impl(op, Ctx(saved(), needs=(True,) * 5), (["g"],))
    assert got == ("du1", "ddelta1", "dA1", "dB1", "dC1")


def test_saved_states_reach_every_launch_of_a_backward_that_takes_them():
    # The eager path: the states the forward saved (and their interval) go
    # to both launches (with and without the gate: they depend on neither).
    op = BwdOp()
    ctx = Ctx(saved(z="z", states="S"), last=True, interval=16)
    got = ops._backward_impl(op, ctx, ("go", "gz", None), takes_states=True)
    assert [c["saved"] for c in op.calls] == [("S", 16), ("S", 16)]
    assert got[0] == "du1+du2"
    # Saved none: None; the registered ops' backward never gets the argument.
    op = BwdOp()
    ops._backward_impl(op, Ctx(saved()), (["g"],), takes_states=True)
    assert op.calls[0]["saved"] is None
    op = BwdOp()
    ops._backward_impl(op, Ctx(saved(states="S"), interval=16), (["g"],))
    assert "saved" not in op.calls[0]
