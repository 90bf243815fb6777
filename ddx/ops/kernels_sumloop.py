"""The 2-D loop of ATen's cascade_sum (aten/src/ATen/native/cpu/SumKernel.cpp), in numpy;
and cascade_total, the other cascade ATen writes (nll_loss's sum over its batch).

A contiguous reduced row is read as vectors of 32 bytes (see vector_bytes): row_sum of
vectors, 4 at a time, then the elements past the last vector, then the vector's lanes. A
contiguous kept dimension is read as columns of 4 vectors (multi_row_sum); anything else as
scalars. multi_row_sum adds rows one after another into four levels of accumulators,
flushing a level every 2**level_power rows. The accumulator is the dtype itself (acc_type
of float is float on CPU).

The additions are vectorised over lanes: reductions along a middle axis of an array whose
last axis holds independent, contiguous lanes, which numpy's add.reduce and einsum add one
row after another (numpy adds pairwise only along an innermost reduced axis, and none is
here), and np.add.accumulate, which is sequential by definition."""

from __future__ import annotations

import math
import platform

import numpy as np
from numpy.lib.stride_tricks import as_strided

ILP = 4  # row_sum's ilp_factor, and vectorized/scalar_outer_sum's nrows
LEVELS = 4  # multi_row_sum's num_levels
_WIDTH: list[int] = []


def vector_bytes() -> int:
    """Vectorized<T>'s width in the sum kernel: 32 bytes on x86 (8 floats, 4 doubles). Torch
    picks AVX512 on a CPU that has it, but sum_stub has no AVX512 kernel, so DispatchStub
    runs the AVX2 one, and the default kernels' vectors are 32 bytes too (checked against
    torch 2.13 under ATEN_CPU_CAPABILITY=avx512, avx2 and default). ARM's NEON vectors hold
    16 bytes (not checked here)."""
    if not _WIDTH:
        _WIDTH.append(16 if platform.machine().lower() in ("aarch64", "arm64") else 32)
    return _WIDTH[0]


def _last(x: np.ndarray) -> np.ndarray:
    """x summed along its last axis one after another, from the first element."""
    return np.add.accumulate(x, axis=-1)[..., -1]


def chain(x: np.ndarray) -> np.ndarray:
    """x (..., n, lanes) summed over its rows one after another: ((x0 + x1) + x2) + ..."""
    n = x.shape[-2]
    if n == 0:
        return np.zeros(x.shape[:-2] + x.shape[-1:], x.dtype)
    if n == 1:
        return x[..., 0, :]
    if n <= 3:
        acc = x[..., 0, :] + x[..., 1, :]
        return acc + x[..., 2, :] if n == 3 else acc
    if x.shape[-1] == 1:  # (one lane: numpy's reduce would add along the rows pairwise)
        return np.add.accumulate(x, axis=-2)[..., -1, :]
    if x.strides[-1] != x.itemsize or 0 in x.strides:
        x = np.ascontiguousarray(x)  # (lanes innermost in memory: numpy adds row after row)
    if x.size >= 4096:  # (einsum's loop over contiguous lanes: the same additions, faster)
        r = np.einsum("...jk->...k", x)
        if np.isfinite(r).all():
            return r
        # (einsum raises no floating-point flags: add.reduce again, for the overflow event)
    return np.add.reduce(x, axis=-2)


def _ceil_log2(n: int) -> int:
    return 1 if n <= 2 else (n - 1).bit_length()


def multi_row(x: np.ndarray) -> np.ndarray:
    """multi_row_sum: x (..., size, lanes) over its rows, every lane apart. Rows go one after
    another into acc[0]; every `step` rows acc[0] is added into acc[1], every step**2 acc[1]
    into acc[2], every step**3 acc[2] into acc[3]; the rows left over after the last whole
    step go into acc[0], and the result is ((acc[0] + acc[1]) + acc[2]) + acc[3]."""
    size = x.shape[-2]
    lead, lanes = x.shape[:-2], x.shape[-1]
    step = level_step(size)
    chunks = size // step
    total = chain(x[..., chunks * step:, :])
    if not chunks:
        return total
    sums = chain(x[..., :chunks * step, :].reshape(lead + (chunks, step, lanes)))
    return levels(total, sums, step)


