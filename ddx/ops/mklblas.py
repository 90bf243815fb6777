"""Matrix products as PyTorch's CPU build computes them: MKL's BLAS, called as ATen calls it.

torch 2.13's x86 wheels do mm, addmm (so F.linear and nn.Linear), mv and dot with MKL's gemm,
gemv and dot. Their order of additions depends on the shapes, the operands' layouts and, for a
matrix times a vector, the alignment of the data (torch's allocator aligns every tensor to 64
bytes). With the ``mkl`` extra (the same MKL release, ddx/ops/vml.py loads it) this module
makes the same calls: the operands laid out as ATen's addmm_impl_cpu_ and addmv hand them to
BLAS (a row-major result is computed as its transpose, column-major; an operand whose strides
fit neither layout copied to a contiguous one; cpublas' normalize_last_dims for the leading
dimensions), in buffers aligned to 64 bytes, the bias of addmm copied into the result and
added with beta = 1. Measured against torch: the same bits for every shape and layout tried
(tests/test_mklblas.py), where kernels_gemm.py's model of MKL's order covers some shapes.

float32 takes this path everywhere; float64 where PyTorch is spoken (vml.torch64(): the REPL and
``ddx run``). Anything else (no MKL, other dtypes, dual numbers, empty or huge matrices) gets
None, and the caller its own way."""

from __future__ import annotations

import ctypes

import numpy as np

from . import vml

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_COL_MAJOR, _N, _T = 102, 111, 112  # (mkl_cblas.h)
_INT_MAX = (1 << 31) - 1
_ALIGN = 64  # bytes: c10's alignment of every CPU tensor
_FNS: dict = {}


def _fn(name: str, dtype, restype=None):
    """cblas_{s,d}NAME from MKL's runtime, looked up once."""
    key = (name, dtype)
    fn = _FNS.get(key)
    if fn is None:
        fn = getattr(vml.library(), "cblas_" + ("s" if dtype is _F32 else "d") + name)
        fn.restype = restype
        _FNS[key] = fn
    return fn


def blas_dtype(*arrays, mkl: bool = True):
    """The dtype MKL computes these arrays in here, or None (see the docstring); ``mkl=False``:
    the dtype whatever computes them (ATen's own kernels), MKL or not."""
    first = arrays[0]
    if type(first) is not np.ndarray:
        return None
    dt = first.dtype
    if not (dt is _F32 or dt is _F64 and vml.torch64()):
        return None
    for x in arrays[1:]:
        if type(x) is not np.ndarray or x.dtype is not dt:
            return None
    return dt if not mkl or vml.library() else None


