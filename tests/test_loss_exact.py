"""float32 binary cross-entropy on logits, logsumexp, var/std along a dim, the 2-norm and running
sums bit for bit with PyTorch's CPU build:
``binary_cross_entropy_with_logits`` as ATen writes it ((1 - t) * x - log_sigmoid(x), its
backward (sigmoid(x) - t) * grad divided by the count afterwards) and cumsum/cumprod, which
ATen accumulates in double for a float32 tensor. torch 2.13 is the oracle, through ddx run and
python."""

from __future__ import annotations

import numpy as np
from conftest import ddx_and_python, torch_or_skip
from test_vml import mkl_or_skip

from ddx.ops import kernels_reduce

BCE = """
import torch
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(8, 37, requires_grad=True)
t = (torch.rand(8, 37) > 0.5).float()
w = torch.rand(37); pw = torch.rand(37) * 3
for kw in ({}, {"weight": w}, {"pos_weight": pw}, {"weight": w, "pos_weight": pw},
           {"reduction": "sum"}, {"reduction": "none"}):
    x.grad = None
    y = F.binary_cross_entropy_with_logits(x, t, **kw)
    (y if y.dim() == 0 else (y * t).sum()).backward()
    print(sorted(kw), y.sum().item(), x.grad.sum().item(), x.grad[3, 5].item(), x.grad[7, 36].item())
x.grad = None
loss = torch.nn.BCEWithLogitsLoss()(x, t)
loss.backward()
print(loss.item(), x.grad[1, 1].item())
"""


def test_binary_cross_entropy_on_logits_is_pytorchs(tmp_path):
    torch_or_skip()
    ours, theirs = ddx_and_python(BCE, tmp_path)
    assert len(ours) == 7 and ours == theirs


CUMULATIVE = """
import torch
torch.manual_seed(0)
x = torch.randn(8, 37, requires_grad=True)
w = torch.randn(8, 37)
for dim in (1, 0, -1):
    x.grad = None
    y = torch.cumsum(x, dim=dim)
    (y * w).sum().backward()
    print(y.sum().item(), y[3, 36].item(), x.grad.sum().item(), x.grad[2, 0].item())
z = torch.cumprod(x[:, :10] * 0.3 + 1, dim=1)
print(z.sum().item(), z[7, 9].item(), x.cumsum(0)[7].tolist()[:4])
"""


def test_running_sums_and_products_are_pytorchs(tmp_path):
    torch_or_skip()
    ours, theirs = ddx_and_python(CUMULATIVE, tmp_path)
    assert len(ours) == 4 and ours == theirs


def test_a_float32_running_sum_adds_in_double():
    x = np.array([1.0, 2.0 ** -24, 2.0 ** -24, 2.0 ** -24], np.float32)
    got = kernels_reduce.cumsum(x, 0)  # (float32 steps would never leave 1.0)
    assert got.dtype == np.float32
    # (1 + 3 * 2**-24 lies halfway between two floats: it rounds to the even one, 1 + 2**-22)
    assert got.tolist() == [1.0, 1.0, 1 + 2.0 ** -23, 1 + 2.0 ** -22]


LOGSUMEXP = """
import torch
torch.manual_seed(0)
x = torch.randn(8, 37, requires_grad=True)
for kw in ({"dim": 1}, {"dim": 0}, {"dim": -1, "keepdim": True}, {"dim": (0, 1)}):
    x.grad = None
    y = torch.logsumexp(x, **kw)
    (y * torch.arange(1, y.numel() + 1).reshape(y.shape)).sum().backward()
    print(kw, y.sum().item(), y.flatten()[0].item(), x.grad.sum().item(), x.grad[3, 5].item())
print(torch.logsumexp(torch.tensor([[float('inf'), 1.0], [float('-inf'), float('-inf')]]), 1))
"""


def test_logsumexp_is_pytorchs(tmp_path):
    """logsumexp_out_impl: torch's exp, its sum's order and its log (MKL's in float32 with
    the extra, as torch.exp and torch.log); the backward grad * (x - result).exp()."""
    torch_or_skip()
    mkl_or_skip()
    ours, theirs = ddx_and_python(LOGSUMEXP, tmp_path)
    assert len(ours) == 5 and ours == theirs


VAR = """
import torch
torch.manual_seed(0)
for dt in (torch.float32, torch.float64):
    x = torch.randn(8, 37, dtype=dt, requires_grad=True)
    for name, f, kw in (("var", torch.var, {"dim": 1}), ("var", torch.var, {"dim": 0}),
                        ("std", torch.std, {"dim": 1}), ("var", torch.var, {"dim": (0, 1)}),
                        ("var", torch.var, {}), ("std", torch.std, {}),
                        ("var", torch.var, {"dim": 1, "correction": 0, "keepdim": True})):
        x.grad = None
        y = f(x, **kw)
        (y * torch.arange(1, y.numel() + 1).reshape(y.shape)).sum().backward()
        print(name, kw, y.sum().item(), y.flatten()[0].item(), x.grad.sum().item(), x.grad[3, 5].item())
"""


def test_var_and_std_along_a_dim_are_pytorchs(tmp_path):
    """std_var_kernel_impl's Welford recurrence in double (the root taken in double), and
    var_backward's (2 / (N - correction)) * grad * (x - x.mean(dim, True))."""
    torch_or_skip()
    ours, theirs = ddx_and_python(VAR, tmp_path)
    assert len(ours) == 14 and ours == theirs


NORM = """
import torch
torch.manual_seed(0)
for dt in (torch.float32, torch.float64):
    x = torch.randn(8, 37, dtype=dt, requires_grad=True)
    for kw in ({}, {"dim": 1}, {"dim": 0}, {"dim": -1, "keepdim": True}, {"dim": (0, 1)}):
        x.grad = None
        y = torch.linalg.vector_norm(x, **kw)
        (y * torch.arange(1, y.numel() + 1).reshape(y.shape)).sum().backward()
        print(kw, y.sum().item(), y.flatten()[0].item(), x.grad.sum().item(), x.grad[3, 5].item())
    print(x.norm().item(), x.norm(dim=1)[2].item(), torch.norm(x[0]).item(), x.data.norm().item())
"""


def test_the_two_norm_is_pytorchs(tmp_path):
    """binary_kernel_reduce_lastdim's 2-norm: a 32-byte vector of squares from 0, its lanes
    into the first one by one, the leftover squares one by one; another dim one after
    another."""
    torch_or_skip()
    ours, theirs = ddx_and_python(NORM, tmp_path)
    assert len(ours) == 12 and ours == theirs


def test_nll_sum_is_atens_cascade_derived_by_hand():
    """Index 0 is flushed to the top level at once; indexes 1-16 add up in level 0 (16.0),
    flushed into level 1 at 16; the levels are added from the first: 16 + 1e8, which float32
    holds exactly (spacing 8), where adding one after another from 1e8 loses every 1."""
    from ddx.ops.kernels_sumloop import cascade_total

    values = np.array([1e8] + [1.0] * 16, dtype=np.float32)
    got = cascade_total(values, np.arange(17))
    assert got == np.float32(100000016.0)
    assert np.add.accumulate(values)[-1] == np.float32(1e8)
    # an ignored index 16 flushes nothing: the 1.0s stay in level 0, added last but one
    kept = np.array([0, *range(1, 16), 17])
    assert cascade_total(values[[0, *range(1, 16), 16]], kept) == np.float32(100000016.0)
