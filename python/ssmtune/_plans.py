"""Prepared-call descriptors, without torch: the layout tuples that
_ssmtune_ext.fwd_prepare and bwd_prepare take, built from tensor metadata,
and the cache from a call's metadata key to its prepared plan (one cache per
family: the forward's and the backward's).

A tensor's description is None (absent) or (dtype code, shape, strides).
The key the op builds per call is the tuple of every input's (dtype, shape,
strides, device index) plus the flags: everything a plan was validated
against, so a hit needs no validation beyond the pointer checks that
fwd_launch (bwd_launch) makes.
"""
FP32, FP16, BF16 = 0, 1, 2
NUM_TENSORS = 12
SLOTS = ("u", "delta", "A", "B", "C", "D", "z", "delta_bias", "h0", "out", "out_z",
         "last_state")
# ssmtune_bwd_args' tensors in SSMTUNE_BWD_* order: the forward's inputs, the
# saved out (with z), the incoming gradients, then the gradients it writes.
BWD_NUM_TENSORS = 21
BWD_SLOTS = ("u", "delta", "A", "B", "C", "D", "z", "delta_bias", "h0", "out", "dout", "dlast",
             "du", "ddelta", "dA", "dB", "dC", "dD", "dz", "ddelta_bias", "dh0")
# ssmtune_step_args' tensors in SSMTUNE_STEP_* order (state_indices with dtype
# INT32 or INT64).
STEP_SLOTS = ("state", "x", "dt", "A", "B", "C", "D", "z", "dt_bias", "out", "state_indices")
INT32, INT64 = 3, 4
_FAMILY_SLOTS = {"fwd": SLOTS, "bwd": BWD_SLOTS, "step": STEP_SLOTS}


def contiguous_strides(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def bc_meta(shape, strides):
    """B or C as the C ABI takes it: rank 2 constant (dim, dstate), rank 4
    (batch, groups, dstate, seqlen); mamba's rank 3 (batch, dstate, seqlen)
    is one group (the group stride is never used)."""
    if len(shape) == 3:
        return (shape[0], 1, shape[1], shape[2]), (strides[0], strides[0], strides[1], strides[2])
    return tuple(shape), tuple(strides)


def headed(shape, strides, rank, at):
    """A step tensor in the C ABI's headed form: mamba_ssm's one-head forms
    (state (batch, dim, dstate), x (batch, dim), A (dim, dstate), B
    (batch, dstate), D (dim,)) get a dimension of one (its stride 0) inserted
    at `at`; a tensor already of `rank` passes through."""
    shape, strides = tuple(shape), tuple(strides)
    if len(shape) == rank:
        return shape, strides
    if len(shape) != rank - 1:
        raise ValueError(f"ssmtune: expected rank {rank - 1} or {rank}, got shape {shape}")
    return shape[:at] + (1,) + shape[at:], strides[:at] + (0,) + strides[at:]


def layout(metas, delta_softplus, slots=SLOTS):
    """The tuple for fwd_prepare (121 ints from 12 (dtype, shape, strides) or
    None), with slots=BWD_SLOTS for bwd_prepare (211 ints from 21), with
    slots=STEP_SLOTS for step_prepare (111 ints from 11)."""
    if len(metas) != len(slots):
        raise ValueError(f"ssmtune: expected {len(slots)} tensor descriptions, got {len(metas)}")
    out = []
    for name, m in zip(slots, metas):
        if m is None:
            out.extend((0,) * 10)
            continue
        dtype, shape, strides = m[0], tuple(m[1]), tuple(m[2])
        if not 1 <= len(shape) <= 4 or len(strides) != len(shape):
            raise ValueError(f"ssmtune: {name}: rank {len(shape)} is not in [1, 4]")
        pad = (0,) * (4 - len(shape))
        out.append(len(shape))
        out.append(dtype)
        out.extend(shape + pad)
        out.extend(strides + pad)
    out.append(1 if delta_softplus else 0)
    return tuple(out)


class PlanCache:
    """key -> (plan, scratch bytes, extra), and for the backward two more
    fields: the interval of the states it takes from the forward (0: none)
    and the scratch bytes of a launch given them; `prepare(key, ...)` fills
    a miss.

    `get` is the dict's own get, so a hit costs one C call. The values are
    whatever the caller attaches (the op keeps the output shape and the
    device there). Plans are owned by their runtime: nothing is freed here.
    """

    def __init__(self, ext, family="fwd"):
        if family not in _FAMILY_SLOTS:
            raise ValueError(f"ssmtune: unknown kernel family {family!r} (fwd, bwd or step)")
        self._ext = ext  # a function returning the extension module (loaded on first use)
        self._family = family
        self._slots = _FAMILY_SLOTS[family]
        self._plans = {}
        self.get = self._plans.get

    def __len__(self):
        return len(self._plans)

    def prepare(self, key, runtime, metas, delta_softplus, extra=None):
        ext = self._ext()
        if self._family == "fwd":
            plan = ext.fwd_prepare(runtime, layout(metas, delta_softplus))
            entry = (plan, ext.fwd_scratch_bytes(plan), extra)
        elif self._family == "step":
            plan = ext.step_prepare(runtime, layout(metas, delta_softplus, STEP_SLOTS))
            entry = (plan, 0, extra)
        else:
            plan = ext.bwd_prepare(runtime, layout(metas, delta_softplus, BWD_SLOTS))
            entry = (plan, ext.bwd_scratch_bytes(plan), extra, ext.bwd_states_interval(plan),
                     ext.bwd_states_scratch_bytes(plan))
        self._plans[key] = entry
        return entry

    def clear(self):
        self._plans.clear()
