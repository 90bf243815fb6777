"""Forwards and rules of round 7's picking rows (ddx/ops/rows_m2.py): cummax/cummin (the
running extreme and where it was: ATen's cummax_cummin_helper takes a later index on a tie,
``x >= out``, and keeps a nan once seen) and kthvalue (the k-th smallest along dim, nan
largest). Their gradient puts g back where each value was picked, added up where several
outputs picked the same element (cumulative_max_backward's scatter_add)."""

from __future__ import annotations

import numpy as np

from .kernels_more import primal
from .kernels_shape import on_parts


def _moved(a, dim):
    return np.moveaxis(np.asarray(a), dim, -1) if np.ndim(a) else np.asarray(a).reshape(1)


def cumulative_index(a, *, dim, largest=True):
    """The index of the running maximum (minimum) along dim, one step at a time."""
    x = _moved(a, dim)
    idx = np.zeros(x.shape, dtype=np.int64)
    if x.shape[-1] == 0:
        return np.moveaxis(idx, -1, dim) if np.ndim(a) else idx.reshape(())
    best = x[..., 0].copy()
    cur = np.zeros(x.shape[:-1], dtype=np.int64)
    for i in range(x.shape[-1]):  # (a loop over one dimension's length, not recursion)
        v = x[..., i]
        take = (v >= best if largest else v <= best) | np.isnan(v)
        take &= ~np.isnan(best) | np.isnan(v)
        best = np.where(take, v, best)
        cur = np.where(take, i, cur)
        idx[..., i] = cur
    return np.moveaxis(idx, -1, dim) if np.ndim(a) else idx.reshape(())


def _picked(a, idx, dim):
    if np.ndim(a) == 0:
        return np.array(a, copy=True)
    return np.take_along_axis(np.asarray(a), idx, axis=dim)


def cumulative(a, *, dim, largest=True):
    return _picked(a, cumulative_index(a, dim=dim, largest=largest), dim)


def _scatter_add(g, shape, idx, dim):
    out = np.zeros(shape, dtype=g.dtype if g.dtype.kind == "f" else np.float64)
    if not shape:
        return out + g
    grid = list(np.indices(np.shape(idx), sparse=True))
    grid[dim] = idx
    np.add.at(out, tuple(grid), g)
    return out


def cumulative_vjp(g, o, a, *, dim, largest=True):
    a = primal(a)  # (the picks are those of the values, also under dual numbers)
    return on_parts(_scatter_add, g, np.shape(a), cumulative_index(a, dim=dim, largest=largest),
                    dim)


def cumulative_jvp(ts, o, a, *, dim, largest=True):
    a = primal(a)
    t = np.broadcast_to(ts[0], np.shape(a))
    return _picked(t, cumulative_index(a, dim=dim, largest=largest), dim)


def kth_index(a, *, k, dim, keepdim=False):
    """kthvalue's index: the k-th smallest along dim (a stable order: the first of equal
    values; nan sorts last)."""
    if np.ndim(a) == 0:
        return np.zeros((), dtype=np.int64)
    order = np.argsort(np.asarray(a), axis=dim, kind="stable")
    idx = np.take(order, [k - 1], axis=dim).astype(np.int64)
    return idx if keepdim else np.squeeze(idx, dim)


def kth(a, *, k, dim, keepdim=False):
    if np.ndim(a) == 0:
        return np.array(a, copy=True)
    idx = kth_index(a, k=k, dim=dim, keepdim=True)
    out = np.take_along_axis(np.asarray(a), idx, axis=dim)
    return out if keepdim else np.squeeze(out, dim)


def kth_vjp(g, o, a, *, k, dim, keepdim=False):
    a = primal(a)
    if np.ndim(a) == 0:
        return g
    idx = kth_index(a, k=k, dim=dim, keepdim=True)
    if not keepdim:
        g = on_parts(np.expand_dims, g, dim)
    return on_parts(_scatter_add, g, np.shape(a), idx, dim)


def kth_jvp(ts, o, a, *, k, dim, keepdim=False):
    return kth(np.broadcast_to(ts[0], np.shape(a)) if np.ndim(a) else ts[0], k=k, dim=dim,
               keepdim=keepdim) if np.ndim(a) == 0 else _kth_pick(ts[0], a, k, dim, keepdim)


def _kth_pick(t, a, k, dim, keepdim):
    a = primal(a)
    idx = kth_index(a, k=k, dim=dim, keepdim=True)
    out = np.take_along_axis(np.broadcast_to(t, np.shape(a)), idx, axis=dim)
    return out if keepdim else np.squeeze(out, dim)
