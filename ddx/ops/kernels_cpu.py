"""sinc and xlogy as ATen's cpu_kernel computes them: element by element, with the C library's
sin and log (std::sin, std::log of the element's own dtype: glibc's sinf/logf for float32, sin/log
for float64), where numpy's float32 sin and log are SIMD functions of its own that give another
last bit for about one value in ten (measured against torch 2.13: 20,796 and 18,502 of 200,000).
Their gradients follow derivatives.yaml: sinc_backward's formula, xlogy's ``xlogy(grad,
other)`` masked to 0 where x is 0 and y not positive. Inputs that are not float arrays or
numbers (dual numbers, object arrays) take the formulas on numpy's functions."""

from __future__ import annotations

import math

import numpy as np

from . import libm, vml
from .kernels_unary import c_library


def _double(name: str, fallback):
    """The C library's float64 ``name`` (log(0) is -inf there, where math.log raises)."""
    fn: list = []

    def call(v: float) -> float:
        if not fn:
            fn.append(libm.function(name, single=False) or fallback)
        return fn[0](v)
    return call


sin_c = c_library(np.sin, _double("sin", math.sin), "sinf")
log_c = c_library(np.log, _double("log", math.log), "logf")
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _floats(*xs) -> bool:
    return all(isinstance(x, (np.ndarray, np.floating)) and x.dtype in _FLOATS for x in xs)


def _pi(a):
    """c10::pi in a's dtype (a float32 tensor times M_PI is a float32 product)."""
    return np.float32(math.pi) if getattr(a, "dtype", None) == np.float32 else math.pi


def sinc(a):
    """sinc_kernel: 1 at 0, else sin(pi x) / (pi x), pi x rounded in the dtype."""
    if not _floats(a):
        return np.sinc(a)
    x = np.asarray(a)
    with np.errstate(all="ignore"):
        product = x * _pi(x)
        out = np.where(x == 0, x.dtype.type(1), np.asarray(sin_c(product)) / product)
    return out if isinstance(a, np.ndarray) else out[()]


def sinc_vjp(g, out, a):
    """sinc_backward: ``grad * (((x pi) cos(x pi) - sin(x pi)) / (x x pi))``, 0 where x x pi is 0;
    cos and sin are tensor ops (MKL's in float32, as vml.py's)."""
    pi = _pi(a)
    self_pi = a * pi
    squared_pi = a * a * pi
    with np.errstate(divide="ignore", invalid="ignore"):
        rule = g * ((self_pi * vml.cos(self_pi) - vml.sin(self_pi)) / squared_pi)
    return np.where(squared_pi == 0, 0.0, rule)


def _logs_where(mask, y):
    """log(y) by the C library where ``mask``, 0 elsewhere (a whole array of y's shape)."""
    y = np.asarray(y)
    logs = np.zeros(y.shape, y.dtype)
    if mask.any():
        logs[mask] = log_c(y[mask])
        if y.dtype == np.float64:  # (torch's float64 log of a negative number is a positive
            logs[mask & (y < 0)] = np.nan  # nan, where glibc's log gives the negative one)
    return logs


def xlogy(a, b):
    """xlogy_kernel: nan where y is nan, 0 where x is 0, else x * log(y)."""
    if not _floats(a, b) or np.result_type(a, b) not in _FLOATS:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(a == 0, 0.0, a * np.log(np.where(a == 0, 1.0, b)))
    dtype = np.result_type(a, b)
    x, y = np.broadcast_arrays(np.asarray(a, dtype), np.asarray(b, dtype))
    with np.errstate(all="ignore"):
        out = np.where(np.isnan(y), dtype.type(np.nan), x * _logs_where(x != 0, y))
    return out if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) else out[()]


def xlogy_da(g, out, a, b):
    """XlogyBackward0's self: ``at::xlogy(grad, other).masked_fill((self == 0.) & (other <=
    0.), 0.)`` (0 along x = 0 where log y has no value, pytorch/pytorch#80770)."""
    with np.errstate(invalid="ignore"):
        return np.where((a == 0) & (b <= 0), 0.0, xlogy(g, b))


def xlogy_db(g, out, a, b):
    """XlogyBackward0's other: ``grad * self / other``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return g * a / b
