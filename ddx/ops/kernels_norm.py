"""torch.linalg.vector_norm for p other than 2 and ±inf, as ATen's CPU kernel adds it
(ReduceOpsKernel.cpp's norm_kernel_tensor_iterator_impl): binary_kernel_reduce with
NormOneOps (acc + |x|), NormZeroOps (acc + (x != 0)) or NormOps (acc + pow(|x|, p), then
pow(acc, 1/p), the C library's pow), in the input's own float type. Each output element's terms are added one
after another from zero in the iterator's order (memory order for a whole reduction, index
order along one dim); a whole reduction of GRAIN_SIZE elements and more is split into
at::parallel_for's ranges, one accumulator per thread, then added from zero in thread order.
(sum's cascade is not used here: torch.norm(x, 1) and x.abs().sum() differ in PyTorch.)"""

from __future__ import annotations

import numpy as np

from . import libm
from .kernels_sum import GRAIN_SIZE, split_ranges, threads

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _pow(v, e: float):
    """The C library's pow (powf for float32), element by element, as ATen's compat_pow calls
    it (numpy's own power rounds otherwise in about one case in twenty); None without it."""
    v = np.asarray(v)
    if v.dtype == np.float32:
        fn = libm.function("powf", True, 2)
        if fn is None:
            return None
    else:
        fn = libm.c_pow
    return np.array(np.frompyfunc(fn, 2, 1)(v, float(e)), dtype=object).astype(v.dtype)


def _chain(v: np.ndarray):
    """v's elements added one after another from zero (a numpy scalar of v's dtype)."""
    if not v.size:
        return v.dtype.type(0)
    return v.dtype.type(0) + np.add.accumulate(v)[-1]


def norm_in_order(a, p: float, dim=None, keepdim: bool = False):
    """vector_norm(a, p, dim, keepdim) in ATen's order, or None where this does not apply (a
    reduction over several dims, a dim of GRAIN_SIZE elements or more, no float array)."""
    if type(a) is not np.ndarray or a.dtype not in _FLOATS or not a.ndim:
        return None
    dt = a.dtype.type
    m = np.abs(a)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        if p == 1:
            terms = m
        elif p == 0:
            terms = (m != 0).astype(a.dtype)
        else:
            terms = _pow(m, dt(p))
            if terms is None:
                return None
        if dim is None or (isinstance(dim, tuple) and len(dim) == a.ndim and
                           sorted(d % a.ndim for d in dim) == list(range(a.ndim))):
            flat = terms.ravel(order="K")
            n, nthreads = flat.size, threads()
            if n < GRAIN_SIZE or nthreads == 1:
                total = _chain(flat)
            else:
                total = dt(0)
                for lo, hi in split_ranges(n, nthreads, GRAIN_SIZE):
                    total = total + _chain(flat[lo:hi])
            r = np.asarray(total)
            shape = (1,) * a.ndim if keepdim else ()
        else:
            axes = (dim,) if isinstance(dim, int) else tuple(dim)
            if len(axes) != 1:
                return None
            axis = axes[0] % a.ndim
            if a.shape[axis] >= GRAIN_SIZE and threads() > 1 or not a.shape[axis]:
                return None
            r = dt(0) + np.take(np.add.accumulate(terms, axis=axis), -1, axis=axis)
            shape = r.shape if not keepdim else np.expand_dims(r, axis).shape
        if p not in (0, 1):
            r = _pow(r, dt(1) / dt(p))
    r = np.asarray(r, a.dtype).reshape(shape)
    return r[()] if not r.ndim else r


def _kept(v, shape: tuple, dim, keepdim: bool):
    """v with the reduced dims back as size 1 (unsqueeze_multiple)."""
    v = np.asarray(v)
    if keepdim or dim is None or not shape:
        return v.reshape((1,) * len(shape)) if dim is None and not keepdim and shape else v
    axes = (dim,) if isinstance(dim, int) else tuple(dim)
    return np.expand_dims(v, tuple(sorted(d % len(shape) for d in axes)))


def norm_backward(g, out, a, p: float, dim=None, keepdim: bool = False):
    """FunctionsManual.cpp's norm_backward for p not 0, 1, 2 or ±inf, in its order of
    operations (the pows: ATen's pow kernel), for a float array; None otherwise."""
    from .kernels_pow import power  # (kernels_pow imports nothing of this module's)

    if type(a) is not np.ndarray or a.dtype not in _FLOATS or not a.ndim or \
            p in (0, 1, 2) or np.isinf(p) or not all(
                type(v) in (np.ndarray, float) or isinstance(v, np.floating) for v in (g, out)):
        return None  # (dual numbers and formulas: the general rule)
    dt = a.dtype
    g = np.asarray(_kept(g, a.shape, dim, keepdim), dt)
    norm = np.asarray(_kept(out, a.shape, dim, keepdim), dt)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        if p < 1:
            scaled = np.where(a == 0, dt.type(0), power(np.abs(a), p - 1))
            scaled = (np.sign(a) * scaled).astype(dt)
            return ((scaled * g).astype(dt) * power(norm, 1 - p)).astype(dt)
        if p < 2:
            scaled = (np.sign(a) * power(np.abs(a), p - 1)).astype(dt)
        else:
            scaled = (a * power(np.abs(a), p - 2)).astype(dt)
        scale = np.where(norm == 0, dt.type(0), g / power(norm, p - 1)).astype(dt)
        return (scaled * scale).astype(dt)
