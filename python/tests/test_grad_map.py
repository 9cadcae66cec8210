"""The backward's bookkeeping without torch: which launches a set of output
gradients needs (None where torch gave none), the backward op's output
names, the sum of two launches, and one gradient per forward op input."""
import pytest

from ssmtune import _grad_map as gm


def test_split_output_grads():
    assert gm.split_output_grads(["o"], False, False) == ("o", None, None)
    assert gm.split_output_grads(["o", "oz"], True, False) == ("o", "oz", None)
    assert gm.split_output_grads(["o", "oz", "l"], True, True) == ("o", "oz", "l")
    assert gm.split_output_grads(["o", "l"], False, True) == ("o", None, "l")
    assert gm.split_output_grads([["o", None, "l"]], True, True) == ("o", None, "l")  # one list
    with pytest.raises(ValueError, match="got 2 output gradients, expected 3"):
        gm.split_output_grads(["o", "l"], True, True)


def test_launches_without_z():
    assert gm.launches(False, None, None, None) == []
    assert gm.launches(False, "g", None, None) == [(False, "g", None)]
    assert gm.launches(False, "g", None, "gl") == [(False, "g", "gl")]
    # only last_state used: the kernel still needs a dout, zeros
    assert gm.launches(False, None, None, "gl") == [(False, gm.ZEROS, "gl")]


def test_launches_with_z():
    # selective_scan_fn returns out_z: its gradient is the kernel's dout
    assert gm.launches(True, None, "gz", None) == [(True, "gz", None)]
    assert gm.launches(True, None, "gz", "gl") == [(True, "gz", "gl")]
    assert gm.launches(True, None, None, "gl") == [(True, gm.ZEROS, "gl")]
    # a gradient of out itself (selective_scan_fwd returns it): a second launch, no gate
    assert gm.launches(True, "g", "gz", "gl") == [(True, "gz", "gl"), (False, "g", None)]
    assert gm.launches(True, "g", None, "gl") == [(False, "g", "gl")]
    assert gm.launches(True, "g", None, None) == [(False, "g", None)]


def test_names_follow_the_inputs_given():
    assert gm.names(False, False, False, False) == ("du", "ddelta", "dA", "dB", "dC")
    assert gm.names(True, True, True, True) == ("du", "ddelta", "dA", "dB", "dC", "dD", "dz",
                                                "ddelta_bias", "dh0")
    assert gm.names(False, True, False, True)[5:] == ("dz", "dh0")


def test_merge_sums_common_gradients():
    a = {"du": 1, "dz": 5, "dA": 2}
    b = {"du": 10, "dA": 20, "dh0": 7}
    assert gm.merge(a, b, lambda x, y: x + y) == {"du": 11, "dz": 5, "dA": 22, "dh0": 7}
    assert a == {"du": 1, "dz": 5, "dA": 2}  # inputs untouched


def test_input_grads_one_per_op_input():
    named = dict(zip(gm.names(True, True, True, True), range(9)))
    got = gm.input_grads(named, (True,) * 9 + (False, False))
    assert got == (0, 1, 2, 3, 4, 5, 6, 7, 8, None, None)
    assert len(gm.FWD_INPUTS) == 11
    # not needed: None; absent inputs: None
    named = dict(zip(gm.names(False, False, True, False), range(6)))
    need = (True, False, True, True, True, False, False, True, False, False, False)
    assert gm.input_grads(named, need) == (0, None, 2, 3, 4, None, None, 5, None, None, None)
