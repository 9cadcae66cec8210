"""How the backward maps gradients, without torch: the forward op's output
gradients to backward launches, the backward op's output list to names, and
the names to one gradient per forward op input (None where absent or not
needed). ops.py does the tensor work; this is the bookkeeping it is tested by.
"""
# The forward op's inputs, in its schema's order (the last two are flags).
FWD_INPUTS = ("u", "delta", "A", "B", "C", "D", "z", "delta_bias", "initial_state",
              "delta_softplus", "return_last_state")
# The backward op's outputs: always the first five, then one per optional input given.
ALWAYS = ("du", "ddelta", "dA", "dB", "dC")
OPTIONAL = (("D", "dD"), ("z", "dz"), ("delta_bias", "ddelta_bias"), ("initial_state", "dh0"))
ZEROS = "zeros"  # a launch's dout that torch did not give: the caller allocates zeros


def split_output_grads(grads, has_z, return_last_state):
    """(g_out, g_out_z, g_last) from the gradients of the op's outputs
    [out, out_z if z, last_state if asked] (None where unused)."""
    grads = list(grads)
    if len(grads) == 1 and isinstance(grads[0], (list, tuple)):
        grads = list(grads[0])  # the op returns a list: its gradients may come as one list
    want = 1 + bool(has_z) + bool(return_last_state)
    if len(grads) != want:
        raise ValueError(f"ssmtune: the backward got {len(grads)} output gradients, "
                         f"expected {want}")
    g_out = grads[0]
    g_out_z = grads[1] if has_z else None
    g_last = grads[-1] if return_last_state else None
    return g_out, g_out_z, g_last


def launches(has_z, g_out, g_out_z, g_last):
    """The backward launches the output gradients need: a list of
    (with_z, dout, dlast), dout ZEROS where the kernel needs one and torch
    gave None, dlast None for none. Without z: one launch with dout = g_out.
    With z the kernel's dout is the gradient of out_z; a gradient of out
    itself (only through selective_scan_fwd, which returns out too) is a
    second launch without z (the backward is linear in dout), summed."""
    if g_out is None and g_out_z is None and g_last is None:
        return []
    if not has_z:
        return [(False, ZEROS if g_out is None else g_out, g_last)]
    calls = []
    if g_out_z is not None or g_out is None:
        calls.append((True, ZEROS if g_out_z is None else g_out_z, g_last))
    if g_out is not None:
        calls.append((False, g_out, None if calls else g_last))
    return calls


def names(has_D, has_z, has_delta_bias, has_h0):
    """The backward op's output names, in its order, for these inputs."""
    present = {"D": has_D, "z": has_z, "delta_bias": has_delta_bias, "initial_state": has_h0}
    return ALWAYS + tuple(g for inp, g in OPTIONAL if present[inp])


def merge(first, second, add):
    """Sums two {name: grad} maps (a gradient one launch lacks is the other's)."""
    out = dict(first)
    for k, v in second.items():
        out[k] = v if k not in out else add(out[k], v)
    return out


def input_grads(named, needs_input_grad):
    """One gradient per forward op input (11), None for the flags, for
    inputs without a gradient and for inputs that do not need one."""
    by_input = {"u": "du", "delta": "ddelta", "A": "dA", "B": "dB", "C": "dC", "D": "dD",
                "z": "dz", "delta_bias": "ddelta_bias", "initial_state": "dh0"}
    out = []
    for i, inp in enumerate(FWD_INPUTS):
        g = by_input.get(inp)
        need = needs_input_grad[i] if i < len(needs_input_grad) else False
        out.append(named.get(g) if g is not None and need else None)
    return tuple(out)
