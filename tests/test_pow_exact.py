"""Powers bit for bit with PyTorch's CPU build (ddx/ops/kernels_pow.py, ddx/ops/sleef_pow.py):
x ** e for a number e (PowBackward0), a ** b of two tensors (PowBackward1) and a number to a
tensor power (PowBackward2), their values and their gradients in PyTorch's order of
operations, float32 and float64; and float32 atan2, which runs in the same loop
(ddx/ops/vecloop.py). torch 2.13 is the oracle. Before, numpy's pow gave another last bit for
4% (float64) to 20% (float32) of the values, and the gradients multiplied in another order."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import ddx_and_python, torch_or_skip

import ddx
from ddx.ops import OPS, kernels_pow
from ddx.ops.libm import c_pow

SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.0, 0.5, -2.0, 1e-40, -1e-40, 1e-300, 3e38, -3e38, 1e300,
           np.inf, -np.inf, np.nan, 1.0000001, 0.9999999]
EXPONENTS = [4, 5, -3, -4, 10, 33, 1.7, 2.5, 0.3, -0.7, -1.5, 7.5, 1.0000001, 0.5001, 1e10,
             -1e10, 0, 1, 0.5, -1, 2, 3, -2, -0.5]
SIZES = [1, 3, 31, 32, 33, 100, 40_000]  # (vector bodies of 32 or 16, tails, thread ranges)


def _values(dtype, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    span = 30 if dtype == np.float32 else 280
    with np.errstate(over="ignore"):
        x = rng.standard_normal(n) * 10.0 ** rng.uniform(-span, span, n)
        x[: len(SPECIAL)] = SPECIAL[:n]
        return x.astype(dtype)


def _bits(a) -> bytes:
    return np.ascontiguousarray(a).tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("exponent", EXPONENTS)
def test_a_power_of_a_number_is_torchs(dtype, exponent):
    torch = torch_or_skip()
    for n in SIZES:
        x = _values(dtype, n, n)
        with np.errstate(all="ignore"):
            got = kernels_pow.power(x, exponent)
        want = (torch.from_numpy(x) ** exponent).numpy()
        if exponent == 0.5 and dtype == np.float64:
            # PyTorch's x ** 0.5 is its sqrt kernel, which in float64 is MKL's vdSqrt (1.2% of
            # its values are not the correctly rounded root numpy gives): ddx's x ** 0.5 is
            # ddx's sqrt, the same known float64 gap as the sqrt row's (README)
            with np.errstate(all="ignore"):
                want = OPS["sqrt"].fn(x)
        assert got.dtype == dtype and _bits(got) == _bits(want), (n, exponent)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_power_of_two_tensors_and_of_a_number_base_are_torchs(dtype):
    torch = torch_or_skip()
    for n in SIZES:
        rng = np.random.default_rng(n)
        a = _values(dtype, n, n + 1)
        b = (rng.uniform(-6, 6, n) * rng.choice([1, 0.5, 1e-3], n)).astype(dtype)
        with np.errstate(all="ignore"):
            got = kernels_pow.tensor_power(a, b)
            want = torch.pow(torch.from_numpy(a), torch.from_numpy(b)).numpy()
            assert _bits(got) == _bits(want), n
            got = kernels_pow.rpow(b, base=2.5)
            assert _bits(got) == _bits((2.5 ** torch.from_numpy(b)).numpy()), n
    rows, last = _values(dtype, 120, 7).reshape(3, 40), np.linspace(0.1, 3, 40).astype(dtype)
    with np.errstate(all="ignore"):  # (a broadcast exponent: one loop per row)
        want = torch.pow(torch.from_numpy(rows), torch.from_numpy(last)).numpy()
        assert _bits(kernels_pow.tensor_power(rows, last)) == _bits(want)


SCRIPT = """
import torch
torch.manual_seed(0)
for dt in (torch.float32, torch.float64):
    x = (torch.rand(1000, dtype=dt) * 3).requires_grad_()
    for e in (3, 4, 2.5, -1.5, 0.7):
        y = (x ** e).sum()
        y.backward()
        print(dt, e, y.item(), x.grad.sum().item(), x.grad[7].item(), x.grad[999].item())
        x.grad = None
    w = torch.rand(1000, dtype=dt)
    (x ** 3 * w).sum().backward()
    print(x.grad.sum().item(), x.grad[3].item())
    a = (torch.rand(100, dtype=dt) * 3).requires_grad_()
    b = (torch.rand(100, dtype=dt) * 4 - 2).requires_grad_()
    torch.pow(a, b).sum().backward()
    print(a.grad.sum().item(), b.grad.sum().item(), a.grad[50].item(), b.grad[99].item())
    c = (torch.rand(37, dtype=dt) * 3).requires_grad_()
    z = (2.5 ** c).sum()
    z.backward()
    print(z.item(), c.grad.sum().item(), c.grad[36].item())
