"""The selective scan's gradients in fp64 at model sizes, in bounded memory (bench/models.py).

Autograd through a step loop (python/tests/scan_reference.py) keeps a (batch, dim, dstate,
seqlen) history, tens of GB at a training shape. Here the forward is compare.reference_fp64,
which keeps the state at each time block's start; the backward walks the blocks in reverse,
recomputes a block's states from its checkpoint (compare.scan_block) and runs the adjoint
recurrence g_t = dy_t C_t + exp(delta_{t+1} A) g_{t+1} through it, one addcmul per step:

    dC_t = sum_d dy_t h_t          dB_t = sum_d g_t delta_t u_t
    du_t = delta_t sum_n g_t B_t (+ D dy_t)
    d(delta_t) = sum_n g_t (u_t B_t + A exp(delta_t A) h_{t-1})   (then through softplus)
    dA = sum_{b,t} g_t delta_t exp(delta_t A) h_{t-1}
    dz = dout y sigmoid(z) (1 + z (1 - sigmoid(z))), dy = dout silu(z)

with the sums over d taken per group. CPU-tested against autograd (bench/tests).
"""
import torch

import compare

GRADS = ("du", "ddelta", "dA", "dB", "dC", "dD", "dz", "ddelta_bias")


def _group_sum(x, groups):
    """(t, batch, dim, dstate) summed over each group's channels: (t, batch, groups, dstate)."""
    t, b, d, n = x.shape
    return x.view(t, b, groups, d // groups, n).sum(3)


def _to_layout(x_tm):
    """Time-major (t, ...) back to (..., t)."""
    return x_tm.movedim(0, -1)


def forward_backward_fp64(inp, dout, dlast=None):
    """out, last_state and the gradients of <out, dout> (+ <last_state, dlast>) in fp64.

    inp: compare.Inputs (B, C as (batch, groups, dstate, seqlen)); dout: (batch, dim,
    seqlen), the gradient of the returned output (out * silu(z) with z). Returns a dict with
    "out", "last_state" and the gradients named as GRADS (None for absent inputs), each
    shaped like its input.
    """
    batch, dim, seqlen = inp.u.shape
    dstate = inp.A.shape[1]
    groups = inp.B.shape[1]
    dev = inp.u.device
    checkpoints = []
    out, last = compare.reference_fp64(inp, last_state=True, checkpoints=checkpoints)

    A = inp.A.double()
    D = None if inp.D is None else inp.D.double()
    f64 = dict(dtype=torch.float64, device=dev)
    du = torch.empty(batch, dim, seqlen, **f64)
    ddelta = torch.empty(batch, dim, seqlen, **f64)
    dB = torch.empty(batch, groups, dstate, seqlen, **f64)
    dC = torch.empty(batch, groups, dstate, seqlen, **f64)
    dz = None if inp.z is None else torch.empty(batch, dim, seqlen, **f64)
    dA = torch.zeros(dim, dstate, **f64)
    dD = None if D is None else torch.zeros(dim, **f64)
    dbias = None if inp.delta_bias is None else torch.zeros(dim, **f64)

    # carry: the gradient reaching the state before the block's first step from later steps.
    carry = (torch.zeros(batch, dim, dstate, **f64) if dlast is None
             else dlast.double().clone())
    bounds = [t0 for t0, _ in checkpoints] + [seqlen]
    for k in reversed(range(len(checkpoints))):
        t0, t1 = bounds[k], bounds[k + 1]
        h_start = checkpoints[k][1]
        delta, u, decay, states = compare.scan_block(inp, t0, t1, h_start)
        C = compare.per_channel(inp.C, t0, t1, dim)
        dy = compare._time_major(dout, t0, t1)  # (t, batch, dim)
        if inp.z is not None:
            y = (states * C).sum(-1)
            if D is not None:
                y += D * u
            z = compare._time_major(inp.z, t0, t1)
            sig = torch.sigmoid(z)
            dz[..., t0:t1] = _to_layout(dy * y * sig * (1 + z * (1 - sig)))
            dy = dy * z * sig
            del y, z, sig
        # Adjoint walk: g[i] = dy[i] C[i] + carry; carry = decay[i] g[i].
        g = torch.empty_like(states)
        dyv = dy[..., None]
        for i in reversed(range(t1 - t0)):
            torch.addcmul(carry, dyv[i], C[i], out=g[i])
            carry = decay[i] * g[i]
        dC[..., t0:t1] = _to_layout(_group_sum(dyv * states, groups))
        h_prev = torch.cat((h_start[None], states[:-1]))
        del states, C
        dB[..., t0:t1] = _to_layout(_group_sum(g * (delta * u)[..., None], groups))
        gB = (g * compare.per_channel(inp.B, t0, t1, dim)).sum(-1)  # (t, batch, dim)
        gdh = g.mul_(decay).mul_(h_prev)  # g exp(delta A) h_{t-1}; g is not needed after
        del decay, h_prev
        dA += (gdh * delta[..., None]).sum((0, 1))
        ddt = gB * u + (gdh * A).sum(-1)
        del gdh
        du_blk = gB * delta
        if D is not None:
            du_blk += D * dy
            dD += (dy * u).sum((0, 1))
        du[..., t0:t1] = _to_layout(du_blk)
        if inp.delta_softplus:
            pre = compare._time_major(inp.delta, t0, t1)
            if inp.delta_bias is not None:
                pre = pre + inp.delta_bias.double()
            # softplus(x) = x above 20 (torch's and mamba_ssm's threshold): slope 1 there.
            ddt = ddt * torch.where(pre > 20, torch.ones_like(pre), torch.sigmoid(pre))
        ddelta[..., t0:t1] = _to_layout(ddt)
        if dbias is not None:
            dbias += ddt.sum((0, 1))
    grads = {"du": du, "ddelta": ddelta, "dA": dA, "dB": dB, "dC": dC, "dD": dD, "dz": dz,
             "ddelta_bias": dbias}
    return {"out": out, "last_state": last, **grads}
