"""The decode step through ssmtune.selective_state_update on the GPU, over
mamba_ssm's own test grid of its selective_state_update (dim 2048, 2064,
4096; dstate 16, 32, 64; z or not; fp32, fp16, bf16 with the state in the
same dtype), its heads form (Mamba-2: heads over groups, tied head dims),
state batch indices with padding, and an fp32 state under bf16 inputs: out
and the updated state against an fp64 step of the same rounded inputs,
within mamba_ssm's tolerances and near the storage rounding; side by side
with mamba_ssm's kernel when it is importable (its error against fp64 is
printed beside ours). Seeds from gpu_support (printed, replayable)."""
import pytest
import torch

import ssmtune
from gpu_support import seed

TOL = {torch.float32: (3e-4, 1e-3), torch.float16: (5e-3, 1e-2), torch.bfloat16: (1e-2, 5e-2)}


def reference(state, x, dt, A, B, C, D, z, dt_bias, softplus, idx):
    """The step in fp64 (own code): returns (out, new state), heads form."""
    f = torch.float64
    st = state.to(f).clone()
    x, dt, A, B, C = x.to(f), dt.to(f), A.to(f), B.to(f), C.to(f)
    if dt_bias is not None:
        dt = dt + dt_bias.to(f)
    if softplus:
        dt = torch.where(dt <= 20.0, torch.log1p(torch.exp(dt)), dt)
    batch, heads = x.shape[0], x.shape[1]
    rep = heads // B.shape[1]
    Bh, Ch = B.repeat_interleave(rep, dim=1), C.repeat_interleave(rep, dim=1)
    rows = torch.arange(batch, device=x.device) if idx is None else idx.long()
    out = torch.zeros_like(x)
    for b in range(batch):
        r = int(rows[b])
        if r < 0:
            continue
        s = st[r] * torch.exp(dt[b][..., None] * A) + (dt[b][..., None] * Bh[b][:, None, :]) * \
            x[b][..., None]
        st[r] = s
        y = (s * Ch[b][:, None, :]).sum(-1)
        if D is not None:
            y = y + D.to(f) * x[b]
        if z is not None:
            zz = z[b].to(f)
            y = y * zz * torch.sigmoid(zz)
        out[b] = y
    return out, st


def rel_l2(got, want):
    return float((got.double() - want).norm() / want.norm().clamp_min(1e-30))


def make(batch, heads, dim, dstate, groups, itype, stype, has_z, tied=False, salt=()):
    g = torch.Generator(device="cuda").manual_seed(seed(batch, heads, dim, dstate, groups, itype,
                                                        stype, has_z, tied, *salt))

    def randn(*s, dt=itype):
        return torch.randn(*s, device="cuda", generator=g).to(dt)

    state = randn(batch, heads, dim, dstate, dt=stype)
    x, dt = randn(batch, heads, dim), randn(batch, heads, dim)
    dt_bias = torch.rand(heads, dim, device="cuda", generator=g) - 4.0
    A = -torch.rand(heads, dim, dstate, device="cuda", generator=g) - 1.0
    if tied:  # Mamba-2: one A, dt and dt_bias per head, broadcast over dim and dstate
        A = A[:, :1, :1].expand(heads, dim, dstate)
        dt = dt[:, :, :1].expand(batch, heads, dim)
        dt_bias = dt_bias[:, :1].expand(heads, dim)
    B, C = randn(batch, groups, dstate), randn(batch, groups, dstate)
    D = torch.randn(heads, dim, device="cuda", generator=g)
    z = randn(batch, heads, dim) if has_z else None
    return state, x, dt, A, B, C, D, z, dt_bias


def check(args, softplus, idx, itype, one_head):
    state, x, dt, A, B, C, D, z, dt_bias = args
    want_out, want_state = reference(state, x, dt, A, B, C, D, z, dt_bias, softplus, idx)
    call = list(args)
    if one_head:  # mamba_ssm's Mamba-1 forms
        call = [state[:, 0], x[:, 0], dt[:, 0], A[0], B[:, 0], C[:, 0], D[0],
                None if z is None else z[:, 0], dt_bias[0]]
    got_state = call[0].clone()
    out = ssmtune.selective_state_update(got_state, *call[1:6], D=call[6], z=call[7],
                                         dt_bias=call[8], dt_softplus=softplus,
                                         state_batch_indices=idx)
    if one_head:
        out, got_state = out[:, None], got_state[:, None]
    assert out.dtype == x.dtype and out.shape == x.shape
    rtol, atol = TOL[itype]
    torch.testing.assert_close(out.double(), want_out, rtol=rtol, atol=atol)
    torch.testing.assert_close(got_state.double(), want_state, rtol=rtol, atol=atol)
    floor_out = rel_l2(want_out.to(out.dtype), want_out)
    floor_state = rel_l2(want_state.to(got_state.dtype), want_state)
    e_out, e_state = rel_l2(out, want_out), rel_l2(got_state, want_state)
    line = f"out {e_out:.1e} (floor {floor_out:.1e}) state {e_state:.1e} (floor {floor_state:.1e})"
    assert e_out <= 1e-4 + 1.5 * floor_out, line
    assert e_state <= 1e-4 + 1.5 * floor_state, line
    return line, call, want_out, want_state


