"""float32 mm/addmm in PyTorch's order of additions (ddx/ops/kernels_gemm.py): bit for bit
against torch.mm / torch.addmm on this machine's PyTorch (MKL sgemm), for each shape class the
kernel models (the path without the mkl extra), and outside them MKL's own product with the
extra (ddx/ops/mklblas.py, tests/test_mklblas.py), numpy's matmul without it."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import torch_or_skip
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ddx.ops import kernels_gemm as gemm
from ddx.ops import vml


def _data(seed: int, shape: tuple, zeros: bool) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    if zeros:  # ReLU outputs: exact zeros among the products
        x[x < 0] = 0
    return x


def _pair(torch, x: np.ndarray, column_major: bool):
    """(numpy operand, torch operand) with the same layout: a transposed view when column-major."""
    if column_major:  # strides (1, rows) even for a single column, as W.t() has
        y = np.empty(x.shape[::-1], np.float32)
        y[...] = x.T
        return y.T, torch.from_numpy(y).t()
    return x, torch.from_numpy(x)


def _check(m, k, n, seed, zeros, col_a, col_b, bias: bool):
    torch = torch_or_skip()
    a, ta = _pair(torch, _data(seed, (m, k), zeros), col_a)
    b, tb = _pair(torch, _data(seed + 1, (k, n), False), col_b)
    c = _data(seed + 2, (n,), False)
    got = gemm.mm32(a, b, c if bias else None)
    assert got is not None, (m, k, n)
    want = (torch.addmm(torch.from_numpy(c), ta, tb) if bias else torch.mm(ta, tb)).numpy()
    assert got.dtype == np.float32
    bad = np.argwhere(got != want)
    assert bad.size == 0, f"{len(bad)} of {m * n} differ, first at {bad[0]}: " \
        f"{got[tuple(bad[0])]!r} != {want[tuple(bad[0])]!r}"


seeds = st.integers(0, 2**31)


@settings(max_examples=150, deadline=None)
@given(m=st.integers(1, 70), k=st.integers(1, 260), n=st.integers(2, 11), seed=seeds,
       zeros=st.booleans(), col_a=st.booleans(), bias=st.booleans())
def test_unfused_kernel_row_major_b(m, k, n, seed, zeros, col_a, bias):
    """N <= 11, B row-major: products rounded then added in k order (blocks of 8 split 4 + 4
    for the first elements of a row of C that does not start on 16 bytes); a bias first."""
    _check(m, k, n, seed, zeros, col_a, False, bias)


@settings(max_examples=100, deadline=None)
@given(m=st.integers(2, 300), k=st.integers(1, 3), n=st.integers(1, 11), seed=seeds,
       zeros=st.booleans(), col_a=st.booleans(), col_b=st.booleans(), bias=st.booleans())
def test_unfused_kernel_small_k(m, k, n, seed, zeros, col_a, col_b, bias):
    """K <= 3 (nn.Linear(3, 1) of the polynomial tutorials: x (2000, 3) @ W.t()), either
    layout of B; with a column-major B or N = 1 the bias is added to the finished sum (N = 1
    with a bias: measured only for a row-major x and a column-major W.t())."""
    if n == 1 and bias:
        m, k, col_a, col_b = m, max(k, 2), False, True
    _check(m, k, n, seed, zeros, col_a, col_b, bias)


@settings(max_examples=60, deadline=None)
@given(m4=st.integers(1, 30), k=st.integers(1, 450), n=st.integers(16, 120), seed=seeds,
       zeros=st.booleans(), col_a=st.booleans(), col_b=st.booleans(), bias=st.booleans())
def test_fused_kernel(m4, k, n, seed, zeros, col_a, col_b, bias):
    """N >= 16 and M a multiple of 4: fma in k order, K in blocks of 192 added in order (two
    halves for an even K between 192 and 384), the bias added to the first block's sum."""
    assume(gemm.kind(4 * m4, k, n) == "fused")
    _check(4 * m4, k, n, seed, zeros, col_a, col_b, bias)


@settings(max_examples=40, deadline=None)
@given(m=st.integers(5, 11).filter(lambda m: m % 4), k=st.integers(64, 450),
       n=st.integers(16, 120), seed=seeds, zeros=st.booleans(), col_a=st.booleans(),
       bias=st.booleans())
def test_fused_kernel_rows_left_over(m, k, n, seed, zeros, col_a, bias):
    """The last M % 4 rows (B row-major, K >= 64): the unfused kernel, bias first."""
    assume(gemm.kind(m, k, n) == "fused")
    _check(m, k, n, seed, zeros, col_a, False, bias)


@settings(max_examples=60, deadline=None)
@given(m=st.integers(2, 70), k4=st.integers(2, 300), n=st.integers(8, 11), seed=seeds,
       zeros=st.booleans(), bias=st.booleans())
def test_lanes_kernel(m, k4, n, seed, zeros, bias):
    """A row-major, B column-major (x @ W.t()), 8 <= N <= 11, K >= 8, K % 4 == 0: the
    dot-product kernel, 4 lanes for the first 8 columns and 8 for the rest; the bias last."""
    _check(m, 4 * k4, n, seed, zeros, False, True, bias)


