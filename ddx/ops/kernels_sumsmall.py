"""A whole sum of a small contiguous float row in PyTorch's order, in few numpy calls.

kernels_sumloop.inner_vectorized for one row of at least 4 vectors and below GRAIN_SIZE
elements, the sum that repeats in a training loop or a replay (its fixed cost matters there):
multi_row_sum's levels on the (rows, 4 vectors) partial sums by numpy, then row_sum's and the
vector's last additions, lane by lane: on Python floats for float64 (IEEE doubles: the same
bits), on numpy rows of one vector for float32."""

from __future__ import annotations

from math import isfinite

import numpy as np

from .kernels_sumloop import vector_bytes

_F64 = np.dtype(np.float64)
_REDUCE = np.add.reduce


def _parts(rows: np.ndarray) -> np.ndarray:
    """multi_row_sum of rows (q, lanes), q < 2**19: the step is 16 rows, and level 2 takes
    groups of 16 steps (q < 4096 here, so level 3 holds nothing)."""
    q, lanes = rows.shape
    chunks = q >> 4
    if not chunks:
        return _REDUCE(rows, axis=0)
    whole = chunks << 4
    total = _REDUCE(rows[whole:], axis=0)
    block = rows[:whole].reshape(chunks, 16, lanes)
    # (einsum adds the same way, row after row, with less overhead per row of lanes)
    sums = np.einsum("cjl->cl", block) if chunks >= 8 else _REDUCE(block, axis=1)
    if chunks >= 16:
        groups = chunks >> 4
        total = total + _REDUCE(sums[groups << 4:], axis=0)
        sums = _REDUCE(sums[:groups << 4].reshape(groups, 16, lanes), axis=1)
    return total + _REDUCE(sums, axis=0)


def small_sum(x: np.ndarray):
    """inner_vectorized(x, width) + 0 for a contiguous float32/float64 row x of 4 vectors
    (of 32 bytes) up to GRAIN_SIZE elements; None when the sum is not finite (the general
    path then raises the floating-point event: einsum raises no flags)."""
    n = x.size
    if vector_bytes() != 32:  # (the lanes below are x86's: NEON's vectors are 16 bytes)
        return None
    if x.dtype is _F64:
        return _small64(x, n)
    v = n >> 3
    q = v >> 2
    acc = _parts(x[:q << 5].reshape(q, 32)).reshape(4, 8)
    a = acc[0]
    for t in x[q << 5:v << 3].reshape(-1, 8):  # row_sum: vectors past the last 4 into acc 0
        a = a + t
    a = a + acc[1] + acc[2] + acc[3]
    s = np.add.accumulate(np.concatenate([x[v << 3:], a]))[-1] + np.float32(0)
    return s if isfinite(s) else None


def _small64(x: np.ndarray, n: int):
    v = n >> 2
    q = v >> 2
    parts = _parts(x[:q << 4].reshape(q, 16)).tolist()
    a0, a1, a2, a3 = parts[:4]
    for k in range(q << 4, v << 2, 4):  # row_sum: the vectors past the last 4 go into acc 0
        t0, t1, t2, t3 = x[k:k + 4].tolist()
        a0 += t0
        a1 += t1
        a2 += t2
        a3 += t3
    a0 = a0 + parts[4] + parts[8] + parts[12]
    a1 = a1 + parts[5] + parts[9] + parts[13]
    a2 = a2 + parts[6] + parts[10] + parts[14]
    a3 = a3 + parts[7] + parts[11] + parts[15]
    tail = x[v << 2:].tolist()  # the elements past the last vector, from the first on
    if tail:
        s = tail[0]
        for t in tail[1:]:
            s += t
        s = s + a0 + a1 + a2 + a3
    else:
        s = a0 + a1 + a2 + a3
    s += 0.0
    return _F64.type(s) if isfinite(s) else None
