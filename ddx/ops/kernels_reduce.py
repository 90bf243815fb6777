"""Kernels of the reduction rows: forwards, VJP/JVP rules and emitters for sum, mean, prod,
max/min, amax/amin, var/std, norm, logsumexp, cumsum/cumprod, argmax/argmin and all/any.

``dim`` is None (everything) or a tuple of sorted non-negative axes (an int for the ops that
take one axis: prod, max/min with dim, cumsum, cumprod, argmax); ``keepdim`` keeps the reduced
axes as size 1. Rules are written with numpy functions that dual numbers (engine/hessian.py)
run: the gradient of every rule differentiates again."""

from __future__ import annotations

import math

import numpy as np

from . import vml
from .kernels_norm import norm_backward, norm_in_order
from .kernels_sum import torch_mean, torch_sum


def axes_of(shape: tuple, dim) -> tuple[int, ...]:
    if dim is None:
        return tuple(range(len(shape)))
    return dim if isinstance(dim, tuple) else (dim,)


def count(shape: tuple, dim) -> int:
    """How many elements each reduced value is made of."""
    return int(math.prod(shape[d] for d in axes_of(shape, dim)))


def kept(g, shape: tuple, dim, keepdim: bool):
    """A reduced array with its reduced axes back as size 1 (so it broadcasts over the input)."""
    if keepdim or dim is None or not shape:  # (a whole reduction's 0-d result broadcasts)
        return g
    axes = axes_of(shape, dim)
    # (reshape, not expand_dims: formulas (engine/symbolic.py) cannot write it, and say so)
    return np.reshape(g, tuple(1 if d in axes else n for d, n in enumerate(shape)))


def kept_value(out, shape: tuple, dim, keepdim: bool):
    """kept() for the reduced result a rule reads: by np.stack of one array per axis, which
    dual numbers run and formulas (engine/symbolic.py) decline, since the formula
    "prod(x, dim=1)/x" is not one a user could type back in."""
    if keepdim or dim is None or not shape:
        return out
    for d in axes_of(shape, dim):
        out = np.stack([out], axis=d)
    return out


def expand(g, shape: tuple, dim, keepdim: bool = False):
    """A reduced gradient broadcast back over the input's shape (read-only, as
    np.broadcast_to's): a whole reduction's 0-d float gradient as one number seen at every
    place, made directly (np.broadcast_to's Python layers cost more than a 10^3-element
    product)."""
    if dim is None and type(g) is np.ndarray and not g.ndim and g.dtype.kind == "f":
        r = np.ndarray(shape, g.dtype, g, 0, (0,) * len(shape))
        r.setflags(write=False)  # (cheaper than r.flags.writeable = False: no flags object)
        return r
    return np.broadcast_to(kept(g, shape, dim, keepdim), shape)


def reduce_linear(fn):
    """The JVP of a reduction linear in its input: the reduction of the tangent."""
    return lambda ts, out, a, **kw: fn(np.broadcast_to(ts[0], np.shape(a)), **kw)


# --- sum, mean --------------------------------------------------------------------------------
def total(a, dim=None, keepdim=False):
    return torch_sum(a, dim, keepdim)  # (PyTorch's order of additions: kernels_sum.py)


def total_vjp(g, out, a, dim=None, keepdim=False):
    # (an array's own shape: np.shape's Python layer costs about a 10^3-element product)
    return expand(g, a.shape if type(a) is np.ndarray else np.shape(a), dim, keepdim)


def average(a, dim=None, keepdim=False):
    return torch_mean(a, dim, keepdim)


def average_vjp(g, out, a, dim=None, keepdim=False):
    shape = np.shape(a)
    return expand(g / count(shape, dim), shape, dim, keepdim)


# --- prod ---------------------------------------------------------------------------------------
def product(a, dim=None, keepdim=False):
    return np.prod(a, axis=dim, keepdims=keepdim, dtype=_INT64.get(getattr(a, "dtype", None)))


