"""Kernels for ddx/ops/rows_misc.py: nansum, deg2rad/rad2deg, rot90, take, cross, scatter,
dist and cdist, with their rules (on arrays and, through ``on_parts`` and ``bilinear_parts``,
on dual numbers)."""

from __future__ import annotations

import numpy as np

from .kernels_more import primal
from .kernels_reduce import expand, norm_vjp, total, vector_norm
from .kernels_shape import on_parts
from .rng_math import fma32, fma64


def _plain(x) -> bool:
    return isinstance(x, (np.ndarray, np.generic, float, int))


def bilinear_parts(fn, x, y):
    """``fn(x, y)`` for a bilinear ``fn``, on arrays or on dual numbers (value, tangent)."""
    if _plain(x) and _plain(y):
        return fn(np.asarray(x), np.asarray(y))
    dual = type(x) if not _plain(x) else type(y)
    for v in (x, y):
        if not _plain(v) and not (hasattr(v, "p") and hasattr(v, "t")):
            raise TypeError(f"no formula for this product of {type(v).__name__}")
    xp, yp = primal(x), primal(y)
    xt = getattr(x, "t", None)
    yt = getattr(y, "t", None)
    parts = [fn(np.asarray(xt), yp) if xt is not None and not _plain(x) else None,
             fn(xp, np.asarray(yt)) if yt is not None and not _plain(y) else None]
    parts = [p for p in parts if p is not None]
    return dual(fn(xp, yp), parts[0] if len(parts) == 1 else parts[0] + parts[1])


# --- nansum: nan counts as 0 -------------------------------------------------------------------
def _kept(a):
    return ~np.isnan(a) if np.asarray(a).dtype.kind == "f" else np.ones(np.shape(a), bool)


def nansum(a, dim=None, keepdim=False):
    a = np.asarray(a)
    return total(np.where(_kept(a), a, 0) if a.dtype.kind == "f" else a, dim, keepdim)


def nansum_vjp(g, out, a, dim=None, keepdim=False):
    """PyTorch's nansum_backward: g expanded, times (not isnan(self))."""
    return expand(g, np.shape(a), dim, keepdim) * _kept(primal(a))


def nansum_jvp(ts, out, a, dim=None, keepdim=False):
    t = np.broadcast_to(ts[0], np.shape(a))
    return np.sum(t * _kept(a), axis=dim, keepdims=keepdim)


# --- deg2rad, rad2deg: times a constant in the input's dtype ------------------------------------
def times(c: float):
    """x * c, with c in x's float dtype (ATen's mul by a wrapped number)."""
    def fn(x):
        if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind == "f":
            return x * x.dtype.type(c)
        return x * c
    return fn


def scaled_vjp(c: float):
    mul = times(c)
    return lambda g, o, a: mul(g)


# --- rot90 ---------------------------------------------------------------------------------------
def rotated(a, *, k=1, dims=(0, 1)):
    return np.ascontiguousarray(np.rot90(a, k, axes=dims))


def rotated_back(g, o, a, *, k=1, dims=(0, 1)):
    return on_parts(lambda x: np.ascontiguousarray(np.rot90(x, -k, axes=dims)), g)


def rotated_jvp(ts, o, a, *, k=1, dims=(0, 1)):
    return rotated(np.broadcast_to(ts[0], np.shape(a)), k=k, dims=dims)


# --- take: elements of the flattened input -----------------------------------------------------
def taken(a, *, index):
    return np.take(np.reshape(a, -1), np.asarray(index, dtype=np.intp))


def _put_flat(g, shape, index):
    out = np.zeros(int(np.prod(shape)), dtype=g.dtype if g.dtype.kind == "f" else np.float64)
    np.add.at(out, np.asarray(index, dtype=np.intp).reshape(-1), np.reshape(g, -1))
    return out.reshape(shape)


def taken_back(g, o, a, *, index):
    """PyTorch's take backward: zeros, put_(index, grad, accumulate=True)."""
    return on_parts(_put_flat, g, np.shape(primal(a)), index)


