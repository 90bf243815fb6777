"""PyTorch's CPU sum, bit for bit: the order in which ATen adds a float32 or float64 sum.

ATen's cascade_sum (aten/src/ATen/native/cpu/SumKernel.cpp) runs over a TensorIterator: the
dimensions reordered (reduced ones first, then by strides) and coalesced, a 2-D loop over
the first two and the rest counted outside it. In the loop a contiguous reduced row is read
as vectors of 32 bytes (see vector_bytes): row_sum of vectors, 4 at a time, then the tail,
then the lanes; a contiguous kept dimension as columns of 4 vectors (multi_row_sum);
anything else as scalars. multi_row_sum adds rows one after another into four levels of
accumulators, flushing a level every 2**level_power rows. Above GRAIN_SIZE elements with
more than one thread, a sum to one number is split into one range per thread
(two_pass_reduction) and other sums along their outermost kept dimension
(parallel_dim_reduction). The accumulator is the dtype itself (acc_type of float is float).

Here the same additions are made with numpy, vectorised: reductions along a middle axis of
an array whose last axis holds independent lanes, which numpy adds one row after another
(only an innermost reduced axis is summed pairwise, and none is here)."""

from __future__ import annotations

import math
import os
import platform

import numpy as np
from numpy.lib.stride_tricks import as_strided

GRAIN_SIZE = 32768  # at::internal::GRAIN_SIZE
ILP = 4  # row_sum's ilp_factor, and vectorized/scalar_outer_sum's nrows
LEVELS = 4  # multi_row_sum's num_levels
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_CACHE: dict[str, int] = {}


def vector_bytes() -> int:
    """Vectorized<T>'s width in the sum kernel: 32 bytes on x86 (8 floats, 4 doubles). Torch
    picks AVX512 on a CPU that has it, but sum_stub has no AVX512 kernel, so DispatchStub
    runs the AVX2 one, and the default kernels' vectors are 32 bytes too (checked against
    torch 2.13 under ATEN_CPU_CAPABILITY=avx512, avx2 and default). ARM's NEON vectors hold
    16 bytes."""
    if "width" not in _CACHE:
        _CACHE["width"] = 16 if platform.machine().lower() in ("aarch64", "arm64") else 32
    return _CACHE["width"]


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
    if "threads" not in _CACHE:
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
        _CACHE["threads"] = max(1, n)
    return _CACHE["threads"]


# --- the additions ------------------------------------------------------------------------------
def _chain(x: np.ndarray) -> np.ndarray:
    """x (..., n, lanes) summed over its rows one after another: ((x0 + x1) + x2) + ..."""
    n = x.shape[-2]
    if n == 0:
        return np.zeros(x.shape[:-2] + x.shape[-1:], x.dtype)
    if n <= 8:
        acc = x[..., 0, :]
        for k in range(1, n):
            acc = acc + x[..., k, :]
        return acc
    if math.prod(x.shape[:-2]) * x.shape[-1] == 1:  # (one lane: numpy would add pairwise)
        return np.add.accumulate(x, axis=-2)[..., -1, :]
    return np.add.reduce(x, axis=-2)


def _ceil_log2(n: int) -> int:
    return 1 if n <= 2 else (n - 1).bit_length()