def _last(a, dim):
    """``a`` with axis ``dim`` moved last (None: flattened), and the way back."""
    shape = np.shape(a)
    if dim is None:
        return np.reshape(a, (-1,)), lambda r: np.reshape(r, shape)
    perm = tuple(d for d in range(len(shape)) if d != dim) + (dim,)
    back = tuple(int(i) for i in np.argsort(perm))
    return np.transpose(a, perm), lambda r: np.transpose(r, back)


def _others_by_loop(a, dim):
    """For every element, the product of the others along ``dim``: exclusive products from
    the left times those from the right (as PyTorch's prod_safe_zeros_backward), by
    multiplications only, so that zeros are exact and dual numbers carry through."""
    b, back = _last(a, dim)
    n = np.shape(b)[-1]
    if n == 0:
        return a
    cols = [b[..., k] for k in range(n)]
    one = cols[0] * 0 + 1
    left = [one]
    for k in range(1, n):
        left.append(left[-1] * cols[k - 1])
    right = [one] * n
    for k in range(n - 2, -1, -1):
        right[k] = right[k + 1] * cols[k + 1]
    return back(np.stack([left[k] * right[k] for k in range(n)], axis=-1))


def _others(a, out, dim, keepdim):
    """The product of the other elements (the partial derivative of prod)."""
    if np.count_nonzero(np.asarray(a == 0)):
        return _others_by_loop(a, dim)
    return kept_value(out, np.shape(a), dim, keepdim) / a


def product_vjp(g, out, a, dim=None, keepdim=False):
    shape = np.shape(a)
    return expand(g, shape, dim, keepdim) * _others(a, out, dim, keepdim)


def product_jvp(ts, out, a, dim=None, keepdim=False):
    t = np.broadcast_to(ts[0], np.shape(a))
    return np.sum(t * _others(a, out, dim, keepdim), axis=dim, keepdims=keepdim)


# --- norm (PyTorch's linalg_vector_norm and its backward, case by case) ---------------------------
def _two_norm(a: np.ndarray, dim, keepdim: bool):
    """linalg_vector_norm(p=2) as ATen's CPU kernel: along the last dim (or all of a tensor)
    binary_kernel_reduce_lastdim's loop, a 32-byte vector of squares accumulated from 0, its
    lanes added into the first one by one, then the leftover elements' squares one by one;
    along another single dim the squares one after another; the root of the float result.
    (Trailing dims of a C-ordered array coalesce into one, as in ATen's iterator.)"""
    nd = a.ndim
    axes = tuple(sorted({d % nd for d in axes_of(a.shape, dim)})) if nd else ()
    if dim is None or axes == tuple(range(nd - len(axes), nd)):  # (the trailing dims: one row)
        width = math.prod(a.shape[d] for d in axes) if dim is not None else a.size
        rows = np.ascontiguousarray(a).reshape(-1, width)
        lanes = 32 // a.itemsize
        n = rows.shape[1]
        full = n - n % lanes
        sq = rows[:, :full] * rows[:, :full]
        acc = np.add.reduce(sq.reshape(len(rows), -1, lanes), axis=1) if full else \
            np.zeros((len(rows), lanes), a.dtype)
        b = acc[:, 0]
        for j in range(1, lanes):
            b = b + acc[:, j]
        for k in range(full, n):
            b = b + rows[:, k] * rows[:, k]
        r = np.sqrt(b).reshape([s for d, s in enumerate(a.shape) if d not in axes])
    elif len(axes) == 1:
        r = np.sqrt(np.add.reduce(a * a, axis=axes[0]))  # (one after another: not the last axis)
    else:
        return None
    return np.expand_dims(r, axes) if keepdim else r


def vector_norm(a, p=2.0, dim=None, keepdim=False):
    m = np.abs(a)
    if p == 2:
        if type(a) is np.ndarray and a.dtype in (np.float32, np.float64) and a.size and a.ndim:
            r = _two_norm(a, dim, keepdim)
            if r is not None:
                return r[()] if r.ndim == 0 else r
        return np.sqrt(np.sum(a * a, axis=dim, keepdims=keepdim))
    if p != math.inf and p != -math.inf:
        r = norm_in_order(a, p, dim, keepdim)
        if r is not None:
            return r
    if p == 1:
        return np.sum(m, axis=dim, keepdims=keepdim)
    if p == math.inf:
        return np.max(m, axis=dim, keepdims=keepdim, initial=0.0)
    if p == -math.inf:
        return np.min(m, axis=dim, keepdims=keepdim)
    if p == 0:
        return np.sum(m != 0, axis=dim, keepdims=keepdim).astype(np.result_type(a, 0.0))
    with np.errstate(divide="ignore", over="ignore"):
        return np.power(np.sum(np.power(m, p), axis=dim, keepdims=keepdim), 1.0 / p)


