"""The selective scan in float64 PyTorch, step by step (the GPU suites'
reference): mamba_ssm's forward semantics, plus an initial state. Every op
is differentiable, so torch.autograd through it on float64 leaves gives the
reference gradients (reference_grads)."""
import torch


def _expand_bc(X, batch, dim, L):
    """B or C as (batch, dim, dstate, seqlen): constant (dim, dstate), mamba's
    3-D (batch, dstate, seqlen) = one group, or (batch, groups, dstate, seqlen)."""
    if X.dim() == 2:
        return X[None, :, :, None].expand(batch, dim, X.shape[1], L)
    if X.dim() == 3:
        X = X[:, None]
    return X.repeat_interleave(dim // X.shape[1], dim=1)


def reference(u, delta, A, B, C, D=None, z=None, delta_bias=None, softplus=False, last=False,
              h0=None):
    """B, C: (batch, groups, dstate, seqlen), (batch, dstate, seqlen) or
    constant (dim, dstate). Returns out (y * silu(z) when z is given), or
    (out, last_state) with last. Computes in float64 (inputs are cast)."""
    u, delta, A, B, C = (x.double() for x in (u, delta, A, B, C))
    if delta_bias is not None:
        delta = delta + delta_bias.double()[None, :, None]
    if softplus:
        delta = torch.nn.functional.softplus(delta)
    batch, dim, L = u.shape
    Bx = _expand_bc(B, batch, dim, L)  # (batch, dim, N, L)
    Cx = _expand_bc(C, batch, dim, L)
    dA = torch.exp(delta[:, :, None, :] * A[None, :, :, None])
    dBu = delta[:, :, None, :] * Bx * u[:, :, None, :]
    h = (torch.zeros(batch, dim, A.shape[1], dtype=torch.float64, device=u.device)
         if h0 is None else h0.double())
    hs = []
    for t in range(L):
        h = dA[..., t] * h + dBu[..., t]
        hs.append(h)
    y = (torch.stack(hs, -1) * Cx).sum(2)
    if D is not None:
        y = y + D.double()[None, :, None] * u
    out = y if z is None else y * torch.nn.functional.silu(z.double())
    return (out, h) if last else out


def reference_grads(inputs, softplus, dout, dlast=None):
    """float64 gradients of the reference. inputs: (u, delta, A, B, C, D, z,
    delta_bias, h0) (None where absent), the exact values the kernel got;
    dout: the gradient of the returned output (out_z with z); dlast: of
    last_state, or None. Returns a tuple of 9 (None where the input is absent)."""
    leaves = [None if x is None else x.detach().double().requires_grad_() for x in inputs]
    u, delta, A, B, C, D, z, delta_bias, h0 = leaves
    out, last = reference(u, delta, A, B, C, D, z, delta_bias, softplus, True, h0)
    outs, grads = [out], [dout.double()]
    if dlast is not None:
        outs.append(last)
        grads.append(dlast.double())
    present = [x for x in leaves if x is not None]
    got = iter(torch.autograd.grad(outs, present, grads, allow_unused=True))
    res = []
    for x in leaves:
        if x is None:
            res.append(None)
            continue
        g = next(got)
        res.append(torch.zeros_like(x) if g is None else g)
    return tuple(res)