def _multi_row(x: np.ndarray) -> np.ndarray:
    """multi_row_sum: x (..., size, lanes) over its rows, every lane apart. Rows go one after
    another into acc[0]; every `step` rows acc[0] is added into acc[1], every step**2 acc[1]
    into acc[2], every step**3 acc[2] into acc[3]; the rows left over after the last whole
    step go into acc[0], and the result is ((acc[0] + acc[1]) + acc[2]) + acc[3]."""
    size = x.shape[-2]
    lead, lanes = x.shape[:-2], x.shape[-1]
    step = 1 << max(4, _ceil_log2(size) // LEVELS)
    chunks = size // step
    total = _chain(x[..., chunks * step:, :])
    if not chunks:
        return total
    sums = _chain(x[..., :chunks * step, :].reshape(lead + (chunks, step, lanes)))
    for _ in range(LEVELS - 2):  # acc[1], acc[2]: what their last, partial group holds
        groups = sums.shape[-2] // step
        total = total + _chain(sums[..., groups * step:, :])
        sums = _chain(sums[..., :groups * step, :].reshape(lead + (groups, step, lanes)))
    return total + _chain(sums)


def _row(x: np.ndarray) -> np.ndarray:
    """row_sum: x (..., size, lanes) as (-1, 4) rows of partial sums (multi_row_sum), then the
    last size % 4 elements into the first partial sum, then the other three into it."""
    size = x.shape[-2]
    lead, lanes = x.shape[:-2], x.shape[-1]
    q = size // ILP
    if q:
        parts = _multi_row(x[..., :q * ILP, :].reshape(lead + (q, ILP * lanes)))
        parts = parts.reshape(lead + (ILP, lanes))
        acc = parts[..., 0, :]
    else:
        acc = np.zeros(lead + (lanes,), x.dtype)
    for i in range(q * ILP, size):
        acc = acc + x[..., i, :]
    if q:
        for k in range(1, ILP):
            acc = acc + parts[..., k, :]
    return acc


def _inner_vectorized(x: np.ndarray, width: int) -> np.ndarray:
    """vectorized_inner_sum: rows x (..., n) contiguous: row_sum over whole vectors, then the
    elements past them one by one from zero, then the vector's lanes in order."""
    n = x.shape[-1]
    v = n // width
    vec = _row(x[..., :v * width].reshape(x.shape[:-1] + (v, width)))
    acc = np.zeros(x.shape[:-1], x.dtype)
    for k in range(v * width, n):
        acc = acc + x[..., k]
    for k in range(width):
        acc = acc + vec[..., k]
    return acc


def _outer(y: np.ndarray, group: int) -> np.ndarray:
    """vectorized/scalar_outer_sum: y (..., rows, cols): whole groups of `group` columns by
    multi_row_sum, the columns left by row_sum (row_sum of vectors adds each lane as row_sum
    of scalars would)."""
    cols = y.shape[-1]
    m = cols // group * group
    if m == cols:
        return _multi_row(y)
    if not m:
        return _row(y)
    return np.concatenate([_multi_row(y[..., :m]), _row(y[..., m:])], axis=-1)


def _loop(x, s0, s1, o0, o1):
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
        r = _inner_vectorized(x, width)
    elif s1 == item and size1 >= width:
        r = _outer(np.swapaxes(x, -1, -2), ILP * width)
    elif s0 < s1:
        r = _row(x[..., None])[..., 0]
    else:
        r = _outer(np.swapaxes(x, -1, -2), ILP)
    return r, [o1]


def _add_into(out, r, ostrides):
    """out (zeros, through a strided view) += r's values in iteration order: the values that
    fall on one output element (output stride 0) are added one after another, in C order."""
    red = [k for k, o in enumerate(ostrides) if o == 0]
    kept = [k for k, o in enumerate(ostrides) if o != 0]
    kshape = tuple(r.shape[k] for k in kept)
    count = math.prod(r.shape[k] for k in red)
    rt = np.transpose(r, red + kept).reshape((count, math.prod(kshape)))
    if count > 8:
        rt = np.ascontiguousarray(rt)  # (the lanes innermost, so numpy adds row after row)
    total = _chain(rt)
    view = as_strided(out, kshape, tuple(ostrides[k] for k in kept))
    view += total.reshape(kshape)


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
    r, tail = _loop(x, istr[0], istr[1], ostr[0], ostr[1])
    _add_into(ob, r, list(reversed(ostr[2:])) + tail)


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
    """What one thread of two_pass_reduction adds into its slot of the buffer (from zero)."""
    acc = np.zeros((), dtype)
    if len(shape) == 1:
        x = _shift(xb, istr[0], begin)
        r, tail = _loop(as_strided(x, (1, end - begin), (0, istr[0])), istr[0], 0, 0, 0)
        out = np.zeros(1, dtype)
        _add_into(out, r, tail)
        return acc + out[0]
    out = np.zeros(1, dtype)
    for values, n0, n1 in _blocks(shape, begin, end):
        x = xb
        for v, s in zip(values, istr):
            x = _shift(x, s, v)
        part = np.zeros(1, dtype)
        r, tail = _loop(as_strided(x, (n1, n0), (istr[1], istr[0])), istr[0], istr[1], 0, 0)
        _add_into(part, r, tail)
        out[0] = out[0] + part[0]
    return acc + out[0]


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

    perm = list(range(nd - 1, -1, -1))
    if nd > 1:
        for i in range(1, nd):
            d1 = i
            for d0 in range(i - 1, -1, -1):
                c = should_swap(perm[d0], perm[d1])
                if c > 0:
                    perm[d0], perm[d1] = perm[d1], perm[d0]
                    d1 = d0
                elif c < 0:
                    break
    else:
        perm = [0]
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
    None (everything) or a tuple of non-negative axes."""
    if type(a) is not np.ndarray or a.dtype not in FLOATS:
        return np.sum(a, axis=dim, keepdims=keepdim)
    nd = a.ndim
    axes = tuple(range(nd)) if dim is None else tuple(sorted(set(dim)))
    shape_kept = tuple(n for d, n in enumerate(a.shape) if d not in axes)
    shape_out = tuple(1 if d in axes else n for d, n in enumerate(a.shape)) if keepdim \
        else shape_kept
    out = np.zeros(shape_kept, a.dtype)
    if a.size == 0:
        return out.reshape(shape_out)
    if nd == 0:
        return (a + out).reshape(shape_out)
    if any(s < 0 for s in a.strides):
        a = np.ascontiguousarray(a)  # (PyTorch has no negative strides: its flip copies)
    shape, istr, ostr = _iterator(a, axes, out)
    numel = a.size
    nthreads = threads()
    if numel < GRAIN_SIZE or nthreads == 1:
        _serial(a, out, shape, istr, ostr)
    elif out.size == 1:
        _two_pass(a, out, shape, istr, nthreads)
    else:
        _parallel_dim(a, out, shape, istr, ostr, nthreads)
    return out.reshape(shape_out)


def _split(n: int, nthreads: int, grain: int):
    """at::parallel_for's ranges under OpenMP: min(threads, ceil(n/grain)) equal chunks."""
    tasks = min(nthreads, -(-n // grain))
    chunk = -(-n // tasks)
    return [(t * chunk, min(n, (t + 1) * chunk)) for t in range(tasks) if t * chunk < n]


def _two_pass(a, out, shape, istr, nthreads):
    """two_pass_reduction: one buffer slot per thread (zero), each summing its range of the
    iterator; then the buffer summed into the output as a reduction of its own."""
    buffer = np.zeros(nthreads, a.dtype)
    for t, (begin, end) in enumerate(_split(a.size, nthreads, GRAIN_SIZE)):
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
    parts = _split(cols, nthreads, 1) if cols > 1 else [(0, cols)]
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
