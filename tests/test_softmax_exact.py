"""softmax, log_softmax and cross-entropy along the last dimension bit for bit with PyTorch's CPU
build (ddx/ops/kernels_softmax.py), float32 and float64: values and gradients; torch 2.13 is
the oracle. Before, numpy's exp, pairwise sums and a division gave other last bits for about
60% (float32 softmax), 35% (float64 softmax) and 10-15% (log_softmax) of the values, and the
gradients followed."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ddx_and_python, torch_or_skip

from ddx.ops import kernels_loss

SIZES = [1, 2, 3, 15, 16, 17, 31, 32, 33, 37, 100, 300, 1000]


def _rows(n: int, seed: int, outer=(20,), dtype=np.float32) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((*outer, n)) * rng.choice([0.1, 1.0, 10.0, 50.0])).astype(
        dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
def test_softmax_and_log_softmax_along_the_last_dim_are_torchs(n, dtype):
    torch = torch_or_skip()
    for seed, outer in ((n, (20,)), (n + 1, (3, 4)), (n + 2, ())):
        x = _rows(n, seed, outer, dtype)
        t = torch.from_numpy(x)
        for dim in (-1, x.ndim - 1):
            got = kernels_loss.softmax(x, dim=dim)
            assert got.tobytes() == torch.softmax(t, dim).numpy().tobytes()
            got = kernels_loss.log_softmax(x, dim=dim)
            assert got.tobytes() == torch.log_softmax(t, dim).numpy().tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
def test_their_gradients_are_torchs(n, dtype):
    torch = torch_or_skip()
    x = _rows(n, 3 * n, dtype=dtype)
    g = _rows(n, 3 * n + 1, dtype=dtype)
    t, tg = torch.from_numpy(x), torch.from_numpy(g)
    tdt = t.dtype
    out = torch.softmax(t, -1)
    want = torch.ops.aten._softmax_backward_data(tg, out, -1, tdt).numpy()
    got = kernels_loss.softmax_vjp(g, out.numpy(), x, dim=-1)
    assert got.tobytes() == want.tobytes()
    out = torch.log_softmax(t, -1)
    want = torch.ops.aten._log_softmax_backward_data(tg, out, -1, tdt).numpy()
    got = kernels_loss.log_softmax_vjp(g, out.numpy(), x, dim=-1)
    assert got.tobytes() == want.tobytes()


def test_rows_with_inf_and_nan_are_torchs():
    torch = torch_or_skip()
    x = np.array([[0.0, -np.inf, 1.0] * 7, [np.inf, 0.0, 1.0] * 7, [np.nan, 0.0, 1.0] * 7,
                  [-np.inf] * 21, [88.0, 89.0, -104.0] * 7], np.float32)
    with np.errstate(all="ignore"):
        for fn, tfn in ((kernels_loss.softmax, torch.softmax),
                        (kernels_loss.log_softmax, torch.log_softmax)):
            got, want = fn(x, dim=1), tfn(torch.from_numpy(x), 1).numpy()
            assert np.array_equal(got, want, equal_nan=True)


SCRIPT = """
import torch
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(8, 37, requires_grad=True)
t = torch.randint(0, 37, (8,))
for name, f in (("softmax", lambda: F.softmax(x, dim=1)),
                ("log_softmax", lambda: F.log_softmax(x, dim=-1)),
                ("cross_entropy", lambda: F.cross_entropy(x, t)),
                ("nn.CrossEntropyLoss", lambda: torch.nn.CrossEntropyLoss()(x, t))):
    x.grad = None
    y = f()
    (y * torch.arange(y.numel()).reshape(y.shape)).sum().backward()
    print(name, y.sum().item(), x.grad.sum().item(), x.grad[3, 5].item(), x.grad[7, 36].item())
"""


def test_a_classifier_s_loss_and_gradients_print_as_pytorchs(tmp_path):
    torch_or_skip()
    ours, theirs = ddx_and_python(SCRIPT, tmp_path)
    assert len(ours) == 4 and ours == theirs
