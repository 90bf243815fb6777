"""Batch normalisation as ATen's CPU kernels compute it (Normalization.cpp and
cpu/batch_norm_kernel.cpp, their AVX-512 build), float32 and float64, for a contiguous input
(N, C, *S). Two roads, as ATen takes them:

- ``S`` not empty (image_size > 1): per channel, the sum of its values in memory order in a
  double, mean = sum / N; the sum of the squares ``(x - mean) * (x - mean)`` (in the input's
  type) in a double. Backward: per sample and channel vec::reduce_all of dy and
  map2_reduce_all of ``(x - mean) * dy`` (a vector of 16 floats or 8 doubles, the fused
  multiply-add GCC makes of ``acc + (x - mean) * dy``), added sample after sample.
- (N, C) (image_size 1, which ATen takes as channels-last): at::parallel_for over the rows,
  each thread adding its rows into a buffer of C in the input's type (``acc + (x - mean) *
  (x - mean)`` as one fused multiply-add), then the threads' buffers added, in a double for
  the statistics and in the input's type for backward's sum and dot product.

Both apply ``y = x * alpha + beta`` as one fused multiply-add, alpha = invstd * weight and
beta = bias - mean * alpha (fused too). Checked against torch 2.13 bit for bit."""

from __future__ import annotations

import numpy as np

from .kernels_sum import split_ranges, threads
from .rng_math import fma32, fma64

_F32 = np.dtype(np.float32)


def _fma(a, b, c, dtype):
    return (fma32 if dtype == _F32 else fma64)(a, b, c).astype(dtype)


def _planes(x: np.ndarray) -> np.ndarray:
    """(N, C, image_size)."""
    return x.reshape(x.shape[0], x.shape[1], -1)


def _thread_rows(n: int) -> list:
    """at::parallel_for(0, n, 1)'s ranges, one per thread, and the buffer rows (threads)."""
    return split_ranges(n, threads(), 1)


def _seq_double(v: np.ndarray) -> np.ndarray:
    """A double sum of v's values along its last axis, one after another."""
    return np.add.accumulate(v.astype(np.float64), axis=-1)[..., -1]


def stats(x: np.ndarray) -> tuple:
    """(mean, var_sum, count) per channel, as batch_norm_cpu_collect_stats does."""
    dt = x.dtype
    n, c = x.shape[0], x.shape[1]
    count = x.size // c
    planes = _planes(x)
    if planes.shape[2] > 1:
        per = planes.transpose(1, 0, 2).reshape(c, -1)  # (each channel's values in order)
        mean = (_seq_double(per) / count).astype(dt)
        d = (per - mean[:, None]).astype(dt)
        return mean, _seq_double((d * d).astype(dt)).astype(dt), count
    rows = planes.reshape(n, c)
    ranges = _thread_rows(n)
    buffer = np.zeros((threads(), c), dt)
    for t, (b, e) in enumerate(ranges):
        buffer[t] = np.add.accumulate(rows[b:e], axis=0)[-1]
    mean = (_seq_double(buffer.T) / count).astype(dt)
    buffer[...] = 0
    for t, (b, e) in enumerate(ranges):
        acc = np.zeros(c, dt)
        for i in range(b, e):
            d = (rows[i] - mean).astype(dt)
            acc = _fma(d, d, acc, dt)
        buffer[t] = acc
    return mean, _seq_double(buffer.T).astype(dt), count


def invstd_of(var_sum: np.ndarray, count: int, eps: float) -> np.ndarray:
    """InvStd of the batch's biased variance: 1 / sqrt(var + eps) in a double (0 where both
    are 0)."""
    var = (var_sum / var_sum.dtype.type(count)).astype(var_sum.dtype).astype(np.float64)
    with np.errstate(divide="ignore"):
        out = np.where((var != 0) | (eps != 0), 1.0 / np.sqrt(var + eps), 0.0)
    return out.astype(var_sum.dtype)


def running_invstd(running_var: np.ndarray, eps: float) -> np.ndarray:
    """Evaluation's 1 / sqrt(running_var + eps), in the input's type."""
    dt = running_var.dtype.type
    with np.errstate(divide="ignore"):
        return (dt(1) / np.sqrt((running_var + dt(eps)).astype(running_var.dtype))).astype(
            running_var.dtype)