def level_step(size: int) -> int:
    """multi_row_sum's rows per flush of acc[0] for `size` rows (a power of two, 16 or more)."""
    return 1 << max(4, _ceil_log2(size) // LEVELS)


def levels(total: np.ndarray, sums: np.ndarray, step: int) -> np.ndarray:
    """multi_row_sum's end from acc[0] (`total`) and the sums of the whole steps of rows,
    (..., chunks, lanes): acc[1], acc[2] and acc[3] as they fill and flush, then added."""
    lead, lanes = sums.shape[:-2], sums.shape[-1]
    for _ in range(LEVELS - 2):  # acc[1], acc[2]: what their last, partial group holds
        groups = sums.shape[-2] // step
        if not groups:  # (the levels above hold zeros: adding them changes nothing)
            return total + chain(sums)
        total = total + chain(sums[..., groups * step:, :])
        sums = chain(sums[..., :groups * step, :].reshape(lead + (groups, step, lanes)))
    return total + chain(sums)


def row(x: np.ndarray) -> np.ndarray:
    """row_sum: x (..., size, lanes) as (-1, 4) rows of partial sums (multi_row_sum), then the
    last size % 4 elements into the first partial sum, then the other three into it."""
    size = x.shape[-2]
    lead, lanes = x.shape[:-2], x.shape[-1]
    q = size // ILP
    if not q:
        return chain(x)  # (the partial sums are zeros)
    parts = multi_row(x[..., :q * ILP, :].reshape(lead + (q, ILP * lanes)))
    parts = parts.reshape(lead + (ILP, lanes))
    if size == q * ILP:
        return chain(parts)
    return chain(np.concatenate([parts[..., :1, :], x[..., q * ILP:, :], parts[..., 1:, :]],
                                axis=-2))


def inner_vectorized(x: np.ndarray, width: int) -> np.ndarray:
    """vectorized_inner_sum: rows x (..., n) contiguous: row_sum over whole vectors; then from
    zero the elements past them one by one, then the vector's lanes in order."""
    n = x.shape[-1]
    v = n // width
    vec = row(x[..., :v * width].reshape(x.shape[:-1] + (v, width)))
    if n > v * width:
        vec = np.concatenate([x[..., v * width:], vec], axis=-1)
    return _last(vec)


def _outer(y: np.ndarray, group: int) -> np.ndarray:
    """vectorized/scalar_outer_sum: y (..., rows, cols): whole groups of `group` columns by
    multi_row_sum, the columns left by row_sum (row_sum of vectors adds each lane as row_sum
    of scalars would)."""
    cols = y.shape[-1]
    m = cols // group * group
    if m == cols:
        return multi_row(y)
    if not m:
        return row(y)
    return np.concatenate([multi_row(y[..., :m]), row(y[..., m:])], axis=-1)


def loop(x, s0, s1, o0, o1):
    """One call of cascade_sum's 2-D loop on x (..., size1, size0) with input strides s0, s1
    and output strides o0, o1 (bytes): what it adds into the output, as (values, the output
    strides of their last axes)."""
    if o0 != 0 and o1 == 0:  # (move the reduction to be the first dim)
        x, s0, s1, o0, o1 = np.swapaxes(x, -1, -2), s1, s0, o1, o0
    if o0 != 0:  # not a reduction: out += in, element by element
        return x, [o1, o0]
    size1, size0 = x.shape[-2], x.shape[-1]
    item = x.itemsize
    width = vector_bytes() // item
    if s0 == item and size0 >= width:
        r = inner_vectorized(x, width)
    elif s1 == item and size1 >= width:
        r = _outer(np.swapaxes(x, -1, -2), ILP * width)
    elif s0 < s1:
        r = row(x[..., None])[..., 0]
    else:
        r = _outer(np.swapaxes(x, -1, -2), ILP)
    return r, [o1]


def add_into(out, r, ostrides) -> None:
    """out (zeros, seen through ostrides) += r's values in iteration order: the values that
    fall on one output element (output stride 0) are added one after another, in C order."""
    red = [k for k, o in enumerate(ostrides) if o == 0]
    kept = [k for k, o in enumerate(ostrides) if o != 0]
    kshape = tuple(r.shape[k] for k in kept)
    count = math.prod(r.shape[k] for k in red)
    rt = np.transpose(r, red + kept).reshape((count, math.prod(kshape)))
    if count > 3:
        rt = np.ascontiguousarray(rt)  # (the lanes innermost, so numpy adds row after row)
    view = as_strided(out, kshape, tuple(ostrides[k] for k in kept))
    view += chain(rt).reshape(kshape)


def cascade_total(values: np.ndarray, index: np.ndarray):
    """ATen's nll_loss sum over the batch (LossNLL.cpp, LossNLL2d.cpp): the values (in the
    order of their flat ``index``, the ignored left out) added into level 0; after a value whose
    index is a multiple of 16, level 0 goes into level 1 (and level j into j + 1 while the index
    is a multiple of 16 ** (j + 1)), each level then starting again from 0; at the end the 8
    levels added from the first. In the values' type."""
    dt = values.dtype.type
    levels = [dt(0)] * 8
    if values.size == 0:
        return dt(0)
    flush = np.flatnonzero(index % 16 == 0)
    start = 0
    ends = list(flush + 1)
    groups = []  # (level 0's sum, the index that flushed it)
    for end in ends:
        groups.append((np.add.accumulate(values[start:end])[-1], int(index[end - 1])))
        start = end
    for total, b in groups:
        levels[0] = dt(levels[0] + total)
        for j in range(7):
            if b & (15 << (4 * j)):
                break
            levels[j + 1] = dt(levels[j + 1] + levels[j])
            levels[j] = dt(0)
    if start < values.size:
        levels[0] = dt(levels[0] + np.add.accumulate(values[start:])[-1])
    out = dt(0)
    for v in levels:
        out = dt(out + v)
    return out
