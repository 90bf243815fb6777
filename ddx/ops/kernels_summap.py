"""Sums of values made range by range (a large array's squares, a replay's blocks) in
PyTorch's order: the same cascade as kernels_sum.torch_sum, its rows made slice by slice."""

from __future__ import annotations

import numpy as np

from .kernels_sum import GRAIN_SIZE, split_ranges, threads, torch_sum
from .kernels_sumloop import ILP, chain, level_step, levels, vector_bytes


def sum_mapped(x: np.ndarray, fn, chunk: int, run_all=None):
    """torch_sum(fn(x)) for a C-contiguous float array and an elementwise fn, bit for bit,
    with fn applied `chunk` elements or so at a time (no array of fn(x) when x is large).
    ``run_all`` runs a list of thunks (on threads) and returns their results in order."""
    flat = x.reshape(-1)
    return sum_ranges(flat.size, flat.dtype, lambda lo, hi: fn(flat[lo:hi]), chunk, run_all)


def sum_ranges(n: int, dtype, fn, chunk: int, run_all=None):
    """sum_mapped by element ranges: the torch_sum of the n values that ``fn(lo, hi)`` gives
    for [lo, hi) (an array of hi - lo ``dtype`` numbers), bit for bit; fn is called once for
    each range of a partition of [0, n), ``chunk`` elements or so at a time, on threads
    (``run_all``) when the sum splits between them."""
    dtype = np.dtype(dtype)
    if n < GRAIN_SIZE or n <= chunk:
        return torch_sum(np.asarray(fn(0, n), dtype))
    nthreads = threads()
    if nthreads == 1:
        return _mapped_row(0, n, dtype, fn, chunk) + dtype.type(0)
    buffer = np.zeros(nthreads, dtype)
    thunks = [lambda b=b, e=e: _mapped_row(b, e, dtype, fn, chunk)
              for b, e in split_ranges(n, nthreads, GRAIN_SIZE)]
    for t, s in enumerate(run_all(thunks) if run_all else [f() for f in thunks]):
        buffer[t] = s
    return torch_sum(buffer)


def _mapped_row(begin: int, end: int, dtype, fn, chunk: int):
    """vectorized_inner_sum of fn over [begin, end) (at least a vector long), its whole steps
    of rows (multi_row_sum's level 1) made range by range, the rest from fn of the rest."""
    width = vector_bytes() // dtype.itemsize
    lanes = ILP * width
    v = (end - begin) // width
    q = v // ILP
    step = level_step(q)
    block = step * lanes
    chunks = q // step
    per = max(1, chunk // block)
    sums = [chain(fn(begin + i * block, begin + min(i + per, chunks) * block)
                  .reshape(-1, step, lanes)) for i in range(0, chunks, per)]
    rest = fn(begin + chunks * block, end)
    rows = (q - chunks * step) * lanes
    total = chain(rest[:rows].reshape(-1, lanes))
    parts = levels(total, np.concatenate(sums), step) if chunks else total
    parts = parts.reshape(ILP, width)
    vecs = rest[rows:rows + (v - ILP * q) * width].reshape(-1, width)
    vec = chain(np.concatenate([parts[:1], vecs, parts[1:]]))
    return np.add.accumulate(np.concatenate([rest[rows + len(vecs) * width:], vec]))[-1]
