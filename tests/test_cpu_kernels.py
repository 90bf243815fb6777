"""sinc and xlogy as ATen's cpu_kernel computes them (ddx/ops/kernels_cpu.py): the C library's
sin and log element by element, and derivatives.yaml's rules, against torch bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import torch_or_skip
from test_vml import mkl_or_skip

from ddx.ops import OPS, vml


def same(ours, theirs) -> bool:
    return np.asarray(ours).tobytes() == np.asarray(theirs).tobytes()


@pytest.fixture
def spoken():
    token = vml.torch_float64()
    yield
    vml.reset_float64(token)


def _inputs(dtype, n=20_000, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 3).astype(dtype)
    x[:6] = [0, -0.0, 1, -2, 1e-30, 0.5]
    y = (np.abs(rng.standard_normal(n)) * 10).astype(dtype)
    y[:7] = [0, np.nan, 1, -1, np.inf, 1e-40, 2]
    g = rng.standard_normal(n).astype(dtype)
    return x, y, g


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sinc_values_and_gradient_are_pytorchs(dtype, spoken):
    torch = torch_or_skip()
    mkl_or_skip()  # (the rule's sin and cos are tensor ops: MKL's)
    x, _, g = _inputs(dtype)
    tx = torch.from_numpy(x.copy()).requires_grad_()
    y = torch.sinc(tx)
    y.backward(torch.from_numpy(g))
    row = OPS["sinc"]
    ours = row.fn(x)
    assert ours.dtype == dtype and same(ours, y.detach().numpy())
    assert same(row.vjp[0](g, ours, x), tx.grad.numpy())
    assert same(row.fn(x[5]), y.detach().numpy()[5]) and type(row.fn(x[5])) is dtype


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_xlogy_values_and_gradients_are_pytorchs(dtype, spoken):
    torch = torch_or_skip()
    x, y, g = _inputs(dtype, seed=1)
    x[::7] = 0  # (x = 0: 0, nan where y is nan; its gradient masked where y <= 0)
    ta, tb = torch.from_numpy(x.copy()).requires_grad_(), torch.from_numpy(y.copy()).requires_grad_()
    out = torch.xlogy(ta, tb)
    out.backward(torch.from_numpy(g))
    row = OPS["xlogy"]
    ours = row.fn(x, y)
    assert same(ours, out.detach().numpy())
    with np.errstate(all="ignore"):
        assert same(row.vjp[0](g, ours, x, y), ta.grad.numpy())
        assert same(row.vjp[1](g, ours, x, y), tb.grad.numpy())


def test_numpys_float32_sin_and_log_differ_so_the_tests_above_can_fail():
    torch = torch_or_skip()
    x, y, _ = _inputs(np.float32, seed=2)
    pix = np.float32(np.pi) * x[6:]
    assert (np.sin(pix) / pix != torch.sinc(torch.from_numpy(x[6:])).numpy()).sum() > 100
    assert (x[7:] * np.log(y[7:]) != torch.xlogy(torch.from_numpy(x[7:]),
                                                 torch.from_numpy(y[7:])).numpy()).sum() > 100
