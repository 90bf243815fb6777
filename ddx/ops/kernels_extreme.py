"""max/min (their values) and amax/amin: the forward reductions and their rules, ties shared
as ATen shares them (scale_grad_by_count, evenly_distribute_backward)."""

from __future__ import annotations

import numpy as np

from .kernels_reduce import kept, kept_value


# --- max/min (values), amax/amin -----------------------------------------------------------------
def extreme_vjp(g, out, a, dim=None, keepdim=False, *, argfn=None):
    """The full max/min shares g among ties (PyTorch's evenly_distribute_backward); with dim,
    g goes to the index the forward picked (the first of the ties)."""
    if dim is None:  # (zeros with g / count at the ties, +0.0 elsewhere, as ATen's CPU path)
        nan = type(out) in (np.ndarray, np.float64, np.float32) and bool(np.isnan(out))
        mask = np.isnan(a) if nan else a == out
        grad = np.zeros_like(g, shape=np.shape(a))
        grad[mask] = g / np.count_nonzero(mask)
        return grad
    idx = np.expand_dims(argfn(a, axis=dim), dim)
    grad = np.zeros_like(g, shape=np.shape(a))  # (zeros_like: dual numbers pass through)
    np.put_along_axis(grad, idx, g if keepdim else np.expand_dims(g, dim), axis=dim)
    return grad


def extreme_jvp(ts, out, a, dim=None, keepdim=False, *, argfn=None):
    t = np.broadcast_to(ts[0], np.shape(a))
    if dim is None:
        mask = a == out
        return np.sum(t * mask) / np.count_nonzero(mask)
    idx = np.expand_dims(argfn(a, axis=dim), dim)
    r = np.take_along_axis(t, idx, axis=dim)
    return r if keepdim else np.squeeze(r, dim)


def _ties(a, out, dim, keepdim):
    """amax/amin's ties: the elements equal to the result, and how many along the dims."""
    mask = a == kept_value(out, np.shape(a), dim, keepdim)
    return mask, np.sum(mask, axis=dim, keepdims=True)


def _tie_share(a, out, dim, keepdim):
    """amax/amin's gradient weights: the elements equal to the result, each 1/(their count)."""
    mask, n = _ties(a, out, dim, keepdim)
    return mask / n


def amax(a, dim=None, keepdim=False):
    return np.max(a, axis=dim, keepdims=keepdim)


def amin(a, dim=None, keepdim=False):
    return np.min(a, axis=dim, keepdims=keepdim)


def ext_share_vjp(g, out, a, dim=None, keepdim=False):
    """ATen's scale_grad_by_count: (g / count) * mask, in that order of roundings."""
    mask, n = _ties(a, out, dim, keepdim)
    return kept(g, np.shape(a), dim, keepdim) / n * mask


def ext_share_jvp(ts, out, a, dim=None, keepdim=False):
    t = np.broadcast_to(ts[0], np.shape(a))
    return np.sum(t * _tie_share(a, out, dim, keepdim), axis=dim, keepdims=keepdim)
