"""PyTorch's CPU sum and mean, bit for bit: the order in which ATen adds float32 and float64.

ATen's cascade_sum (aten/src/ATen/native/cpu/SumKernel.cpp) runs over a TensorIterator: the
dimensions reordered (reduced ones first, then by strides, the output's first) and
coalesced; a 2-D loop (kernels_sumloop.py) over the first two dims, the others counted
outside it. Above GRAIN_SIZE elements with more than one thread, a sum to one number is
split into one range per thread (two_pass_reduction) and other sums along their outermost
kept dimension (parallel_dim_reduction); torch's CPU mean is that sum divided by the count
(mean_out). Arrays numpy strides like torch's (views, broadcasts) are summed as torch sums
those; torch has no negative strides, so such arrays are summed as the copy torch's flip
makes."""

from __future__ import annotations

import os

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .kernels_sumloop import ILP, add_into, inner_vectorized, loop, vector_bytes
from .kernels_sumsmall import small_sum

GRAIN_SIZE = 32768  # at::internal::GRAIN_SIZE
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_THREADS: list[int] = []


def _physical_cores() -> int:
    cores, phys = set(), "0"
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "physical id":
                    phys = value.strip()
                elif key == "core id":
                    cores.add((phys, value.strip()))
    except OSError:
        pass
    return len(cores)


def threads() -> int:
    """at::get_num_threads() as torch starts: MKL_NUM_THREADS, else OMP_NUM_THREADS, else
    the physical cores (mkl_get_max_threads), no more than the CPUs this process may use."""
    if not _THREADS:
        n = 0
        for var in ("MKL_NUM_THREADS", "OMP_NUM_THREADS"):
            head = os.environ.get(var, "").split(",")[0].strip()
            if head.isdigit() and int(head) > 0:
                n = int(head)
                break
        if not n:
            try:
                usable = len(os.sched_getaffinity(0))
            except (AttributeError, OSError):
                usable = os.cpu_count() or 1
            n = min(_physical_cores() or usable, usable)
        _THREADS.append(max(1, n))
    return _THREADS[0]


def _shift(a: np.ndarray, stride: int, count: int) -> np.ndarray:
    """A view of a's memory starting count * stride bytes further on."""
    if not count or not stride:
        return a
    return as_strided(a, (count + 1,), (stride,))[count:]


def _view(base, shape, strides):
    """The iterator's operand as an array (dims ndim-1 .. 0: dim 0 last)."""
    return as_strided(base, tuple(reversed(shape)), tuple(reversed(strides)))


def _serial(xb, ob, shape, istr, ostr):
    """serial_for_each over a whole iterator: every 2-D loop at once, dims 2.. outside."""
    nd = len(shape)
    if nd == 1:
        shape, istr, ostr = shape + [1], istr + [0], ostr + [0]
    x = _view(xb, shape, istr)
    r, tail = loop(x, istr[0], istr[1], ostr[0], ostr[1])
    add_into(ob, r, list(reversed(ostr[2:])) + tail)