"""


def test_the_gradients_of_powers_are_torchs(tmp_path):
    """pow_backward's grad * (exponent * x.pow(exponent - 1)), and its two siblings', in
    that order: (g * x**2) * 3 is another number than g * (3 * x**2)."""
    torch_or_skip()
    ours, theirs = ddx_and_python(SCRIPT, tmp_path)
    assert len(ours) == 16 and ours == theirs


def test_a_scalar_power_is_the_c_librarys_and_still_warns():
    """A 0-d value is all tail in ATen's loop: the C library's pow, whose answers math.pow
    gives where Python would raise."""
    t = ddx.trace("x^2.7 + 2^x", x=1.3)
    t.backward()
    assert t.value == math.pow(1.3, 2.7) + math.pow(2.0, 1.3)
    assert t.grads["x"] == pytest.approx(2.7 * 1.3 ** 1.7 + 2 ** 1.3 * math.log(2), rel=1e-15)
    torch = torch_or_skip()
    x = torch.tensor(1.3, dtype=torch.float64, requires_grad=True)
    (x ** 2.7 + 2 ** x).backward()
    assert t.grads["x"] == x.grad.item()
    assert c_pow(0.0, -1.5) == math.inf and c_pow(-0.0, -3.0) == -math.inf
    assert c_pow(-8.0, 1e308) == math.inf and c_pow(-10.0, 309.0) == -math.inf
    assert math.isnan(c_pow(-2.0, 0.5)) and math.copysign(1, c_pow(-2.0, 0.5)) == -1
    for _ in range(2):  # (traced, then replayed)
        t = ddx.trace("x^2.5", x=np.array([-1.0, 4.0]))
        assert np.isnan(t.value[0]) and t.value[1] == 32.0
        assert t.warnings == ["x^2.5 gives 1 nan (invalid value) at PowBackward0"]


def test_powers_of_dual_numbers_and_formulas_keep_their_meaning():
    """Forward mode (dual numbers) and formulas go through the same rows: numpy's pow on what
    is not a float array."""
    for text, want in (("x^2.5 + x^4", 2.5 * 1.5 ** 1.5 + 4 * 1.5 ** 3),
                       ("2^x", 2 ** 1.5 * math.log(2)), ("x^x", 1.5 ** 1.5 * (math.log(1.5) + 1))):
        t = ddx.trace(text, x=1.5)
        t.backward()
        forward = t.forward_mode()["gradients"]["x"]
        assert t.grads["x"] == pytest.approx(want, rel=1e-15)
        assert forward == pytest.approx(want, rel=1e-15)
    assert ddx.derivative("x^4", "x") == "4*x^3"


def test_atan2_of_two_float32_tensors_is_torchs():
    """ATen's cpu_kernel_vec with Sleef_atan2f16_u10 on whole vectors of 32 and the C
    library's atan2f on the rest (ddx/ops/vecloop.py, shared with pow); specials included.
    Before, numpy's arctan2 gave another last bit for 45% of the values."""
    torch = torch_or_skip()
    from ddx.ops.kernels import atan2

    rng = np.random.default_rng(5)
    sp = np.array([0, -0.0, np.inf, -np.inf, np.nan, 1, -1, 1e-40], np.float32)
    for n in (1, 31, 32, 33, 100, 40_000):
        y = (rng.standard_normal(n) * 10.0 ** rng.uniform(-5, 5, n)).astype(np.float32)
        x = (rng.standard_normal(n) * 10.0 ** rng.uniform(-5, 5, n)).astype(np.float32)
        if n >= 64:
            yy, xx = np.meshgrid(sp, sp)
            y[:64], x[:64] = yy.ravel(), xx.ravel()
        want = torch.atan2(torch.from_numpy(y), torch.from_numpy(x)).numpy()
        assert _bits(atan2(y, x)) == _bits(want), n
    rows, last = _values(np.float32, 120, 9).reshape(3, 40), np.linspace(-2, 3, 40, dtype=np.float32)
    want = torch.atan2(torch.from_numpy(rows), torch.from_numpy(last)).numpy()
    assert _bits(atan2(rows, last)) == _bits(want)