@settings(max_examples=100, deadline=None)
@given(k16=st.integers(0, 499), rest=st.sampled_from([0, 4, 8]), seed=seeds,
       zeros=st.booleans())
def test_dot(k16, rest, seed, zeros):
    """torch.dot (matmul of two vectors): MKL's sdot's 16 lanes, for K % 16 in {0, 4, 8}."""
    torch = torch_or_skip()
    k = 16 * k16 + rest
    if k == 0:
        return
    x, y = _data(seed, (k,), zeros), _data(seed + 1, (k,), False)
    got = gemm.dot32(x, y)
    want = torch.dot(torch.from_numpy(x), torch.from_numpy(y)).numpy()
    assert got is not None and got.dtype == np.float32 and got == want, (k, got, want)


def _mkl_or_numpy(got, x, y, fn, numpy_fn) -> bool:
    """Outside the modelled sizes: MKL's own product (torch's bits) with the mkl extra,
    numpy's without it."""
    if vml.library() is None:
        return np.array_equal(got, numpy_fn(x, y))
    torch = torch_or_skip()
    return np.asarray(got).tobytes() == fn(torch.from_numpy(x), torch.from_numpy(y)).numpy() \
        .tobytes()


def test_dot_outside_the_measured_sizes_is_mkls_or_numpys():
    torch = torch_or_skip()
    x, y = _data(0, (12,), False), _data(1, (12,), False)
    assert gemm.dot32(x, y) is None and _mkl_or_numpy(gemm.dot(x, y), x, y, torch.dot, np.dot)
    x, y = _data(0, (8016,), False), _data(1, (8016,), False)
    assert gemm.dot32(x, y) is None


@pytest.mark.parametrize("m, k, n, col_a, col_b, bias", [
    (64, 1000, 100, False, False, False),   # two-layer net: x.mm(w1)
    (64, 100, 10, False, False, False),     # h.mm(w2)
    (100, 64, 10, True, False, False),      # its backward: h.t().mm(grad)
    (64, 10, 100, False, True, False),      # grad.mm(w2.t())
    (1000, 64, 100, True, False, False),    # x.t().mm(grad_h)
    (1, 2000, 3, True, False, False),       # polynomial: grad.t().mm(xx) (nn.Linear's weight)
    (64, 1000, 100, False, True, True),     # two-layer nn: F.linear(x, W1, b1)
    (64, 100, 10, False, True, True),       # F.linear(h, W2, b2)
    (10, 64, 100, True, False, False),      # W2's gradient: (g.t() @ h).t()
    (100, 64, 1000, True, False, False),    # W1's gradient: (g.t() @ x).t()
])
def test_tutorial_products(m, k, n, col_a, col_b, bias):
    for seed in range(3):
        _check(m, k, n, seed, seed == 1, col_a, col_b, bias)


def test_polynomial_linear_with_bias():
    for seed in range(5):
        _check(2000, 3, 1, seed, False, False, True, True)


@pytest.mark.parametrize("m, k, n, col_b", [(2, 8, 1, False), (3, 5, 12, False), (4, 3, 0, False),
                                            (13, 64, 16, False), (64, 193, 16, False),
                                            (66, 100, 32, False), (5, 6, 10, True)])
def test_unmeasured_sizes_are_mkls_or_numpys(m, k, n, col_b):
    torch = torch_or_skip()
    a, b = _data(0, (m, k), False), _data(1, (k, n), False)
    b = np.asfortranarray(b) if col_b else b
    assert gemm.mm32(a, b) is None
    assert _mkl_or_numpy(gemm.mm(a, b), a, b, torch.mm, np.matmul)


def test_other_dtypes_and_ranks_are_numpys():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    assert gemm.mm32(a, b) is None
    assert gemm.mm32(a.astype(np.float32)[0], b.astype(np.float32)) is None
    assert np.array_equal(gemm.addmm(np.ones(4), a, b), 1 + a @ b)


def test_all_negative_zero_products_sum_to_positive_zero():
    torch = torch_or_skip()
    a = np.full((4, 5), -0.0, np.float32)
    b = np.ones((5, 3), np.float32)
    want = torch.mm(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    got = gemm.mm32(a, b)
    assert np.array_equal(np.signbit(got), np.signbit(want)) and not np.signbit(got).any()


def test_exact_fma_chain_rounds_once():
    """A halfway case: (1 + 2^-23) + (-2^-24 (1 + 2^-23)) (1 - 2^-23) is 1 + 2^-24 + 2^-70,
    just above the midpoint of 1 and 1 + 2^-23, so fma gives 1 + 2^-23; in float64 the 2^-70
    is lost, and the midpoint then rounds to even: 1."""
    u = 2.0**-23
    a = np.array([[1 + u, -(2.0**-24) * (1 + u)]], np.float32)
    b = np.array([[1.0], [1 - u]], np.float32)
    twice = np.float32(np.float64(a[0, 0]) * b[0, 0] + np.float64(a[0, 1]) * np.float64(b[1, 0]))
    assert twice == np.float32(1.0)
    assert gemm._fma_chain(a, b)[0, 0] == np.float32(1 + u)
