#!/usr/bin/env python3
"""A small Mamba-1 language model in plain PyTorch, trained on a synthetic periodic-sequence
task with ssmtune's selective_scan_fn or a pure-PyTorch reference scan (or both, from the same
initial weights on the same batches), then generating tokens: prefill through the scan with
return_last_state, single decode steps in PyTorch from that state.

    PYTHONPATH=python python3 python/examples/mamba_lm.py --scan both --steps 300
"""
import argparse
import copy
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

try:
    import torch
    import torch.nn.functional as F
    from torch import nn
except ImportError as e:  # pragma: no cover - depends on the machine
    _MSG = "mamba_lm.py needs PyTorch (import torch failed: %s)" % e
    if __name__ == "__main__":
        sys.exit(_MSG)
    raise ImportError(_MSG) from e


# ---------------------------------------------------------------------------------------------
# The scans: ssmtune's drop-in, and a differentiable one in PyTorch, one time step at a time.


def reference_scan(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False,
                   return_last_state=False):
    """selective_scan_fn's semantics (mamba_ssm's) computed in fp32 by a loop over time, so
    autograd differentiates it. u, delta, z: (batch, dim, L); A: (dim, N); B, C: (batch, N, L)
    or (batch, groups, N, L). Returns out in u's dtype, and the fp32 last state when asked."""
    out_dtype = u.dtype
    u, delta, A, B, C = (t.float() for t in (u, delta, A, B, C))
    if delta_bias is not None:
        delta = delta + delta_bias.float()[None, :, None]
    if delta_softplus:
        delta = F.softplus(delta)
    batch, dim, _ = u.shape
    if B.dim() == 3:
        B = B[:, None]
    if C.dim() == 3:
        C = C[:, None]
    if B.shape[1] > 1:
        B = B.repeat_interleave(dim // B.shape[1], dim=1)
    if C.shape[1] > 1:
        C = C.repeat_interleave(dim // C.shape[1], dim=1)
    dA = torch.exp(delta[:, :, None, :] * A[None, :, :, None])  # (batch, dim, N, L)
    dBu = (delta * u)[:, :, None, :] * B  # (batch, dim, N, L)
    h = u.new_zeros(batch, dim, A.shape[1])
    ys = []
    # unbind (its backward is one stack) rather than indexing per step (a full-size scatter each)
    for dA_t, dBu_t, C_t in zip(dA.unbind(-1), dBu.unbind(-1), C.unbind(-1)):
        h = dA_t * h + dBu_t
        ys.append((h * C_t).sum(-1))
    y = torch.stack(ys, -1)
    if D is not None:
        y = y + D.float()[None, :, None] * u
    if z is not None:
        y = y * F.silu(z.float())
    out = y.to(out_dtype)
    return (out, h) if return_last_state else out


def ssmtune_scan():
    """ssmtune.selective_scan_fn, from an install or from this checkout's python/."""
    try:
        import ssmtune
    except ImportError:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        import ssmtune
    return ssmtune.selective_scan_fn


def get_scan(name):
    if name == "reference":
        return reference_scan
    if name == "ssmtune":
        return ssmtune_scan()
    raise ValueError(f"unknown scan {name!r} (ssmtune or reference)")


# ---------------------------------------------------------------------------------------------
# The model.


@dataclass
class Config:
    vocab: int = 16
    d_model: int = 64
    n_layers: int = 2
    d_state: int = 16
    d_conv: int = 4
    expand: int = 2
    dt_min: float = 1e-3
    dt_max: float = 1e-1

    @property
    def d_inner(self):
        return self.expand * self.d_model

    @property
    def dt_rank(self):
        return math.ceil(self.d_model / 16)


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return xf.to(x.dtype) * self.weight


class MambaMixer(nn.Module):
    """in_proj -> causal depthwise conv1d -> SiLU -> x_proj -> dt_proj -> selective scan (D, z
    gate, dt_proj's bias as delta_bias, softplus) -> out_proj."""

    def __init__(self, cfg):
        super().__init__()
        di, n, r = cfg.d_inner, cfg.d_state, cfg.dt_rank
        self.d_state, self.dt_rank = n, r
        self.in_proj = nn.Linear(cfg.d_model, 2 * di, bias=False)
        self.conv1d = nn.Conv1d(di, di, cfg.d_conv, groups=di, padding=cfg.d_conv - 1)
        self.x_proj = nn.Linear(di, r + 2 * n, bias=False)
        self.dt_proj = nn.Linear(r, di, bias=True)
        self.out_proj = nn.Linear(di, cfg.d_model, bias=False)
        # S4D-real A = -(1..N) per channel, kept as its log; D = 1.
        self.A_log = nn.Parameter(torch.log(torch.arange(1, n + 1, dtype=torch.float32))
                                  .repeat(di, 1))
        self.D = nn.Parameter(torch.ones(di))
        # dt_proj: small weights; bias = softplus^-1(dt), dt log-uniform in [dt_min, dt_max].
        nn.init.uniform_(self.dt_proj.weight, -r**-0.5, r**-0.5)
        dt = torch.exp(torch.rand(di) * (math.log(cfg.dt_max) - math.log(cfg.dt_min))
                       + math.log(cfg.dt_min))
        with torch.no_grad():
            self.dt_proj.bias.copy_(dt + torch.log(-torch.expm1(-dt)))

    def forward(self, hidden, scan, return_state=False):
        """hidden: (batch, L, d_model). With return_state also returns the decode state:
        (the last d_conv-1 conv inputs (batch, d_inner, d_conv-1), the scan's last state)."""
        L = hidden.shape[1]
        x, z = self.in_proj(hidden).chunk(2, dim=-1)
        x = x.transpose(1, 2)  # (batch, d_inner, L)
        k = self.conv1d.kernel_size[0] - 1
        conv_state = F.pad(x, (k, 0))[..., -k:].float() if return_state else None
        x = F.silu(self.conv1d(x)[..., :L])
        dt, B, C = self.x_proj(x.transpose(1, 2)).split(
            [self.dt_rank, self.d_state, self.d_state], dim=-1)
        delta = F.linear(dt, self.dt_proj.weight)  # dt_proj's bias goes in as delta_bias
        dtype = x.dtype
        x = x.contiguous()
        delta = delta.transpose(1, 2).to(dtype).contiguous()
        B = B.transpose(1, 2).to(dtype).contiguous()  # (batch, N, L)
        C = C.transpose(1, 2).to(dtype).contiguous()
        z = z.transpose(1, 2).to(dtype).contiguous()
        A = -torch.exp(self.A_log.float())
        res = scan(x, delta, A, B, C, self.D.float(), z=z, delta_bias=self.dt_proj.bias.float(),
                   delta_softplus=True, return_last_state=return_state)
        y, ssm_state = res if return_state else (res, None)
        out = self.out_proj(y.transpose(1, 2))
        return (out, (conv_state, ssm_state)) if return_state else out

    def step(self, hidden, state):
        """One token: hidden (batch, d_model), state from forward(return_state) or step. The
        recurrence h = exp(dt*A) h + dt*B*x, y = C.h + D*x, out = y * silu(z) in fp32."""
        conv_state, h = state
        x, z = self.in_proj(hidden).chunk(2, dim=-1)  # (batch, d_inner)
        window = torch.cat([conv_state, x.float()[..., None]], dim=-1)  # (batch, d_inner, d_conv)
        x = (window * self.conv1d.weight[:, 0, :].float()).sum(-1) + self.conv1d.bias.float()
        x = F.silu(x)
        dt, B, C = self.x_proj(x.to(hidden.dtype)).split(
            [self.dt_rank, self.d_state, self.d_state], dim=-1)
        dt = F.softplus(F.linear(dt, self.dt_proj.weight).float() + self.dt_proj.bias.float())
        A = -torch.exp(self.A_log.float())
        h = torch.exp(dt[..., None] * A) * h + (dt * x)[..., None] * B.float()[:, None, :]
        y = (h * C.float()[:, None, :]).sum(-1) + self.D.float() * x
        y = y * F.silu(z.float())
        return self.out_proj(y.to(hidden.dtype)), (window[..., 1:], h)


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.norm = RMSNorm(cfg.d_model)
        self.mixer = MambaMixer(cfg)


class MambaLM(nn.Module):
    """Embedding, residual blocks x + mixer(norm(x)), final RMSNorm, LM head tied to the
    embedding. `scan` is the selective scan the mixers call (swappable)."""

    def __init__(self, cfg, scan):
        super().__init__()
        self.cfg = cfg
        self.scan = scan
        self.embedding = nn.Embedding(cfg.vocab, cfg.d_model)
        nn.init.normal_(self.embedding.weight, std=0.02)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm_f = RMSNorm(cfg.d_model)

    def forward(self, tokens, return_state=False):
        """tokens (batch, L) -> logits (batch, L, vocab) [, the decode state per layer]."""
        h = self.embedding(tokens)
        states = []
        for layer in self.layers:
            if return_state:
                out, st = layer.mixer(layer.norm(h), self.scan, return_state=True)
                states.append(st)
            else:
                out = layer.mixer(layer.norm(h), self.scan)
            h = h + out
        logits = F.linear(self.norm_f(h), self.embedding.weight)
        return (logits, states) if return_state else logits

    def step(self, token, states):
        """token (batch,) -> logits (batch, vocab), the next states."""
        h = self.embedding(token)
        new_states = []
        for layer, st in zip(self.layers, states):
            out, st = layer.mixer.step(layer.norm(h), st)
            new_states.append(st)
            h = h + out
        return F.linear(self.norm_f(h), self.embedding.weight), new_states


# ---------------------------------------------------------------------------------------------
# The task: each sequence repeats a random pattern of `period` tokens, so every token after the
# first period is the one `period` places back. The first period-1 targets cannot be predicted:
# the loss floor is (period-1)/L * ln(vocab), down from ln(vocab) at the start.


def make_batch(gen, batch, seqlen, vocab, period, device):
    pattern = torch.randint(vocab, (batch, period), generator=gen)
    seq = pattern.repeat(1, seqlen // period + 2)[:, :seqlen + 1]
    return seq[:, :-1].to(device), seq[:, 1:].to(device)


def loss_floor(seqlen, vocab, period):
    return (period - 1) / seqlen * math.log(vocab)


def autocast_ctx(device, dtype):
    return torch.autocast(device_type=torch.device(device).type, dtype=torch.bfloat16,
                          enabled=(dtype == "bf16"))


def train(models, steps, *, batch, seqlen, period, seed, device, dtype="fp32", lr=3e-3,
          log=None):
    """Trains each model with Adam on the same seeded batches, in lockstep. Returns one loss
    curve (a list of floats) per model."""
    gen = torch.Generator().manual_seed(seed)
    opts = [torch.optim.Adam(m.parameters(), lr=lr) for m in models]
    curves = [[] for _ in models]
    vocab = models[0].cfg.vocab
    for step in range(steps):
        x, y = make_batch(gen, batch, seqlen, vocab, period, device)
        for m, opt, curve in zip(models, opts, curves):
            with autocast_ctx(device, dtype):
                logits = m(x)
            loss = F.cross_entropy(logits.float().reshape(-1, vocab), y.reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            curve.append(loss.item())
        if log is not None:
            log(step, [c[-1] for c in curves])
    return curves


def max_rel_diff(a, b):
    return max(abs(x - y) / max(abs(y), 1e-12) for x, y in zip(a, b))


# ---------------------------------------------------------------------------------------------
# Generation.


@torch.no_grad()
def decode_matches_forward(model, tokens, prompt_len, device, dtype="fp32"):
    """Prefills tokens[:, :prompt_len] through the scan, feeds the rest one step at a time,
    and compares every logit with one full forward over all tokens. Returns the largest
    difference relative to the largest logit."""
    with autocast_ctx(device, dtype):
        full = model(tokens).float()
        pre, states = model(tokens[:, :prompt_len], return_state=True)
        got = [pre.float()]
        for t in range(prompt_len, tokens.shape[1]):
            logits, states = model.step(tokens[:, t], states)
            got.append(logits.float()[:, None])
    got = torch.cat(got, 1)
    return ((got - full).abs().max() / full.abs().max()).item()


@torch.no_grad()
def generate(model, prompt, n_new, device, dtype="fp32"):
    """Greedy: prefill the prompt (batch, P), then n_new single steps. Returns the new tokens
    (batch, n_new) and the seconds of prefill and of decode."""
    sync = torch.cuda.synchronize if torch.device(device).type == "cuda" else (lambda: None)
    with autocast_ctx(device, dtype):
        sync()
        t0 = time.perf_counter()
        logits, states = model(prompt, return_state=True)
        tok = logits[:, -1].argmax(-1)
        sync()
        t1 = time.perf_counter()
        out = [tok]
        for _ in range(n_new - 1):
            logits, states = model.step(tok, states)
            tok = logits.argmax(-1)
            out.append(tok)
        sync()
        t2 = time.perf_counter()
    return torch.stack(out, 1), t1 - t0, t2 - t1


# ---------------------------------------------------------------------------------------------


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scan", choices=("ssmtune", "reference", "both"), default="both")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dtype", choices=("fp32", "bf16"), default="fp32",
                   help="bf16: the forward under torch.autocast(bfloat16)")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seqlen", type=int, default=64)
    p.add_argument("--period", type=int, default=6)
    p.add_argument("--vocab", type=int, default=16)
    p.add_argument("--d-model", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--d-state", type=int, default=16)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--gen-batch", type=int, default=8)
    p.add_argument("--gen-tokens", type=int, default=256)
    args = p.parse_args(argv)
    if args.scan != "reference" and torch.device(args.device).type != "cuda":
        p.error(f"--scan {args.scan} needs a CUDA device (ssmtune's scan runs on the GPU)")

    # Exact fp32 everywhere, so the two scans are what differs (cuDNN's conv would use TF32).
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    names = ["ssmtune", "reference"] if args.scan == "both" else [args.scan]
    cfg = Config(vocab=args.vocab, d_model=args.d_model, n_layers=args.layers,
                 d_state=args.d_state)
    torch.manual_seed(args.seed)
    base = MambaLM(cfg, reference_scan).to(args.device)
    models = []
    for name in names:
        m = copy.deepcopy(base)
        m.scan = get_scan(name)
        models.append(m)
    nparams = sum(t.numel() for t in base.parameters())
    print(f"seed {args.seed}; model: d_model {cfg.d_model}, {cfg.n_layers} layers, d_inner "
          f"{cfg.d_inner}, d_state {cfg.d_state}, dt_rank {cfg.dt_rank}, {nparams} parameters; "
          f"task: period {args.period}, vocab {args.vocab}, batch {args.batch}, seqlen "
          f"{args.seqlen} (loss floor {loss_floor(args.seqlen, args.vocab, args.period):.3f}); "
          f"{args.dtype} on {args.device}")
    print("step  " + "  ".join(f"{n:>10}" for n in names) + ("     rel diff" if len(names) > 1
                                                              else ""))

    def log(step, losses):
        if step % 10 == 0 or step == args.steps - 1:
            line = f"{step:4d}  " + "  ".join(f"{v:10.5f}" for v in losses)
            if len(losses) > 1:
                line += f"  {abs(losses[0] - losses[1]) / abs(losses[1]):11.3e}"
            print(line, flush=True)

    t0 = time.perf_counter()
    curves = train(models, args.steps, batch=args.batch, seqlen=args.seqlen, period=args.period,
                   seed=args.seed, device=args.device, dtype=args.dtype, lr=args.lr, log=log)
    print(f"trained {args.steps} steps in {time.perf_counter() - t0:.1f} s")
    if len(curves) > 1:
        print(f"max relative difference of the loss curves: {max_rel_diff(*curves):.3e}")

    gen = torch.Generator().manual_seed(args.seed + 1)
    tokens, _ = make_batch(gen, args.gen_batch, args.seqlen, args.vocab, args.period,
                           args.device)
    prompt_len = args.seqlen // 2
    for name, m in zip(names, models):
        m.eval()
        err = decode_matches_forward(m, tokens, prompt_len, args.device, args.dtype)
        print(f"{name}: step-by-step decode vs full forward, max |diff| / max |logit| = "
              f"{err:.2e}")
        generate(m, tokens, 8, args.device, args.dtype)  # warm-up (kernel compile, caches)
        new, t_pre, t_dec = generate(m, tokens, args.gen_tokens, args.device, args.dtype)
        want = tokens[:, -args.period:].repeat(1, args.gen_tokens // args.period + 1)
        acc = (new == want[:, :args.gen_tokens]).float().mean().item()
        n_pre, n_dec = tokens.numel(), new.numel()
        print(f"{name}: prefill {n_pre} tokens {n_pre / t_pre:,.0f} tok/s, decode {n_dec} tokens "
              f"{n_dec / t_dec:,.0f} tok/s, prefill+decode {(n_pre + n_dec) / (t_pre + t_dec):,.0f}"
              f" tok/s; continues the pattern at {acc:.1%} of tokens")


if __name__ == "__main__":
    main()
