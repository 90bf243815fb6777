"""var and std, values and rules: along a dim as ATen's std_var_kernel_impl computes them
(Welford in double), the whole tensor and other dtypes by numpy's two-pass formula."""

from __future__ import annotations

import math

import numpy as np

from .kernels_reduce import axes_of, count, expand
from .kernels_sum import torch_mean


# --- var, std --------------------------------------------------------------------------------------
def _dof(shape, dim, correction) -> float:
    return max(0.0, count(shape, dim) - correction)


def _twice_inverse(shape, dim, correction) -> float:
    """2 / (N - correction), inf where there are no degrees of freedom (as PyTorch)."""
    dof = _dof(shape, dim, correction)
    return 2 / dof if dof else math.inf


def _centred(a, dim):
    n = count(np.shape(a), dim)
    return a - np.sum(a, axis=dim, keepdims=True) / n


def _welford(a: np.ndarray, axes: tuple, correction: float) -> np.ndarray:
    """std_var_kernel_impl's WelfordOps in double (its acc type for float32 and float64), each
    output's elements one after another in memory order: m2 / max(0, n - correction).
    float32: the same double numbers by two passes (mean, then squared deviations), which
    round to the same float32 unless within 1e-16 of a float32 tie; float64: the recurrence
    itself, as ATen runs it for one thread's output (up to GRAIN_SIZE elements each)."""
    kept = [d for d in range(a.ndim) if d not in axes]
    x = np.transpose(a, list(axes) + kept).reshape((-1, *[a.shape[d] for d in kept]))
    n = x.shape[0]
    divisor = max(0.0, n - correction)
    with np.errstate(divide="ignore", invalid="ignore"):
        if a.dtype == np.float32:
            x = x.astype(np.float64)
            d = x - np.mean(x, axis=0)
            return np.sum(d * d, axis=0) / divisor  # (a double: the caller rounds it)
        mean = np.zeros(x.shape[1:])
        m2 = np.zeros(x.shape[1:])
        for k in range(n):
            delta = x[k] - mean
            mean = mean + delta / float(k + 1)
            m2 = m2 + delta * (x[k] - mean)
        return m2 / divisor


def _by_welford(a, dim, correction, keepdim, root: bool):
    """var/std along ``dim`` as std_var_kernel_impl (the root taken in double, as its project
    step does), or None where ddx keeps numpy's formula."""
    if dim is None or type(a) is not np.ndarray or a.dtype not in (np.float32, np.float64) \
            or not a.size or a.dtype == np.float64 and count(a.shape, dim) > 32768:
        return None
    axes = tuple(sorted({d % a.ndim for d in axes_of(a.shape, dim)}))
    r = _welford(a, axes, correction)
    r = (np.sqrt(r) if root else r).astype(a.dtype)
    return np.expand_dims(r, axes) if keepdim else r


def variance(a, dim=None, correction=1.0, keepdim=False):
    r = _by_welford(a, dim, correction, keepdim, False)
    if r is not None:
        return r
    d = _centred(a, dim)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sum(d * d, axis=dim, keepdims=keepdim) / _dof(np.shape(a), dim, correction)


def variance_vjp(g, out, a, dim=None, correction=1.0, keepdim=False):
    """var_backward: (2 / (N - correction)) * grad * (self - self.mean(dim, True))."""
    shape = np.shape(a)
    with np.errstate(divide="ignore", invalid="ignore"):
        if type(a) is np.ndarray and a.dtype.kind == "f" and a.size:
            axes = tuple(sorted({d % a.ndim for d in axes_of(shape, dim)}))
            scaled = _twice_inverse(shape, dim, correction) * expand(g, shape, dim, keepdim)
            return scaled * (a - torch_mean(a, axes, True))
        return expand(g, shape, dim, keepdim) * _twice_inverse(shape, dim, correction) \
            * _centred(a, dim)


def variance_jvp(ts, out, a, dim=None, correction=1.0, keepdim=False):
    t = np.broadcast_to(ts[0], np.shape(a))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sum(t * _centred(a, dim), axis=dim, keepdims=keepdim) \
            * _twice_inverse(np.shape(a), dim, correction)


def deviation(a, dim=None, correction=1.0, keepdim=False):
    r = _by_welford(a, dim, correction, keepdim, True)
    return r if r is not None else np.sqrt(variance(a, dim, correction, keepdim))


def _std_scale(g, out):
    """g / (2 std), 0 where std is 0 (PyTorch's std_backward masks it)."""
    zero = out == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(zero, 0.0, g / (2 * np.where(zero, 1.0, out)))


def deviation_vjp(g, out, a, dim=None, correction=1.0, keepdim=False):
    return variance_vjp(_std_scale(g, out), out, a, dim, correction, keepdim)


def deviation_jvp(ts, out, a, dim=None, correction=1.0, keepdim=False):
    return _std_scale(variance_jvp(ts, out, a, dim, correction, keepdim), out)