def update_running(mean, var_sum, count: int, momentum: float, running_mean, running_var):
    """The running statistics after a batch (new arrays): momentum * batch + (1 - momentum) *
    running, the variance unbiased (var_sum / (count - 1)) and mixed in a double."""
    dt = mean.dtype
    m = dt.type(momentum)
    new_mean = None if running_mean is None else (
        m * mean + (dt.type(1) - m) * running_mean).astype(dt)
    new_var = None
    if running_var is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            unbiased = (var_sum / dt.type(count - 1)).astype(dt).astype(np.float64)
        new_var = (np.float64(m) * unbiased +
                   ((dt.type(1) - m) * running_var).astype(dt).astype(np.float64)).astype(dt)
    return new_mean, new_var


def _channel(v: np.ndarray, ndim: int) -> np.ndarray:
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def transform(x: np.ndarray, weight, bias, mean: np.ndarray, invstd: np.ndarray) -> np.ndarray:
    """y = fma(x, alpha, beta): alpha = invstd * weight, beta = fma(-mean, alpha, bias)."""
    dt = x.dtype
    w = np.ones(x.shape[1], dt) if weight is None else weight.astype(dt)
    b = np.zeros(x.shape[1], dt) if bias is None else bias.astype(dt)
    alpha = (invstd * w).astype(dt)
    beta = _fma(-mean, alpha, b, dt)
    shape = x.shape
    return _fma(x, np.broadcast_to(_channel(alpha, x.ndim), shape),
                np.broadcast_to(_channel(beta, x.ndim), shape), dt)