def _norm_scale(a, out, p, dim, keepdim):
    """d norm / d a, per element (PyTorch's linalg_vector_norm_backward)."""
    o = kept_value(out, np.shape(a), dim, keepdim)
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 0:
            return a * 0
        if p == 1:
            return np.sign(a)
        if p == 2:  # (a/0 where the norm is 0, masked: PyTorch's second derivative is nan there)
            return np.where(o == 0, 0.0, a / o)
        if p in (math.inf, -math.inf):
            mask = np.abs(a) == o
            return np.sign(a) * (mask / np.sum(mask, axis=dim, keepdims=True))
        m = np.abs(a)
        if p < 1:
            scaled = np.sign(a) * np.where(a == 0, 0.0, np.power(np.where(a == 0, 1.0, m), p - 1))
            return scaled * np.power(o, 1 - p)
        zero = o == 0
        scale = np.where(zero, 0.0, 1 / np.power(np.where(zero, 1.0, o), p - 1))
        if p < 2:
            return np.sign(a) * np.power(m, p - 1) * scale
        return a * np.power(m, p - 2) * scale


def norm_vjp(g, out, a, p=2.0, dim=None, keepdim=False):
    exact = norm_backward(g, out, a, p, dim, keepdim)
    if exact is not None:
        return exact
    return expand(g, np.shape(a), dim, keepdim) * _norm_scale(a, out, p, dim, keepdim)


def norm_jvp(ts, out, a, p=2.0, dim=None, keepdim=False):
    t = np.broadcast_to(ts[0], np.shape(a))
    return np.sum(t * _norm_scale(a, out, p, dim, keepdim), axis=dim, keepdims=keepdim)


# --- logsumexp -----------------------------------------------------------------------------------
def logsumexp(a, dim=None, keepdim=False):
    """logsumexp_out_impl: the max, 0 where it is infinite; (a - max).exp(), summed in
    ATen's order, its log, plus the max (float arrays: torch's exp, sum and log)."""
    # (initial: the log of an empty sum is -inf, as PyTorch gives)
    m = np.max(a, axis=dim, keepdims=True, initial=-np.inf)
    if type(a) is np.ndarray and a.dtype.kind == "f" and a.size:
        m = np.where(np.abs(m) == np.inf, 0.0, m).astype(a.dtype)
        axes = tuple(sorted(d % a.ndim for d in axes_of(np.shape(a), dim))) if a.ndim else ()
        with np.errstate(divide="ignore", over="ignore"):
            s = vml.log(np.asarray(torch_sum(vml.exp(a - m), axes, True))) + m
    else:
        m = np.where(np.isfinite(m), m, 0.0)
        with np.errstate(divide="ignore"):
            s = np.log(np.sum(np.exp(a - m), axis=dim, keepdims=True)) + m
    return s if keepdim else np.reshape(s, np.shape(np.sum(a, axis=dim)))


def logsumexp_vjp(g, out, a, dim=None, keepdim=False):
    shape = np.shape(a)
    return expand(g, shape, dim, keepdim) * vml.exp(a - kept_value(out, shape, dim, keepdim))


def logsumexp_jvp(ts, out, a, dim=None, keepdim=False):
    t = np.broadcast_to(ts[0], np.shape(a))
    w = np.exp(a - kept_value(out, np.shape(a), dim, keepdim))
    return np.sum(w * t, axis=dim, keepdims=keepdim)


