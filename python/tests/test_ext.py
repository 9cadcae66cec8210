"""The compiled binding without a GPU: it loads (abi3, beside libssmtune.so),
reports the library's version, and turns every bad call into a Python
exception with the C ABI's message, never a crash."""
import pytest

from ssmtune import _ext, _lib


@pytest.fixture(scope="module")
def ext():
    return _ext.ext()


def test_loads_beside_the_library(ext):
    assert ext.__file__.endswith("_ssmtune_ext.abi3.so")
    assert str(_lib.library_dir()) in ext.__file__


def test_versions(ext):
    import ssmtune
    assert ext.version() == ext.__version__ == ssmtune.version()
    assert ext.abi_version() >= 2
    assert ext.NUM_TENSORS == 12
    assert ext.BWD_NUM_TENSORS == 21


def test_error_is_a_runtime_error(ext):
    assert issubclass(ext.Error, RuntimeError)


def test_launch_checks_its_arity(ext):
    with pytest.raises(TypeError, match="takes 15 or 17 arguments, got 3"):
        ext.fwd_launch(1, 2, 3)


def test_launch_rejects_a_null_plan(ext):
    with pytest.raises(ValueError, match="plan must not be NULL"):
        ext.fwd_launch(0, *([0] * 14))


def test_pointers_must_be_ints(ext):
    with pytest.raises(TypeError):
        ext.fwd_launch(0, "u", *([0] * 13))
    with pytest.raises(OverflowError):
        ext.fwd_launch(-1, *([0] * 14))


def test_prepare_checks_the_layout_tuple(ext):
    with pytest.raises(TypeError, match="tuple of 121 ints"):
        ext.fwd_prepare(0, (0,) * 5)
    with pytest.raises(TypeError, match="tuple of 121 ints"):
        ext.fwd_prepare(0, [0] * 121)
    with pytest.raises(ValueError, match="runtime must not be NULL"):
        ext.fwd_prepare(0, (0,) * 121)


def test_plan_queries_reject_null(ext):
    with pytest.raises(ValueError, match="plan must not be 0"):
        ext.fwd_scratch_bytes(0)
    with pytest.raises(ValueError, match="plan must not be NULL"):
        ext.fwd_explain(0)


def test_bwd_calls_check_their_arguments(ext):
    with pytest.raises(TypeError, match="takes 24 or 26 arguments, got 3"):
        ext.bwd_launch(1, 2, 3)
    with pytest.raises(ValueError, match="plan must not be 0"):
        ext.bwd_launch(0, *([0] * 23))
    with pytest.raises(TypeError):
        ext.bwd_launch(0, "u", *([0] * 22))
    with pytest.raises(TypeError, match="bwd_prepare: layout must be a tuple of 211 ints"):
        ext.bwd_prepare(0, (0,) * 121)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        ext.bwd_prepare(0)
    with pytest.raises(ValueError, match="plan must not be 0"):
        ext.bwd_scratch_bytes(0)
    with pytest.raises(ValueError, match="plan must not be 0"):
        ext.bwd_explain(0)


def test_runtime_destroy_of_null_is_a_no_op(ext):
    assert ext.runtime_destroy(0) is None


def test_without_a_driver_create_says_so(ext):
    try:
        rt = ext.runtime_create("", 0)
    except ext.Error as e:
        assert "no CUDA driver found" in str(e)
        assert "no CUDA driver found" in ext.last_error()
        return
    ext.runtime_destroy(rt)
    pytest.skip("a GPU is present")


def test_saved_states_calls_check_their_arguments(ext):
    with pytest.raises(ValueError, match="plan must not be 0"):
        ext.fwd_prepare_states(0, 16)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        ext.fwd_prepare_states(0)
    with pytest.raises(ValueError, match="plan must not be 0"):
        ext.bwd_states_interval(0)
    with pytest.raises(ValueError, match="plan must not be 0"):
        ext.bwd_states_scratch_bytes(0)
    # A states pointer needs an interval > 0 (checked before the plan is used).
    with pytest.raises(ValueError, match="states must be a pointer and interval > 0, got 0"):
        ext.fwd_launch(1, *([0] * 14), 4096, 0)
    with pytest.raises(ValueError, match="states must be a pointer and interval > 0, got 16"):
        ext.bwd_launch(1, *([0] * 23), 0, 16)
    with pytest.raises(ValueError, match="plan must not be NULL"):
        ext.fwd_launch(0, *([0] * 14), 4096, 16)
