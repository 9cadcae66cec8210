"""Child of test_gpu_op.py::test_cuda_graph_with_scratch: with
$SSMTUNE_FORCE_CONFIG naming a config that needs scratch, checks the plan
asks for scratch, then capture + replay against eager and the reference."""
import sys

import torch

import ssmtune  # noqa: F401  (registers the ops)
from ssmtune import ops
from gpu_support import capture_and_check, make_inputs
from scan_reference import reference


def main():
    shape = (2, 64, 1000, 16)

    def fn(*x):
        u, delta, A, B, C, D, z, delta_bias, h0 = x
        return ops.fwd_custom_op(u, delta, A, B, C, D, z, delta_bias, h0, True, True)

    static = make_inputs(*shape, torch.float32, dz=True, bias=True)
    fn(*static)
    entries = list(ops._cache._plans.values())
    scratch = entries[-1][1]
    print(f"scratch bytes {scratch}; {ops._ext.ext().fwd_explain(entries[-1][0])}")
    if scratch == 0:
        print("FAIL: the forced config needs no scratch")
        return 1
    outs = capture_and_check(fn, static, lambda r: make_inputs(*shape, torch.float32, dz=True,
                                                                bias=True, salt=("child", r)))
    u, delta, A, B, C, D, z, delta_bias, _ = static
    want, want_last = reference(u, delta, A, B, C, D, z, delta_bias, True, True)
    torch.testing.assert_close(outs[1].double(), want, rtol=6e-4, atol=2e-3)
    torch.testing.assert_close(outs[2].double(), want_last, rtol=6e-4, atol=2e-3)
    print("capture ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