def aligned(shape: tuple, dtype, misalign: int = 0) -> np.ndarray:
    """An empty C-ordered array whose data starts ``misalign`` bytes past 64, as torch's
    (c10 aligns every storage to 64 bytes; a view starts at its offset in the storage)."""
    n = int(np.prod(shape))
    raw = np.empty(n + 2 * _ALIGN // dtype.itemsize, dtype)
    skip = ((misalign - raw.ctypes.data) % _ALIGN) // dtype.itemsize
    return raw[skip:skip + n].reshape(shape)


def as_torch(x: np.ndarray) -> np.ndarray:
    """x, or a copy with its strides, whose data lies where torch's would modulo 64 bytes: at
    x's byte offset in the array that owns its memory (0 for an array of its own)."""
    root = x
    while isinstance(root.base, np.ndarray):
        root = root.base
    want = (x.ctypes.data - root.ctypes.data) % _ALIGN
    if x.ctypes.data % _ALIGN == want:
        return x
    if any(st < 0 for st in x.strides) or x.size == 0:
        return as_torch(np.ascontiguousarray(x))
    span = sum((d - 1) * st for d, st in zip(x.shape, x.strides)) + x.itemsize
    raw = aligned((span // x.itemsize + 1,), x.dtype, want)
    out = np.lib.stride_tricks.as_strided(raw, x.shape, x.strides)
    out[...] = x
    return out


def _clone(x: np.ndarray) -> np.ndarray:
    """Tensor.contiguous() of a matrix that needs it: a new storage, so aligned."""
    out = aligned(x.shape, x.dtype)
    out[...] = x
    return out


def _st(x: np.ndarray) -> tuple[int, ...]:
    """A tensor's strides in elements (numpy's are torch's for the same view)."""
    return tuple(st // x.itemsize for st in x.strides)


def _matrix(x, stride_first: int, stride_second: int, rows: int, cols: int, tc: bool):
    """addmm_impl_cpu_'s cast of an operand (x, its strides read in the order the result's
    layout gives) as a BLAS matrix: (transposed, data, leading dimension)."""
    if stride_first == 1 and stride_second >= max(1, rows):
        t, data = False, as_torch(x)
    elif stride_second == 1 and stride_first >= max(1, cols):
        t, data = True, as_torch(x)
    else:
        t, data = not tc, _clone(x)
    st = _st(data)
    return t, data, st[1 if t == tc else 0]


def gemm(a, b, bias=None):
    """a @ b, or bias + a @ b as addmm (beta = 1 on a copy of the broadcast bias), as torch's
    CPU build computes it: addmm_impl_cpu_'s choice of layouts, cpublas' leading dimensions,
    MKL's gemm; None where this path does not apply."""
    dt = blas_dtype(a, b) if bias is None else blas_dtype(a, b, bias)
    if dt is None or a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        return None
    m, k = a.shape
    n = b.shape[1]
    if min(m, n, k) == 0 or max(m, n, k) > _INT_MAX or m * n > _INT_MAX:
        return None
    if bias is not None and (bias.ndim > 2 or np.broadcast_shapes(bias.shape, (m, n)) != (m, n)):
        return None
    out = aligned((m, n), dt)
    if bias is not None:
        out[...] = bias
    # the result's strides are (n, 1), (1, 1) when n == 1: a column (strides[0] == 1) is
    # taken as column-major; any other row-major result is computed as its transpose
    tc = n != 1
    m1, m2 = (b, a) if tc else (a, b)
    if tc:
        m, n = n, m
    ldc = m if tc else 1
    s1, s2 = _st(m1), _st(m2)
    ta, da, lda = _matrix(m1, s1[1 if tc else 0], s1[0 if tc else 1], m, k, tc)
    tb, db, ldb = _matrix(m2, s2[1 if tc else 0], s2[0 if tc else 1], k, n, tc)
    _call(dt, ta, tb, m, n, k, da.ctypes.data, lda, db.ctypes.data, ldb,
          0.0 if bias is None else 1.0, out.ctypes.data, ldc)
    return out


def _normalized(ta: bool, tb: bool, m: int, n: int, k: int, lda: int, ldb: int,
                ldc: int) -> tuple[int, int, int]:
    """cpublas' normalize_last_dims: the leading dimensions BLAS is given for degenerate
    sizes."""
    if n == 1:
        ldc = m
    if ta:
        lda = k if m == 1 else lda
    elif k == 1:
        lda = m
    if tb:
        ldb = n if k == 1 else ldb
    elif n == 1:
        ldb = k
    return lda, ldb, ldc


def _call(dt, ta: bool, tb: bool, m: int, n: int, k: int, pa: int, lda: int, pb: int, ldb: int,
          beta: float, pc: int, ldc: int) -> None:
    """cpublas::gemm: normalize_last_dims, then MKL's column-major gemm (alpha 1)."""
    lda, ldb, ldc = _normalized(ta, tb, m, n, k, lda, ldb, ldc)
    scalar = ctypes.c_float if dt is _F32 else ctypes.c_double
    _fn("gemm", dt)(_COL_MAJOR, _T if ta else _N, _T if tb else _N, m, n, k, scalar(1.0),
                    ctypes.c_void_p(pa), lda, ctypes.c_void_p(pb), ldb, scalar(beta),
                    ctypes.c_void_p(pc), ldc)


def _vector(x: np.ndarray) -> tuple[np.ndarray, int]:
    """A vector operand and its increment (torch passes the stride); a copy for a stride BLAS
    does not take."""
    inc = _st(x)[0] if x.shape[0] > 1 else 1
    if inc <= 0:
        x = _clone(x)
        inc = 1
    return as_torch(x), inc


def gemv(a, x):
    """a @ x of a matrix and a vector as torch.mv (addmv_out_cpu with beta 0: its choice of
    layout, cpublas' gemv, MKL's gemv); None elsewhere."""
    dt = blas_dtype(a, x)
    if dt is None or a.ndim != 2 or x.ndim != 1 or a.shape[1] != x.shape[0]:
        return None
    m, n = a.shape
    if min(m, n) == 0 or max(m, n) > _INT_MAX:
        return None
    s0, s1 = _st(a)
    if s0 == 1 and (n == 1 or s1 >= max(1, m)):
        trans, rows, cols, data, lda = _N, m, n, as_torch(a), s1
    elif s1 == 1 and (m == 1 or s0 >= max(1, n)):
        trans, rows, cols, data, lda = _T, n, m, as_torch(a), s0
    else:
        trans, rows, cols, data = _T, n, m, _clone(a)
        lda = _st(data)[0]
    if cols == 1:  # (cpublas' gemv)
        lda = rows
    vec, inc = _vector(x)
    out = aligned((m,), dt)
    scalar = ctypes.c_float if dt is _F32 else ctypes.c_double
    _fn("gemv", dt)(_COL_MAJOR, trans, rows, cols, scalar(1.0), ctypes.c_void_p(data.ctypes.data),
                    max(lda, 1), ctypes.c_void_p(vec.ctypes.data), inc, scalar(0.0),
                    ctypes.c_void_p(out.ctypes.data), 1)
    return out


def dot(x, y):
    """torch.dot of two vectors (dot_impl: MKL's dot, the strides as increments); None
    elsewhere."""
    dt = blas_dtype(x, y)
    if dt is None or x.ndim != 1 or x.shape != y.shape or not 0 < x.shape[0] <= _INT_MAX:
        return None
    scalar = ctypes.c_float if dt is _F32 else ctypes.c_double
    (xs, incx), (ys, incy) = _vector(x), _vector(y)
    return dt.type(_fn("dot", dt, scalar)(x.shape[0], ctypes.c_void_p(xs.ctypes.data), incx,
                                          ctypes.c_void_p(ys.ctypes.data), incy))


def bmm(a, b):
    """a @ b of two batches of matrices as torch.bmm (bmm_out_or_baddbmm_): below 400 products a
    matrix, the kernel that adds each element's products one by one from 0 (each rounded:
    opmath of float is float, and the file is built without fused multiply-adds); else MKL's
    gemm for each matrix of the batch, as addmm_impl_cpu_ would call it. None where this path
    does not apply (the dtype rule of blas_dtype; the small kernel needs no MKL)."""
    dt = blas_dtype(a, b, mkl=False)
    if dt is None or a.ndim != 3 or b.ndim != 3 or a.shape[0] != b.shape[0] or \
            a.shape[2] != b.shape[1]:
        return None
    bs, m, k = a.shape
    n = b.shape[2]
    if bs * m * n == 0 or k == 0 or k * m * n >= 400 and not vml.library():
        return None
    if k * m * n < 400:  # (no MKL needed)
        acc = np.zeros((bs, m, n), dt)
        for kk in range(k):
            acc += a[:, :, kk, None] * b[:, None, kk, :]
        return acc
    out = aligned((bs, m, n), dt)
    if not (_items_fit(a) and _items_fit(b)):  # (split along the batch: addmm each matrix)
        for i in range(bs):
            out[i] = gemm(a[i], b[i])
        return out
    # baddbmm_with_gemm_: every matrix's product as the transposed, column-major one
    a, b = as_torch(a), as_torch(b)
    sa, sb = _st(a), _st(b)
    ta = sb[1] == 1 and sb[2] >= k  # (is_transposed of mat2, which is gemm's A)
    tb = sa[1] == 1 and sa[2] >= m
    lda, ldb = sb[2 if ta else 1], sa[2 if tb else 1]
    pa = [b.ctypes.data + i * b.strides[0] for i in range(bs)]
    pb = [a.ctypes.data + i * a.strides[0] for i in range(bs)]
    pc = [out.ctypes.data + i * out.strides[0] for i in range(bs)]
    if bs == 1:
        _call(dt, ta, tb, n, m, k, pa[0], lda, pb[0], ldb, 0.0, pc[0], n)
    else:
        _batched(dt, ta, tb, n, m, k, pa, lda, pb, ldb, pc, n)  # (gemm_batched_with_stride)
    return out


def _batched(dt, ta: bool, tb: bool, m: int, n: int, k: int, pa: list, lda: int, pb: list,
             ldb: int, pc: list, ldc: int) -> None:
    """cpublas::gemm_batched_with_stride with MKL: one group of gemm_batch."""
    lda, ldb, ldc = _normalized(ta, tb, m, n, k, lda, ldb, ldc)
    scalar = ctypes.c_float if dt is _F32 else ctypes.c_double
    one = ctypes.c_int

    def ptrs(values):
        return (ctypes.c_void_p * len(values))(*values)
    _fn("gemm_batch", dt)(_COL_MAJOR, ctypes.byref(one(_T if ta else _N)),
                          ctypes.byref(one(_T if tb else _N)), ctypes.byref(one(m)),
                          ctypes.byref(one(n)), ctypes.byref(one(k)), ctypes.byref(scalar(1.0)),
                          ptrs(pa), ctypes.byref(one(lda)), ptrs(pb), ctypes.byref(one(ldb)),
                          ctypes.byref(scalar(0.0)), ptrs(pc), ctypes.byref(one(ldc)), 1,
                          ctypes.byref(one(len(pa))))


def _items_fit(t: np.ndarray) -> bool:
    """bmm's batch_items_contiguous_or_transposed."""
    sizes, st = t.shape, _st(t)
    return (st[2] == 1 and (sizes[1] == 1 or st[1] >= sizes[2])) or \
        (st[1] == 1 and (sizes[2] == 1 or st[2] >= sizes[1]))
