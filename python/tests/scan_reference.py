"""The selective scan in float64 PyTorch, step by step (the GPU suites'
reference): mamba_ssm's forward semantics, plus an initial state."""
import torch


def reference(u, delta, A, B, C, D=None, z=None, delta_bias=None, softplus=False, last=False,
              h0=None):
    """B, C: (batch, groups, dstate, seqlen). Returns out (y * silu(z) when z
    is given), or (out, last_state) with last."""
    u, delta, A, B, C = (x.double() for x in (u, delta, A, B, C))
    if delta_bias is not None:
        delta = delta + delta_bias.double()[None, :, None]
    if softplus:
        delta = torch.nn.functional.softplus(delta)
    batch, dim, L = u.shape
    groups = B.shape[1]
    Bx = B.repeat_interleave(dim // groups, dim=1)  # (batch, dim, N, L)
    Cx = C.repeat_interleave(dim // groups, dim=1)
    dA = torch.exp(delta[:, :, None, :] * A[None, :, :, None])
    dBu = delta[:, :, None, :] * Bx * u[:, :, None, :]
    h = (torch.zeros(batch, dim, A.shape[1], dtype=torch.float64, device=u.device)
         if h0 is None else h0.double().clone())
    ys = []
    for t in range(L):
        h = dA[..., t] * h + dBu[..., t]
        ys.append((h * Cx[..., t]).sum(-1))
    y = torch.stack(ys, -1)
    if D is not None:
        y = y + D.double()[None, :, None] * u
    out = y if z is None else y * torch.nn.functional.silu(z.double())
    return (out, h) if last else out