def taken_jvp(ts, o, a, *, index):
    return taken(np.broadcast_to(ts[0], np.shape(a)), index=index)


# --- cross --------------------------------------------------------------------------------------
def _times_minus(a, b, c, d):
    """a*b - c*d as ATen's CPU cross kernel computes it: fma(a, b, -(c*d))."""
    if isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.dtype.itemsize in (4, 8):
        fma = fma32 if a.dtype == np.float32 else fma64
        with np.errstate(all="ignore"):
            r = np.asarray(fma(a, b, -(c * d))).astype(a.dtype)
            plain = a * b - c * d  # (inf, nan and exact zeros: the plain products' answer)
        return np.where(np.isfinite(r) & (r != 0), r, plain)
    return a * b - c * d


def _cross(a, b, dim):
    a, b = np.broadcast_arrays(a, b)
    i = [np.take(a, k, axis=dim) for k in range(3)]
    j = [np.take(b, k, axis=dim) for k in range(3)]
    return np.stack([_times_minus(i[1], j[2], i[2], j[1]), _times_minus(i[2], j[0], i[0], j[2]),
                     _times_minus(i[0], j[1], i[1], j[0])], axis=dim)


def crossed(a, b, *, dim=-1):
    return _cross(a, b, dim)


def cross_vjp_a(g, o, a, b, *, dim=-1):  # linalg_cross(other, grad)
    return bilinear_parts(lambda x, y: _cross(x, y, dim), b, g)


def cross_vjp_b(g, o, a, b, *, dim=-1):  # linalg_cross(grad, self)
    return bilinear_parts(lambda x, y: _cross(x, y, dim), g, a)


def cross_jvp(ts, o, a, b, *, dim=-1):
    parts = []
    if ts[0] is not None:
        parts.append(_cross(np.broadcast_to(ts[0], np.shape(a)), b, dim))
    if ts[1] is not None:
        parts.append(_cross(a, np.broadcast_to(ts[1], np.shape(b)), dim))
    return parts[0] if len(parts) == 1 else parts[0] + parts[1]


# --- scatter: src (or one value) written at index along dim -----------------------------------
def _grid(index, dim):
    idx = np.asarray(index, dtype=np.intp)
    grid = list(np.indices(idx.shape, sparse=True))
    grid[dim] = idx
    return tuple(grid)


def _written(a, dim, index, values):
    out = np.array(a, copy=True)
    if np.size(index):
        out[_grid(index, dim)] = values
    return out


def _src_part(src, index):
    idx = np.asarray(index)
    return np.asarray(src)[tuple(slice(0, n) for n in idx.shape)] if idx.ndim else src


def scattered(a, src, *, dim, index):
    return _written(a, dim, index, _src_part(src, index))


def scattered_value(a, *, dim, index, value):
    return _written(a, dim, index, np.asarray(value, dtype=np.asarray(a).dtype))


def scatter_back_self(g, o, a, *args, dim, index, value=None):
    """grad.scatter(dim, index, 0): the overwritten places get nothing."""
    return on_parts(_written, g, dim, index, 0)


def _gather_into(g, shape, dim, index):
    out = np.zeros(shape, dtype=g.dtype if g.dtype.kind == "f" else np.float64)
    if np.size(index):
        out[tuple(slice(0, n) for n in np.shape(index))] = g[_grid(index, dim)]
    return out


def scatter_back_src(g, o, a, src, *, dim, index):
    """grad.gather(dim, index), into src's shape."""
    return on_parts(_gather_into, g, np.shape(primal(src)), dim, index)


def scatter_jvp(ts, o, a, src=None, *, dim, index, value=None):
    ta = np.zeros(np.shape(o)) if ts[0] is None else np.broadcast_to(ts[0], np.shape(a))
    if src is None:
        return _written(ta, dim, index, 0)
    ts_src = np.zeros(np.shape(src)) if len(ts) < 2 or ts[1] is None else \
        np.broadcast_to(ts[1], np.shape(src))
    return _written(ta, dim, index, _src_part(ts_src, index))