def _blocks(shape, begin, end):
    """DimCounter: the 2-D steps serial_for_each takes over [begin, end): (index, n0, n1)."""
    values, rest = [], begin
    for n in shape:
        values.append(rest % n)
        rest //= n
    offset = begin
    while offset < end:
        step0 = min(shape[0] - values[0], end - offset)
        step1 = 1
        if step0 == shape[0]:
            step1 = min(shape[1] - values[1], (end - offset) // shape[0])
        yield list(values), step0, step1
        offset += step0 * step1
        i, overflow = (1, step1) if step1 != 1 else (0, step0)
        while i < len(shape) and overflow:
            value = values[i] + overflow
            overflow = 0
            if value >= shape[i]:
                value -= shape[i]
                overflow = 1
            values[i] = value
            i += 1


def _range_sum(xb, shape, istr, begin, end, dtype):
    """What one thread of two_pass_reduction adds into its slot of the buffer (from zero):
    serial_for_each over [begin, end), 2-D step by 2-D step."""
    out = np.zeros(1, dtype)
    steps = [([begin], end - begin, 1)] if len(shape) == 1 else _blocks(shape, begin, end)
    for values, n0, n1 in steps:
        x = xb
        for v, s in zip(values, istr):
            x = _shift(x, s, v)
        part = np.zeros(1, dtype)
        s1 = istr[1] if len(shape) > 1 else 0
        r, tail = loop(as_strided(x, (n1, n0), (s1, istr[0])), istr[0], s1, 0, 0)
        add_into(part, r, tail)
        out += part
    return out[0]


def reorder(nd: int, should_swap) -> list[int]:
    """TensorIterator's reorder_dimensions: the dims, fastest first, insertion-sorted by
    ``should_swap(d0, d1)`` (1: swap, -1: keep and stop, 0: look further)."""
    perm = list(range(nd - 1, -1, -1))
    for i in range(1, nd):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def _iterator(a: np.ndarray, axes: tuple[int, ...], out: np.ndarray):
    """TensorIterator's reduction dims for sum(a, axes) into out (contiguous, kept dims):
    compute_strides, reorder_dimensions (reduced dims to the front, then ascending strides,
    the output's first), coalesce_dimensions. Shapes and byte strides, dim 0 fastest."""
    nd = a.ndim
    ostr_t, k = [], 0
    for d in range(nd):
        if d in axes:
            ostr_t.append(0)
        else:
            ostr_t.append(out.strides[k])
            k += 1
    strides = (ostr_t, list(a.strides))
    sizes = list(a.shape)

    def should_swap(d0, d1):
        for arg, st in enumerate(strides):
            s0, s1 = st[d0], st[d1]
            if arg == 0 and (s0 == 0) != (s1 == 0):
                return 1 if s1 == 0 else -1
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if sizes[d0] > sizes[d1]:
                return 1
        return 0

    perm = reorder(nd, should_swap) if nd > 1 else [0]
    shape = [sizes[p] for p in perm]
    st = [[s[p] for p in perm] for s in strides]
    prev = 0
    for d in range(1, len(shape)):
        n0, n1 = shape[prev], shape[d]
        if n0 == 1 or n1 == 1 or all(n0 * s[prev] == s[d] for s in st):
            if n0 == 1:
                for s in st:
                    s[prev] = s[d]
            shape[prev] *= n1
        else:
            prev += 1
            if prev != d:
                for s in st:
                    s[prev] = s[d]
                shape[prev] = shape[d]
    n = prev + 1 if shape else 0
    return shape[:n], st[1][:n], st[0][:n]


def torch_sum(a, dim=None, keepdim: bool = False):
    """torch.sum(a, dim, keepdim) for a float32/float64 array, in ATen's CPU order of
    additions; other arrays (ints, bools, dual numbers, formulas) by np.sum. ``dim`` is
    None (everything) or a tuple of non-negative axes. A 0-d result is a numpy scalar, as
    np.sum gives."""
    if type(a) is not np.ndarray or a.dtype not in FLOATS:
        if type(a) is np.ndarray and a.dtype.kind in "biu":  # (PyTorch's: int64, uint8 too)
            return np.sum(a, axis=dim, keepdims=keepdim, dtype=np.int64)
        return np.sum(a, axis=dim, keepdims=keepdim)
    if dim is None and not keepdim and 32 <= a.size < GRAIN_SIZE and a.flags.c_contiguous:
        r = small_sum(a.reshape(-1))  # (the sum that repeats: straight to its kernel)
        if r is not None:
            return r
    nd = a.ndim
    axes = tuple(range(nd)) if dim is None else tuple(sorted(set(
        (dim,) if isinstance(dim, int) else dim)))
    if len(axes) == nd and a.flags.c_contiguous and a.size:
        r = _flat(a.reshape(-1))  # (the common case: the iterator is one contiguous dim)
        return np.reshape(r, (1,) * nd) if keepdim else r
    kept = tuple(n for d, n in enumerate(a.shape) if d not in axes)
    shape_out = tuple(1 if d in axes else n for d, n in enumerate(a.shape)) if keepdim \
        else kept
    out = np.zeros(kept, a.dtype)
    if a.size and nd:
        if any(s < 0 for s in a.strides):
            a = np.ascontiguousarray(a)  # (PyTorch has no negative strides: its flip copies)
        shape, istr, ostr = _iterator(a, axes, out)
        nthreads = threads()
        if a.size < GRAIN_SIZE or nthreads == 1:
            _serial(a, out, shape, istr, ostr)
        elif out.size == 1:
            _two_pass(a, out, shape, istr, nthreads)
        else:
            _parallel_dim(a, out, shape, istr, ostr, nthreads)
    elif a.size:
        out = out + a
    out = out.reshape(shape_out)
    return out[()] if not out.ndim else out


def torch_mean(a, dim=None, keepdim: bool = False):
    """torch.mean on CPU (mean_out): the sum above, divided by the count in the dtype."""
    if type(a) is not np.ndarray or a.dtype not in FLOATS:
        return np.mean(a, axis=dim, keepdims=keepdim)
    axes = range(a.ndim) if dim is None else (dim,) if isinstance(dim, int) else dim
    count = 1
    for d in axes:
        count *= a.shape[d]
    return mean_of(torch_sum(a, dim, keepdim), count)


def mean_of(total, count: int):
    """mean_out's last step: a sum (in PyTorch's order) divided by the count in its dtype."""
    return total / total.dtype.type(count)


def _flat(x: np.ndarray):
    """The sum of a contiguous 1-D array: one row (vectorised when a vector long), or above
    GRAIN_SIZE one range per thread (two_pass_reduction), their sums then summed."""
    width = vector_bytes() // x.itemsize
    zero = x.dtype.type(0)
    if x.size >= GRAIN_SIZE and threads() > 1:
        buffer = np.zeros(threads(), x.dtype)
        for t, (begin, end) in enumerate(split_ranges(x.size, threads(), GRAIN_SIZE)):
            buffer[t] = inner_vectorized(x[begin:end], width) + zero
        return _flat(buffer)
    if x.size >= ILP * width:
        r = small_sum(x)
        if r is not None:
            return r
        return inner_vectorized(x, width) + zero
    if x.size >= width:
        return inner_vectorized(x, width) + zero
    r, _ = loop(x.reshape(1, -1), x.itemsize, 0, 0, 0)
    return r[0] + zero


def split_ranges(n: int, nthreads: int, grain: int):
    """at::parallel_for's ranges under OpenMP: min(threads, ceil(n/grain)) equal chunks."""
    tasks = min(nthreads, -(-n // grain))
    chunk = -(-n // tasks)
    return [(t * chunk, min(n, (t + 1) * chunk)) for t in range(tasks) if t * chunk < n]


def _two_pass(a, out, shape, istr, nthreads):
    """two_pass_reduction: one buffer slot per thread (zero), each summing its range of the
    iterator; then the buffer summed into the output as a reduction of its own."""
    buffer = np.zeros(nthreads, a.dtype)
    for t, (begin, end) in enumerate(split_ranges(a.size, nthreads, GRAIN_SIZE)):
        buffer[t] = _range_sum(a, shape, istr, begin, end, a.dtype)
    flat = out.reshape(-1)
    _serial(buffer, flat, [nthreads], [buffer.itemsize], [0])


def _parallel_dim(a, out, shape, istr, ostr, nthreads):
    """parallel_dim_reduction: the iterator narrowed along one kept dim, one part per thread
    (rounded to 128 bytes of columns where they are adjacent in memory), each run serially."""
    nd = len(shape)
    dim = best = nd - 1
    d = nd - 1
    while d >= 0 and not (ostr[d] == 0 and shape[d] > 1):
        if shape[d] >= nthreads:
            best = d
            break
        if shape[d] > shape[best]:
            best = d
        d -= 1
    dim = best
    cols = shape[dim]
    round_to = 128 // a.itemsize if istr[dim] == a.itemsize else 1
    parts = split_ranges(cols, nthreads, 1) if cols > 1 else [(0, cols)]
    for begin, end in parts:
        begin -= begin % round_to
        if end != cols:
            end -= end % round_to
        if begin == end:
            continue
        sub = list(shape)
        sub[dim] = end - begin
        _serial(_shift(a, istr[dim], begin), _shift(out.reshape(-1), ostr[dim], begin),
                sub, istr, ostr)
