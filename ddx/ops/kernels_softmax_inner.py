"""softmax and log_softmax along a dim that is not the last, values and gradients, as ATen's CPU
kernels compute them (SoftMaxKernel.cpp, AVX-512 build: vectors of 16 floats or 8 doubles),
float32 and float64, for an input seen as (outer, dim, inner):

- log_softmax (_vec_log_softmax) and both backwards (_vec_softmax_backward): per outer index,
  chunks of the inner positions (128 KiB of the dim's rows, a whole number of vectors); the max
  and the sums along the dim taken row after row; SLEEF's exp on each chunk's whole vectors and
  the C library's on the rest; SLEEF's log of the sums; the backwards' products fused
  (``g - exp(out) * sum``, ``sum + g * out``) as GCC compiles them.
- softmax (_vec_softmax): the outer x inner positions split between the threads as
  at::parallel_for splits them, a position taking the vector road when it and the 15 (or 7)
  after it are in its thread's range and its row; ``exp(x - max)``, the sum, a division.

Checked against torch 2.13: the same bits."""

from __future__ import annotations

import numpy as np

from .kernels_softmax import exp_sleef
from .kernels_sum import split_ranges, threads

_F32 = np.dtype(np.float32)


def _view(a: np.ndarray, axis: int) -> np.ndarray:
    outer = int(np.prod(a.shape[:axis], dtype=np.int64))
    inner = int(np.prod(a.shape[axis + 1:], dtype=np.int64))
    return np.ascontiguousarray(a).reshape(outer, a.shape[axis], inner)


def _chunk_vectors(inner: int, dim: int, dt: np.dtype) -> np.ndarray:
    """Which inner positions a chunked loop takes by whole vectors."""
    lanes = 64 // dt.itemsize
    chunk = max((128 * 1024) // max(dim, 1) // dt.itemsize, lanes) // lanes * lanes
    chunk = min(chunk, inner) if inner else 1
    vector = np.zeros(inner, bool)
    for begin in range(0, inner, chunk):
        size = min(chunk, inner - begin)
        vector[begin:begin + size - size % lanes] = True
    return vector


def _c_exp(x: np.ndarray) -> np.ndarray:
    from .libm import function

    single = x.dtype == _F32
    fn = function("expf" if single else "exp", single)
    return np.array([fn(float(v)) for v in x.reshape(-1)], x.dtype).reshape(x.shape)


def _exp_by(x: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """exp of (outer, dim, inner) x: SLEEF's where ``vector`` (inner positions), else libc's."""
    out = np.empty_like(x)
    with np.errstate(all="ignore"):
        if vector.any():
            out[..., vector] = exp_sleef(np.ascontiguousarray(x[..., vector]))
        if (~vector).any():
            out[..., ~vector] = _c_exp(x[..., ~vector])
    return out


def _fma(dt):
    from .rng_math import fma32
    from .sleef import fma_f64

    return (lambda a, b, c: fma32(a, b, c).astype(dt)) if dt == _F32 else \
        (lambda a, b, c: np.asarray(fma_f64(a, b, c), dt))


def _log(x: np.ndarray) -> np.ndarray:
    if x.dtype == _F32:
        from .kernels_sleef import logf as log
    else:
        from .sleef64 import logd as log
    with np.errstate(all="ignore"):
        return log(x)


def log_softmax(a: np.ndarray, axis: int) -> np.ndarray:
    x = _view(a, axis)
    dt = x.dtype
    _, dim, inner = x.shape
    vector = _chunk_vectors(inner, dim, dt)
    top = np.full((x.shape[0], inner), -np.inf, dt)
    for d in range(dim):  # (data > max ? data : max)
        top = np.where(x[:, d, :] > top, x[:, d, :], top)
    shifted = (x - top[:, None, :]).astype(dt)
    e = _exp_by(shifted, vector)
    total = np.zeros_like(top)
    for d in range(dim):
        total = (total + e[:, d, :]).astype(dt)
    with np.errstate(all="ignore"):
        out = (shifted - _log(total)[:, None, :]).astype(dt)
    return out.reshape(a.shape)


def _grad_views(g: np.ndarray, out: np.ndarray, axis: int) -> tuple:
    """(out, g) seen as (outer, dim, inner), g in out's type (ATen makes it contiguous)."""
    o = _view(out, axis)
    return o, _view(np.broadcast_to(g, out.shape).astype(o.dtype, copy=False), axis)


def log_softmax_vjp(g: np.ndarray, out: np.ndarray, axis: int) -> np.ndarray:
    o, gg = _grad_views(g, out, axis)
    dt = o.dtype
    _, dim, inner = o.shape
    total = np.zeros((o.shape[0], inner), dt)
    for d in range(dim):  # (the sum of g along the dim, row after row from 0)
        total = (total + gg[:, d, :]).astype(dt)
    e = _exp_by(o, _chunk_vectors(inner, dim, dt))
    with np.errstate(all="ignore"):
        res = _fma(dt)(-e, np.broadcast_to(total[:, None, :], o.shape), gg)
    return res.reshape(out.shape)


def softmax_vjp(g: np.ndarray, out: np.ndarray, axis: int) -> np.ndarray:
    o, gg = _grad_views(g, out, axis)
    dt = o.dtype
    dim = o.shape[1]
    fma = _fma(dt)
    total = np.zeros((o.shape[0], o.shape[2]), dt)
    with np.errstate(all="ignore"):
        for d in range(dim):
            total = fma(gg[:, d, :], o[:, d, :], total)
        res = ((gg - total[:, None, :]).astype(dt) * o).astype(dt)
    return res.reshape(out.shape)


def softmax(a: np.ndarray, axis: int) -> np.ndarray:
    x = _view(a, axis)
    dt = x.dtype
    outer, dim, inner = x.shape
    lanes = 64 // dt.itemsize
    n = outer * inner
    vector = np.zeros(n, bool)  # (flat positions outer * inner + inner_idx)
    for begin, end in split_ranges(n, threads(), 1):
        idx = begin
        while idx < end:
            inner_idx = idx % inner
            if inner_idx + lanes <= inner and idx + lanes <= end:
                vector[idx:idx + lanes] = True
                idx += lanes
            else:
                idx = min(end, (idx // inner + 1) * inner)
    vector = vector.reshape(outer, inner)
    top = x[:, 0, :].copy()
    for d in range(1, dim):  # (vec::maximum; std::max on the rest)
        top = np.where(x[:, d, :] > top, x[:, d, :], top)
    shifted = (x - top[:, None, :]).astype(dt)
    e = np.empty_like(shifted)
    with np.errstate(all="ignore"):
        flat_v = np.broadcast_to(vector[:, None, :], shifted.shape)
        if flat_v.any():
            e[flat_v] = exp_sleef(np.ascontiguousarray(shifted[flat_v]))
        if (~flat_v).any():
            e[~flat_v] = _c_exp(shifted[~flat_v])
        total = np.zeros((outer, inner), dt)
        for d in range(dim):
            total = (total + e[:, d, :]).astype(dt)
        out = (e / total[:, None, :]).astype(dt)
    return out.reshape(a.shape)