# --- dist: the p-norm of the difference -----------------------------------------------------------
def distance(a, b, p=2.0):
    return vector_norm(np.asarray(a) - np.asarray(b), p)


def dist_vjp_a(g, o, a, b, p=2.0):
    """PyTorch's norm_backward(grad, self - other, p, result)."""
    return norm_vjp(g, o, a - b, p)


def dist_vjp_b(g, o, a, b, p=2.0):
    return -norm_vjp(g, o, a - b, p)


def dist_jvp(ts, o, a, b, p=2.0):
    ta = 0.0 if ts[0] is None else ts[0]
    tb = 0.0 if ts[1] is None else ts[1]
    t = np.broadcast_to(np.asarray(ta) - np.asarray(tb), np.broadcast_shapes(np.shape(a),
                                                                             np.shape(b)))
    return np.sum(t * norm_vjp(np.ones(np.shape(o)), o, a - b, p))


# --- cdist: the p-norm distance of every row of a to every row of b ---------------------------
def _pairs(a, b):
    return np.expand_dims(a, -2) - np.expand_dims(b, -3)


def pairwise(a, b, p=2.0):
    return vector_norm(_pairs(np.asarray(a), np.asarray(b)), p, dim=-1)


def _per_pair(g, o, a, b, p):
    """The norm's rule on each difference (PyTorch's _cdist_backward)."""
    d = _pairs(a, b)
    return norm_vjp(g, o, d, p, dim=(np.ndim(d) - 1,))


def pairwise_vjp_a(g, o, a, b, p=2.0):  # (summed over b's rows)
    return np.sum(_per_pair(g, o, a, b, p), axis=-2)


def pairwise_vjp_b(g, o, a, b, p=2.0):
    return -np.sum(_per_pair(g, o, a, b, p), axis=-3)


def pairwise_jvp(ts, o, a, b, p=2.0):
    ta = np.zeros(np.shape(a)) if ts[0] is None else np.broadcast_to(ts[0], np.shape(a))
    tb = np.zeros(np.shape(b)) if ts[1] is None else np.broadcast_to(ts[1], np.shape(b))
    return np.sum(_pairs(ta, tb) * _per_pair(np.ones(np.shape(o)), o, a, b, p), axis=-1)


# --- baddbmm: beta * input + alpha * (batch1 @ batch2) -----------------------------------------
def _t(x):
    return np.transpose(x, (0, 2, 1))


def batched_add(a, b1, b2, *, beta=1.0, alpha=1.0):
    prod = np.matmul(b1, b2)
    if alpha != 1:
        prod = prod * np.asarray(alpha, dtype=prod.dtype)
    if beta == 0:  # (ATen: the input is ignored, nan and inf too)
        return prod + np.zeros(np.shape(a), dtype=prod.dtype)
    return (a * np.asarray(beta, dtype=np.asarray(a).dtype) if beta != 1 else a) + prod


def baddbmm_vjp_input(g, o, a, b1, b2, *, beta=1.0, alpha=1.0):
    return g * beta if beta != 1 else g


def baddbmm_vjp_b1(g, o, a, b1, b2, *, beta=1.0, alpha=1.0):
    r = np.matmul(g, _t(b2))
    return r * alpha if alpha != 1 else r


def baddbmm_vjp_b2(g, o, a, b1, b2, *, beta=1.0, alpha=1.0):
    r = np.matmul(_t(b1), g)
    return r * alpha if alpha != 1 else r


def baddbmm_jvp(ts, o, a, b1, b2, *, beta=1.0, alpha=1.0):
    parts = []
    if ts[0] is not None:
        parts.append(np.broadcast_to(ts[0], np.shape(o)) * beta)
    if ts[1] is not None:
        parts.append(np.matmul(np.broadcast_to(ts[1], np.shape(b1)), b2) * alpha)
    if ts[2] is not None:
        parts.append(np.matmul(b1, np.broadcast_to(ts[2], np.shape(b2))) * alpha)
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return np.broadcast_to(total, np.shape(o))
