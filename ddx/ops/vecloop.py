"""ATen's cpu_kernel_vec over a binary float kernel: the vector function on the whole vectors
(two AVX-512 vectors a step: 32 floats or 16 doubles) of each 1-D loop, the scalar function on
the elements left over. A 1-D loop is one thread's range of a contiguous operand pair (or of
one operand and a number), else one row of the last dimension (a broadcast)."""

from __future__ import annotations

import numpy as np

_WIDTH = {np.dtype(np.float32): 32, np.dtype(np.float64): 16}
_BLOCK = 65536  # (elements per call of the vector function: its temporaries stay in cache)


def thread_ranges(n: int) -> list:
    """at::parallel_for(0, n, GRAIN_SIZE)'s ranges under OpenMP, one per thread."""
    from .kernels_sum import GRAIN_SIZE, split_ranges, threads

    if n < GRAIN_SIZE or threads() == 1:
        return [(0, n)]
    return split_ranges(n, threads(), GRAIN_SIZE)


def _rows(n: int, shape: tuple, whole: bool) -> list:
    if whole:
        return thread_ranges(n)
    last = shape[-1] if shape else 1
    return [(k, k + last) for k in range(0, n, last)] if last else []


def binary_loop(a: np.ndarray, b, vector, scalar, number_b: bool = False) -> np.ndarray:
    """``vector(x, y)`` on the bodies, ``scalar(u, v)`` (Python floats) on the tails, for a
    float32/float64 array ``a`` and ``b`` a number (``number_b``, or 0-d) or an array that
    broadcasts with ``a``; the result in a's dtype."""
    dtype = a.dtype
    width = _WIDTH[dtype]
    if number_b or np.ndim(b) == 0:
        shape = a.shape
        flat_a = np.ascontiguousarray(a).reshape(-1)
        flat_b = None
        y = float(b) if number_b else b
        whole = True
    else:
        shape = np.broadcast_shapes(a.shape, np.shape(b))
        whole = np.shape(b) == a.shape
        flat_a = np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1)
        flat_b = np.ascontiguousarray(np.broadcast_to(b, shape), dtype).reshape(-1)
        y = None
    n = flat_a.size
    out = np.empty(n, dtype)
    for begin, end in _rows(n, shape, whole):
        body = begin + (end - begin) // width * width
        for at in range(begin, body, _BLOCK):
            stop = min(at + _BLOCK, body)
            out[at:stop] = vector(flat_a[at:stop], y if flat_b is None else flat_b[at:stop])
        if end > body:
            xs = flat_a[body:end].tolist()
            ys = [float(y)] * len(xs) if flat_b is None else flat_b[body:end].tolist()
            out[body:end] = [scalar(u, v) for u, v in zip(xs, ys)]
    return out.reshape(shape)