def mamba_line(call, softplus, idx, want_out, want_state, one_head):
    try:
        from mamba_ssm.ops.triton.selective_state_update import selective_state_update
    except Exception:  # mamba_ssm is optional
        return "mamba_ssm not importable"
    st = call[0].clone()
    out = selective_state_update(st, *call[1:6], D=call[6], z=call[7], dt_bias=call[8],
                                 dt_softplus=softplus, **({} if idx is None else
                                                          {"state_batch_indices": idx}))
    if one_head:
        out, st = out[:, None], st[:, None]
    return f"mamba_ssm out {rel_l2(out, want_out):.1e} state {rel_l2(st, want_state):.1e}"


@pytest.mark.parametrize("itype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("has_z", [False, True])
@pytest.mark.parametrize("dstate", [16, 32, 64])
@pytest.mark.parametrize("dim", [2048, 2048 + 16, 4096])
def test_mamba_grid(dim, dstate, has_z, itype):
    args = make(2, 1, dim, dstate, 1, itype, itype, has_z)
    line, call, wo, ws = check(args, True, None, itype, one_head=True)
    print(f"dim {dim} dstate {dstate} z {has_z} {itype}: {line}; "
          f"{mamba_line(call, True, None, wo, ws, True)}")


@pytest.mark.parametrize("itype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("heads,groups,dim,dstate", [(8, 2, 64, 128), (24, 1, 32, 16)])
def test_heads(heads, groups, dim, dstate, tied, itype):
    args = make(3, heads, dim, dstate, groups, itype, itype, True, tied=tied)
    line, *_ = check(args, True, None, itype, one_head=False)
    print(f"heads {heads} groups {groups} dim {dim} dstate {dstate} tied {tied} {itype}: {line}")


@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64])
def test_state_indices_and_padding(index_dtype):
    batch, rows = 5, 12
    state, x, dt, A, B, C, D, z, dt_bias = make(batch, 1, 256, 16, 1, torch.bfloat16,
                                                torch.float32, True, salt=(index_dtype,))
    pool = torch.randn(rows, 1, 256, 16, device="cuda", generator=torch.Generator(
        device="cuda").manual_seed(seed("pool", index_dtype)))
    idx = torch.tensor([7, 2, -1, 11, 0], device="cuda", dtype=index_dtype)
    args = (pool, x, dt, A, B, C, D, z, dt_bias)
    line, *_ = check(args, True, idx, torch.bfloat16, one_head=False)
    print(f"indices {index_dtype}: {line}")


def test_fp32_state_under_bf16_and_explain():
    args = make(4, 1, 1536, 16, 1, torch.bfloat16, torch.float32, True)
    line, *_ = check(args, True, None, torch.bfloat16, one_head=True)
    state, x, dt, A, B, C, D, z, dt_bias = args
    text = ssmtune.explain_step(state[:, 0], x[:, 0], dt[:, 0], A[0], B[:, 0], C[:, 0], D[0],
                                z[:, 0], dt_bias[0], True)
    assert text.startswith("step:b4.h1.p1536.n16.g1.bf16.sfp32.D.z.bias.sp: step.")
    print(line, text)


def test_errors_name_the_argument():
    state, x, dt, A, B, C, D, z, dt_bias = make(2, 1, 64, 16, 1, torch.float32, torch.float32,
                                                True)
    with pytest.raises(ValueError, match="B: expected shape"):
        ssmtune.selective_state_update(state[:, 0], x[:, 0], dt[:, 0], A[0], B[:, 0, :8], C[:, 0],
                                       D[0], z[:, 0], dt_bias[0], True)
    with pytest.raises(ValueError, match="x"):
        ssmtune.selective_state_update(state[:, 0], x[:, 0].cpu(), dt[:, 0], A[0], B[:, 0],
                                       C[:, 0], D[0], z[:, 0], dt_bias[0], True)
