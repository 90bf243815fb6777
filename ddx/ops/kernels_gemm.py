"""Matrix products as PyTorch 2.13's CPU build computes them: with the ``mkl`` extra, MKL's own
gemm, gemv and dot called as ATen calls them (ddx/ops/mklblas.py: every shape and layout, float32
everywhere and float64 in the REPL); without it, float32 products in the order MKL 2024.2's
sgemm and sdot add them, as measured against torch on the 2-core AVX-512 machine the tutorials
are compared on (below), so that mm, addmm, F.linear and dot give PyTorch's float32 values to
the last bit there too; numpy's matmul/dot (OpenBLAS) wherever that order was not measured or
did not fit.

C = A @ B, A (M, K), B (K, N): element (i, j) sums A[i, k] B[k, j] over k. What was found
(tests/test_gemm_order.py compares each class with torch bit for bit):

- fused: N >= 16, rows of the 4-row panels (i < 4 (M // 4)): fused multiply-adds in k order
  from +0, K cut in blocks of 192 (two halves for an even K between 192 and 384; odd ones
  there are not modelled), the blocks' sums added in order, a bias added to the first one's.
  The M % 4 rows left over (measured for 4 < M < 12, K >= 64, B row-major): unfused.
- unfused: N <= 11 with B row-major, and K <= 3 with either layout: each product
  rounded, then added in k order (a bias first, as the sum's start); the first p =
  (-i N) mod 4 elements of a row of C that does not start on 16 bytes (when at least 4 are
  left after them) add k in blocks of 8: the first 4 onto the running sum one by one, the
  last 4 summed alone, then added. With N = 1 or a column-major B the bias comes last.
- lanes: A row-major, B column-major (x @ W.t()), 8 <= N <= 11, K >= 8, K % 4 == 0: products
  rounded, in 4 lanes (k mod 4) for the first 8 columns, 8 lanes for the others, the lanes
  halved pairwise, what is left after the lanes added in order; the bias last.
- dot (torch.dot, matmul of two vectors): see dot32.

Not modelled: N = 1 with K > 3 (MKL's matrix-vector path), 12 <= N <= 15, a column-major B
outside the cases above, M % 4 != 0 with N >= 16 otherwise, batched products (bmm), mv.

The fused chains are computed exactly in float64 (each product exact, a sum halfway between
two float32s redone rounded to odd), or by numpy's matmul for a block shape once it agreed
with the exact chain (OpenBLAS's sgemm is the same chain for most shapes, not all)."""

from __future__ import annotations

import numpy as np

from . import mklblas

KC = 192  # MKL's block of K in the fused kernel
_CHUNK = 1 << 20  # products held at once by the unfused kernel


_F64_MID = np.int64(1 << 28)  # a float64 exactly halfway between two float32s: low 29 bits
_F64_LOW = np.int64((1 << 29) - 1)
_TRUSTED: dict = {}  # (m, k, n) -> times numpy's matmul agreed with the exact chain; -1: not
_TRUST_AFTER = 3  # calls, and at least _TRUST_VALUES values compared in all
_TRUST_VALUES = 4096


def _plain(x) -> bool:
    return isinstance(x, np.ndarray) and x.dtype == np.float32 and x.ndim == 2


def _row_major(b: np.ndarray) -> bool:
    return b.shape[1] == 1 or b.strides[1] == b.itemsize


def kind(m: int, k: int, n: int, row_major_b: bool = True,
         row_major_a: bool = True) -> str | None:
    """Which of MKL's kernels computes mm of these sizes ('fused', 'unfused', 'lanes'), or
    None where the order was not measured or did not fit (numpy's matmul then)."""
    if m <= 0 or k <= 0 or n <= 0:
        return None
    if n >= 16:
        if m % 4 and not (row_major_b and 4 < m < 12 and k >= 64):
            return None
        return "fused" if k <= KC or k >= 2 * KC or k % 2 == 0 else None
    if n == 1:
        return "unfused" if k <= 3 else None
    if n > 11:
        return None
    if row_major_b or (k <= 3 and m >= 2):
        return "unfused"
    return "lanes" if n >= 8 and m >= 2 and k >= 8 and k % 4 == 0 and row_major_a else None