# --- cumsum, cumprod -----------------------------------------------------------------------------
def _running(fn, a, dim):
    """ATen's cpu_cum_base_kernel: one after another along dim, in acc_type (double for a
    float32 tensor: each partial rounded to float32 only as it is stored). ``fn`` np.cumsum
    or np.cumprod (what dual numbers carry a tangent through)."""
    if type(a) is np.ndarray and a.dtype == np.float32:
        return fn(a, axis=dim, dtype=np.float64).astype(np.float32)
    return fn(a, axis=dim, dtype=_INT64.get(getattr(a, "dtype", None)))


# integer and bool tensors sum, multiply and accumulate into int64 (PyTorch's promote_integers;
# numpy's uint8 goes to uint64)
_INT64 = {np.dtype(t): np.int64 for t in (np.bool_, np.int8, np.int16, np.int32, np.int64,
                                          np.uint8, np.uint16, np.uint32, np.uint64)}


def cumsum(a, dim=0):
    return _running(np.cumsum, a, dim) if np.ndim(a) else a * 1


def rev_cumsum(g, dim):
    if not np.ndim(g):
        return g
    return np.flip(_running(np.cumsum, np.flip(g, dim), dim), dim)


def cumsum_vjp(g, out, a, dim=0):
    return rev_cumsum(np.broadcast_to(g, np.shape(a)), dim)


def cumprod(a, dim=0):
    return _running(np.cumprod, a, dim) if np.ndim(a) else a * 1


def cumprod_vjp(g, out, a, dim=0):
    """PyTorch's cumprod_backward: reversed cumsum of g * out over x without zeros; with zeros,
    grad_i = L_i * S_i (L_i the product before i, S_i = g_i + x_(i+1) S_(i+1)): exact, no
    division."""
    if not np.ndim(a):
        return g * 1
    if not np.count_nonzero(np.asarray(a == 0)):
        return rev_cumsum(g * out, dim) / a
    b, back = _last(a, dim)
    gb, _ = _last(np.broadcast_to(g, np.shape(a)), dim)
    n = np.shape(b)[-1]
    xs = [b[..., k] for k in range(n)]
    gs = [gb[..., k] for k in range(n)]
    s = [None] * n
    s[n - 1] = gs[n - 1] * 1
    for k in range(n - 2, -1, -1):
        s[k] = gs[k] + xs[k + 1] * s[k + 1]
    left = xs[0] * 0 + 1
    cols = []
    for k in range(n):
        cols.append(left * s[k])
        left = left * xs[k]
    return back(np.stack(cols, axis=-1))


def cumprod_jvp(ts, out, a, dim=0):
    t = np.broadcast_to(ts[0], np.shape(a))
    if not np.ndim(a):
        return t * 1
    if not np.count_nonzero(np.asarray(a == 0)):
        return out * np.cumsum(t / a, axis=dim)
    b, back = _last(a, dim)
    tb, _ = _last(t, dim)
    n = np.shape(b)[-1]
    val, tan, cols = b[..., 0], tb[..., 0], []
    cols.append(tan)
    for k in range(1, n):
        tan = tan * b[..., k] + val * tb[..., k]
        val = val * b[..., k]
        cols.append(tan)
    return back(np.stack(cols, axis=-1))


# --- argmax/argmin, all/any (no gradient) --------------------------------------------------------
def argmax(a, dim=None, keepdim=False):
    if dim is None:
        r = np.argmax(a)
        return np.reshape(r, (1,) * np.ndim(a)) if keepdim else r
    return np.argmax(a, axis=dim, keepdims=keepdim)


def argmin(a, dim=None, keepdim=False):
    if dim is None:
        r = np.argmin(a)
        return np.reshape(r, (1,) * np.ndim(a)) if keepdim else r
    return np.argmin(a, axis=dim, keepdims=keepdim)


def every(a, dim=None, keepdim=False):
    return np.all(a, axis=dim, keepdims=keepdim)


def some(a, dim=None, keepdim=False):
    return np.any(a, axis=dim, keepdims=keepdim)


def no_gradient(g, out, a, **kw):  # (never run: the result needs no grad)
    return np.zeros(np.shape(a))


def no_tangent(ts, out, a, **kw):
    return np.zeros(np.shape(out))
