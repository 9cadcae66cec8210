"""Scoring of the Python backward against the float64 reference (the GPU
suites' helper): deterministic seeds from the case's name, the relative L2
error per gradient tensor, and the budgets of docs/accuracy.md.

Budgets (docs/accuracy.md, "Backward"), on rel L2 = ||got - ref|| / ||ref||:
    budget(grad) = acc + k * floor(ref, dtype the gradient is stored in)
    floor  = rel L2 of the exact gradient rounded to that dtype: about
             1.7e-3 (bf16), 2.1e-4 (fp16), 2.5e-8 (fp32) on randn-like data
    k      = 1.5; 2.5 for dz (it carries the rounding of the saved out too)
    acc    = 1e-4 for du, ddelta, dz (element gradients), 3e-4 for the sums
             dA, dB, dC, dD, ddelta_bias, dh0 (fp32 accumulation; measured
             1e-6 to 7e-6 at mamba-like inputs and seqlen 2048)
So a half-precision gradient may be off by about 1.5 times its own rounding,
and an fp32 one by the fp32 accumulation the kernels are tuned against.
"""
import math
import os
import zlib

import torch

ELEMENT_GRADS = ("du", "ddelta", "dz")
GRAD_NAMES = ("du", "ddelta", "dA", "dB", "dC", "dD", "dz", "ddelta_bias", "dh0")
ACC_ELEMENT, ACC_SUM = 1e-4, 3e-4
_BASE = int(os.environ.get("SSMTUNE_TEST_SEED", "0"))


def case_seed(name):
    """The seed of a case: crc32 of its name (plus $SSMTUNE_TEST_SEED, 0 by
    default), the same in every process (hash() is not)."""
    return (_BASE + zlib.crc32(name.encode())) % 2**31


def rel_l2(got, ref):
    """||got - ref|| / ||ref|| in float64; the absolute norm where ref is 0;
    inf where got has a NaN or Inf."""
    got, ref = got.double(), ref.double()
    if not torch.isfinite(got).all():
        return math.inf
    err = (got - ref).norm().item()
    norm = ref.norm().item()
    return err / norm if norm > 0 else err


def rounding_floor(ref, dtype):
    return rel_l2(ref.to(dtype), ref) if ref.norm().item() > 0 else 0.0


def budget(name, ref, dtype):
    acc = ACC_ELEMENT if name in ELEMENT_GRADS else ACC_SUM
    k = 2.5 if name == "dz" else 1.5
    return acc + k * rounding_floor(ref, dtype)


def check_grads(case, got, ref, leaves, out=print):
    """Checks each present gradient's dtype, shape and rel L2 against its
    budget; prints one line per case; returns the failures (empty: pass).
    got, ref, leaves: 9-tuples in GRAD_NAMES order (None where absent)."""
    fails, parts = [], []
    for name, g, r, x in zip(GRAD_NAMES, got, ref, leaves):
        if x is None:
            continue
        if g is None:
            fails.append(f"{name}: no gradient")
            continue
        if g.dtype != x.dtype or g.shape != x.shape:
            fails.append(f"{name}: {g.dtype} {tuple(g.shape)}, expected {x.dtype} "
                         f"{tuple(x.shape)}")
            continue
        err, bud = rel_l2(g, r), budget(name, r, g.dtype)
        parts.append(f"{name} {err:.2e}/{bud:.2e}")
        if not err <= bud:
            fails.append(f"{name}: rel L2 {err:.3e} over its budget {bud:.3e}")
    out(f"{case}: " + " ".join(parts) + ("" if not fails else "  FAIL " + "; ".join(fails)))
    return fails