def _fma_exact(c: np.ndarray, p: np.ndarray) -> np.ndarray:
    """c + p (float64, p an exact product of float32s) rounded to odd: its rounding to float32
    is the correctly rounded fma."""
    s = c + p
    bb = s - c
    err = (c - (s - bb)) + (p - bb)
    odd = (err != 0) & ((s.view(np.int64) & 1) == 0)
    return np.where(odd, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)


def _fma_chain(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """sum over k of a[:, k] b[k] by fused multiply-adds in k order from +0, exactly (float64
    holds each product exactly; a sum that lands halfway between two float32s is redone
    rounded to odd, so that no value is rounded twice)."""
    m, k = a.shape
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    acc = np.zeros((m, b.shape[1]))
    p, s = np.empty_like(acc), np.empty_like(acc)
    low = np.empty(acc.shape, dtype=np.int64)
    acc32 = np.zeros(acc.shape, dtype=np.float32)
    for j in range(k):
        np.multiply(a64[:, j, None], b64[j], out=p)
        np.add(acc, p, out=s)
        np.bitwise_and(s.view(np.int64), _F64_LOW, out=low)
        if (low == _F64_MID).any():
            s = _fma_exact(acc, p)
        np.copyto(acc32, s, casting="unsafe")
        np.copyto(acc, acc32)
    return acc32


def _pad(a: np.ndarray, b: np.ndarray, mp: int, kp: int) -> tuple[np.ndarray, np.ndarray]:
    m, k = a.shape
    if (mp, kp) == (m, k):
        return a, b
    pa = np.zeros((mp, kp), np.float32)
    pa[:m, :k] = a
    pb = np.zeros((kp, b.shape[1]), np.float32)
    pb[:k] = b
    return pa, pb


def _fused_block(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One block of K: numpy's matmul once it gave the exact chain's values for this shape on
    _TRUST_AFTER calls and _TRUST_VALUES values (OpenBLAS's sgemm is the same fma chain for
    many shapes, not all), the exact chain before that. A shape that once differs is padded
    with zeros (zero rows up to 64, K up to a multiple of 64, then to 192: OpenBLAS takes other
    kernels for other sizes, and zeros change no fma chain's value) and tried again."""
    m, k = a.shape
    n = b.shape[1]
    exact = None
    for mp, kp in ((m, k), (max(m, 64), -(-k // 64) * 64), (max(m, 64), KC)):
        if kp < k:
            continue
        seen = _TRUSTED.get((mp, kp, n), 0)
        if seen < 0:
            continue
        pa, pb = _pad(a, b, mp, kp)
        if seen >= max(_TRUST_AFTER, -(-_TRUST_VALUES // (m * n))):
            return np.matmul(pa, pb)[:m]
        exact = _fma_chain(a, b)
        _TRUSTED[(mp, kp, n)] = seen + 1 if np.array_equal(np.matmul(pa, pb)[:m], exact) else -1
        return exact
    return _fma_chain(a, b)


def _blocks(k: int) -> list[tuple[int, int]]:
    """MKL's blocks of K: 192 wide; between 192 and 384, two halves."""
    if KC < k < 2 * KC:
        return [(0, k // 2), (k // 2, k)]
    return [(s, min(k, s + KC)) for s in range(0, k, KC)]


def _fused_rows(a: np.ndarray, b: np.ndarray, bias=None) -> np.ndarray:
    """fma in k order per block; the first block's sum + the bias, then the others' added in
    order."""
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    out = None
    for s, e in _blocks(a.shape[1]):
        part = _fused_block(a[:, s:e], np.ascontiguousarray(b[s:e]))
        out = (part if bias is None else part + bias) if out is None else out + part
    return out


def _lanes(prods: np.ndarray, width: int) -> np.ndarray:
    """Rows of products (E, K) added in width lanes (k mod width, in k order), the lanes
    halved pairwise (lane l + lane l + width/2, ...), then the products left over in order."""
    e, k = prods.shape
    whole = k // width * width
    acc = _unfused(prods[:, :whole].reshape(e, whole // width, width), 1)
    while acc.shape[1] > 1:
        half = acc.shape[1] // 2
        acc = acc[:, :half] + acc[:, half:]
    return _unfused(np.concatenate([acc, prods[:, whole:]], axis=1), 1)


def _lane_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A row-major, B column-major, 8 <= N <= 11, K >= 8 and K % 4 == 0: the dot-product
    kernel (no fma); 4 lanes for the first 8 columns, 8 lanes for the rest."""
    m, k = a.shape
    n = b.shape[1]
    prods = a[:, None, :] * np.transpose(b)[None, :, :]
    out = np.empty((m, n), dtype=np.float32)
    out[:, :8] = _lanes(prods[:, :8].reshape(-1, k), 4).reshape(m, 8)
    out[:, 8:] = _lanes(prods[:, 8:].reshape(-1, k), 8).reshape(m, n - 8)
    return out


def _unfused(prods: np.ndarray, axis: int) -> np.ndarray:
    """Products (already rounded to float32) added one after the other along axis."""
    return np.take(np.add.accumulate(prods, axis=axis, dtype=np.float32), -1, axis=axis)


def _eights(prods: np.ndarray, start) -> np.ndarray:
    """Rows of products (E, K) summed as MKL's unaligned head elements sum them."""
    e, k = prods.shape
    nb = k // 8
    blocks = prods[:, :8 * nb].reshape(e, nb, 8)
    tail4 = _unfused(blocks[:, :, 4:], 2)
    order = np.concatenate([blocks[:, :, :4], tail4[:, :, None]], axis=2).reshape(e, 5 * nb)
    parts = [order, prods[:, 8 * nb:]] if start is None else [start[:, None], order,
                                                               prods[:, 8 * nb:]]
    return _unfused(np.concatenate(parts, axis=1), 1)


def _unfused_rows(a: np.ndarray, b: np.ndarray, start=None, first: int = 0) -> np.ndarray:
    """Products rounded, then added in k order (after start, a bias broadcast to C's shape,
    when given); these are the rows first, first + 1, ... of C, row i starting at float i N
    of C's buffer."""
    m, k = a.shape
    n = b.shape[1]
    out = np.empty((m, n), dtype=np.float32)
    step = max(1, _CHUNK // max(1, (k + 1) * n))
    for r in range(0, m, step):
        prods = a[r:r + step, :, None] * b[None, :, :]
        if start is not None:
            prods = np.concatenate([start[r:r + step, None, :], prods], axis=1)
        out[r:r + step] = _unfused(prods, 1)
    if n < 5:  # no row has 4 elements left after its unaligned head
        return out
    heads = -(first + np.arange(m)) * n % 4
    heads[n - heads < 4] = 0
    rows = np.concatenate([np.nonzero(heads > c)[0] for c in range(3)])
    if rows.size:
        cols = np.concatenate([np.full(int(np.sum(heads > c)), c) for c in range(3)])
        out[rows, cols] = _eights(a[rows] * b[:, cols].T,
                                  None if start is None else start[rows, cols])
    return out


def _start(bias, m: int, n: int):
    return None if bias is None else np.ascontiguousarray(np.broadcast_to(bias, (m, n)))


def transposed_a(a: np.ndarray) -> bool:
    """A column-major A (X.t() of a row-major X, as in a linear layer's weight gradient
    X.t() @ g): MKL adds its products unfused in k order when N = 1 or M < 4 (measured: M 1-33,
    N 1-40, K 4-500, against torch; tests/test_paste_round3.py)."""
    return a.shape[1] > 1 and a.strides[0] == a.itemsize and \
        a.strides[1] >= a.shape[0] * a.itemsize


def mm32(a, b, bias=None):
    """a @ b (+ bias) of float32 matrices in MKL's order, or None where that order is not
    modelled (other dtypes and ranks, dual numbers, the sizes kind() leaves out)."""
    if not (_plain(a) and _plain(b)) or b.shape[0] != a.shape[1]:
        return None
    m, k = a.shape
    n = b.shape[1]
    if bias is None and transposed_a(a) and _row_major(b) and (n == 1 or m < 4):
        return _unfused_rows(a, b) + np.float32(0.0)
    which = kind(m, k, n, _row_major(b), m == 1 or a.strides[1] == a.itemsize)
    if which == "fused":
        panels = 4 * (m // 4)
        out = np.empty((m, n), dtype=np.float32)
        if panels:
            out[:panels] = _fused_rows(a[:panels], b, bias)
        if panels < m:  # the rows left over: the unfused kernel
            out[panels:] = _unfused_rows(a[panels:], b, _start(bias, m - panels, n), panels)
        return out + np.float32(0.0)  # MKL's sums start at +0: an all -0 sum is +0
    if which == "lanes":
        out = _lane_rows(a, b)
        return out + np.float32(0.0) if bias is None else out + bias
    if which is None:
        return None
    if bias is None:
        return _unfused_rows(a, b) + np.float32(0.0)
    if n == 1 or not _row_major(b):  # the bias added to the finished sum
        if n == 1 and (m == 1 or k == 1 or b.strides[1] == b.itemsize or
                       a.strides[1] != a.itemsize):
            return None  # (measured only for nn.Linear(k, 1)'s x @ W.t())
        return _unfused_rows(a, b) + bias
    return _unfused_rows(a, b, _start(bias, m, n))


def mm(a, b):
    out = mklblas.gemm(a, b)
    if out is None:
        out = mm32(a, b)
    return np.matmul(a, b) if out is None else out


def addmm(bias, a, b):
    out = mklblas.gemm(a, b, bias) if isinstance(bias, np.ndarray) else None
    if out is None and isinstance(bias, np.ndarray) and bias.dtype == np.float32 and \
            bias.ndim <= 2:
        out = mm32(a, b, bias)
    return bias + np.matmul(a, b) if out is None else out


def mv(a, x):
    """torch.mv: MKL's gemv as ATen calls it (mklblas.gemv), else numpy's matmul."""
    out = mklblas.gemv(a, x)
    return np.matmul(a, x) if out is None else out


def bmm(a, b):
    """torch.bmm: its small-matrix kernel or MKL's gemm as ATen calls them (mklblas.bmm), else
    numpy's matmul."""
    out = mklblas.bmm(a, b)
    return np.matmul(a, b) if out is None else out


def _products(*xs) -> bool:
    """Whether these matrices take this module's products (float32; float64 where MKL's are
    PyTorch's): their gradients are then made as PyTorch's backward makes them."""
    return all(_plain(x) for x in xs) or (
        mklblas.blas_dtype(*xs) is not None and all(x.ndim == 2 for x in xs))


def _column_major(x) -> bool:
    """PyTorch's test in mm_mat1/mat2_backward: strides (1, rows), counted in elements."""
    return isinstance(x, np.ndarray) and x.ndim == 2 and \
        x.strides == (x.itemsize, x.shape[0] * x.itemsize)


def mm_grad_a(g, b, a):
    """PyTorch's mm_mat1_backward for float32 matrices: (b @ g^T)^T for a column-major a, else
    g @ b^T; None for anything else (the row's own formula then)."""
    if not _products(g, a, b):
        return None
    if _column_major(a):
        return np.transpose(mm(b, np.transpose(g)))
    return mm(g, np.transpose(b))


def mm_grad_b(g, a, b):
    """PyTorch's mm_mat2_backward for float32 matrices: (g^T @ a)^T for a column-major b, else
    a^T @ g; None for anything else."""
    if not _products(g, a, b):
        return None
    if _column_major(b):
        return np.transpose(mm(np.transpose(g), a))
    return mm(np.transpose(a), g)


def or_else(done, x, y):
    """done, or numpy's x @ y where the float32 kernel left it (None)."""
    return x @ y if done is None else done


def dot32(x, y):
    """torch.dot of float32 vectors as MKL's sdot adds them (measured for K % 16 in {0, 4, 8}
    and K up to 8000; beyond, MKL splits the sum otherwise): 16 lanes (k mod 16) of rounded
    products, four registers of 4 lanes; what is left in groups of 4 added to the registers
    in turn; the registers added in order, then the 4 lanes as (0 + 2) + (1 + 3). None
    elsewhere."""
    if not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and x.ndim == y.ndim == 1
            and x.dtype == y.dtype == np.float32 and x.shape == y.shape):
        return None
    k = x.shape[0]
    if k == 0 or k % 16 not in (0, 4, 8) or k > 8000:
        return None
    prods = x * y
    whole = k // 16 * 16
    regs = np.zeros((4, 4), np.float32)
    if whole:
        regs = _unfused(prods[:whole].reshape(-1, 16), 0).reshape(4, 4).copy()
    for i, s in enumerate(range(whole, k, 4)):
        regs[i] += prods[s:s + 4]
    lanes = regs[0]
    for r in regs[1:]:
        lanes = lanes + r
    return (lanes[0] + lanes[2]) + (lanes[1] + lanes[3]) + np.float32(0.0)


def dot(x, y):
    out = mklblas.dot(x, y)
    if out is None:
        out = dot32(x, y)
    return np.dot(x, y) if out is None else out