def _avx2_reduce_all(v: np.ndarray, lanes: int) -> np.ndarray:
    """vec::reduce_all(+) along the last axis with vectors of ``lanes``: vector after vector
    from the first, the last part-vector into its first lanes, then the lanes (float: the
    shuffle tree of VecReduceAllSIMD; double: one after another)."""
    n = v.shape[-1]
    if n < lanes:
        return np.add.accumulate(v, axis=-1)[..., -1]
    full = n - n % lanes
    acc = np.add.reduce(v[..., :full].reshape(*v.shape[:-1], full // lanes, lanes), axis=-2)
    if n > full:
        acc[..., :n - full] = acc[..., :n - full] + v[..., full:]
    return _lanes(acc)


def _lanes(acc: np.ndarray) -> np.ndarray:
    lanes = acc.shape[-1]
    if acc.dtype != _F32:
        r = acc[..., 0]
        for j in range(1, lanes):
            r = r + acc[..., j]
        return r
    step = lanes // 2
    while step:
        acc = acc + acc[..., np.arange(lanes) ^ step]
        step //= 2
    return acc[..., 0]


def _plane_sums(dy: np.ndarray, xm: np.ndarray) -> tuple:
    """Per channel: the sums over samples, in a double, of each plane's reduce_all(dy) and
    map2_reduce_all((x - mean) * dy) (planes (N, C, S), S > 1): the products added vector
    after vector, the last part-vector's by a fused multiply-add."""
    dt = dy.dtype
    lanes = 32 // dt.itemsize
    s = dy.shape[2]
    sums = _avx2_reduce_all(dy, lanes)  # (N, C)
    prod = (xm * dy).astype(dt)
    if s < lanes:
        dots = np.add.accumulate(prod, axis=-1)[..., -1]
    else:
        full = s - s % lanes
        acc = prod[..., :lanes].copy()
        for k in range(lanes, full, lanes):
            acc = (acc + prod[..., k:k + lanes]).astype(dt)
        if s > full:
            tail = s - full
            acc[..., :tail] = _fma(xm[..., full:], dy[..., full:], acc[..., :tail], dt)
        dots = _lanes(acc)
    return (np.add.accumulate(sums.astype(np.float64), axis=0)[-1],
            np.add.accumulate(dots.astype(np.float64), axis=0)[-1])


def _row_sums(dy: np.ndarray, xm: np.ndarray) -> tuple:
    """(N, C): each thread's rows into buffers of C, then the threads' buffers added."""
    dt = dy.dtype
    n, c = dy.shape
    sums = np.zeros((threads(), c), dt)
    dots = np.zeros((threads(), c), dt)
    for t, (b, e) in enumerate(_thread_rows(n)):
        s, d = np.zeros(c, dt), np.zeros(c, dt)
        for i in range(b, e):
            s = (s + dy[i]).astype(dt)
            d = _fma(xm[i], dy[i], d, dt)
        sums[t], dots[t] = s, d
    return np.add.accumulate(sums, axis=0)[-1], np.add.accumulate(dots, axis=0)[-1]


def backward(dy: np.ndarray, x: np.ndarray, weight, mean: np.ndarray, invstd: np.ndarray,
             train: bool, running_var=None, eps: float = 0.0) -> tuple:
    """(grad_input, grad_weight, grad_bias) of batch_norm_cpu_backward for a contiguous
    input; ``mean``/``invstd``: the batch's (train) or the running mean, invstd then being
    1 / sqrt(running_var + eps) in a double (evaluation)."""
    dt = x.dtype
    c = x.shape[1]
    w = np.ones(c, dt) if weight is None else weight.astype(dt)
    if not (type(dy) is np.ndarray and dy.flags.c_contiguous and dy.dtype == dt):
        return _generic_backward(dy, x, w, mean, invstd, train, running_var, eps)
    planes_x, planes_dy = _planes(x), _planes(dy)
    rows = planes_x.shape[2] == 1
    if not train:
        invstd = (1.0 / np.sqrt(running_var.astype(np.float64) + eps)).astype(dt)
    xm = (planes_x - mean[None, :, None]).astype(dt)
    count = dt.type(x.size // c)
    ch = invstd[None, :, None]
    if rows:
        total, dotp = _row_sums(planes_dy[:, :, 0], xm[:, :, 0])
    else:
        total, dotp = _plane_sums(planes_dy, xm)
    if train:
        if rows:
            k = ((dotp * invstd).astype(dt) * invstd / count).astype(dt)
            grad_mean = (total / count).astype(dt)
        else:  # (the sums are doubles: k from the dot product in the input's type)
            k = ((dotp.astype(dt) * invstd).astype(dt) * invstd / count).astype(dt)
            grad_mean = (total / float(count)).astype(dt)
        centred = (planes_dy - grad_mean[None, :, None]).astype(dt)
        kk = np.broadcast_to(k[None, :, None], xm.shape)
        dx = _fma(-xm, kk, centred, dt)
        if rows:  # (the vectors of 8 floats or 4 doubles fused; the rest of the row not)
            full = c - c % (32 // dt.itemsize)
            dx[:, full:] = (centred[:, full:] - (xm[:, full:] * kk[:, full:]).astype(dt))
        dx = ((dx * ch).astype(dt) * w[None, :, None]).astype(dt)
    else:
        dx = ((planes_dy * ch).astype(dt) * w[None, :, None]).astype(dt)
    return (dx.reshape(x.shape), (dotp * (invstd if rows else invstd.astype(np.float64))).astype(dt),
            total.astype(dt))


def _generic_backward(dy, x, w, mean, invstd, train, running_var, eps) -> tuple:
    """batch_norm_backward_cpu_template's own loops, taken when the gradient is not
    contiguous (the expanded ones of a sum): the sum by at::sum over all dims but 1, the dot
    product in a double element after element, the rest in the input's type."""
    from .kernels_sum import torch_sum

    dt = x.dtype
    c = x.shape[1]
    dims = (0, *range(2, x.ndim))
    total = np.asarray(torch_sum(np.asarray(dy), dims, False), dt).reshape(c)
    planes_x = _planes(x)
    planes_dy = _planes(np.ascontiguousarray(np.broadcast_to(dy, x.shape), dt))
    if not train:
        invstd = (1.0 / np.sqrt(running_var.astype(np.float64) + eps)).astype(dt)
    xm = (planes_x - mean[None, :, None]).astype(dt)
    prod = (xm * planes_dy).astype(dt)
    dotp = _seq_double(prod.transpose(1, 0, 2).reshape(c, -1))
    ch = invstd[None, :, None]
    if train:
        count = dt.type(x.size // c)
        k = ((dotp.astype(dt) * invstd).astype(dt) * invstd / count).astype(dt)
        grad_mean = (total / count).astype(dt)
        gi = (xm * k[None, :, None]).astype(dt)
        dx = ((planes_dy - grad_mean[None, :, None]).astype(dt) - gi).astype(dt)
        dx = ((dx * ch).astype(dt) * w[None, :, None]).astype(dt)
    else:
        dx = ((planes_dy * ch).astype(dt) * w[None, :, None]).astype(dt)
    return dx.reshape(x.shape), (dotp * invstd.astype(np.float64)).astype(dt), total
