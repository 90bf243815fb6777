"""ddx's sums add in PyTorch's CPU order (ops/kernels_sum.py): torch.sum's bits, float32 and
float64, whole and along dims, of contiguous, transposed and broadcast arrays, at sizes
around the vector width (8 floats, 4 doubles), the 4 accumulators, multi_row_sum's levels
(16 rows a step below 2**20 rows) and GRAIN_SIZE (32768, where the sum splits between
threads); and the same bits through ddx's sum, mean, losses and backward passes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import torch_or_skip
from hypothesis import given, settings
from hypothesis import strategies as st

import ddx
from ddx.engine.reverse import unbroadcast
from ddx.ops.kernels_sum import GRAIN_SIZE, torch_mean, torch_sum
from ddx.ops.kernels_sumloop import chain, inner_vectorized
from ddx.ops.kernels_summap import sum_mapped

DTYPES = [np.float32, np.float64]
# vector widths, 4 vectors, a level step of 4-vector rows (16 * 32 floats = 512), the next
# level (8192 floats), GRAIN_SIZE, two levels of doubles, and 2**20 rows' larger step
SIZES = sorted({n + d for n in (1, 4, 8, 16, 32, 64, 128, 512, 2048, 8192, GRAIN_SIZE, 65536,
                                131072) for d in (-1, 0, 1)} | {3, 5, 7, 2000, 1_000_003})


def _values(shape, dtype, seed):
    """Numbers whose sums round differently in almost any other order: normal, scaled over
    six decades."""
    rng = np.random.default_rng(seed)
    scale = 10.0 ** rng.uniform(-3, 3, size=shape)
    return np.asarray((rng.standard_normal(shape) * scale).astype(dtype))


def _bits(x):
    return np.asarray(x).tobytes()


def _torch_sum(torch, x, dim, keepdim=False):
    """torch.sum of a tensor on x's memory, with x's strides (torch.from_numpy keeps them)."""
    t = torch.from_numpy(x)
    if dim is None:
        return (t.sum(dim=tuple(range(x.ndim)), keepdim=True) if keepdim else t.sum()).numpy()
    return t.sum(dim=dim, keepdim=keepdim).numpy()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_a_whole_sum_of_a_vector_is_torchs(n, dtype):
    torch = torch_or_skip()
    x = _values(n, dtype, n)
    assert _bits(torch_sum(x)) == _bits(torch.from_numpy(x).sum().numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2000, 3), (3, 2000), (64, 1000), (17, 33), (33, 17),
                                   (300, 129), (129, 300), (2, 40000), (40000, 2),
                                   (5, 16, 33), (40, 50, 60), (7, 1, 9), (1, 64)])
def test_sums_along_every_set_of_dims_transposed_or_not_are_torchs(shape, dtype):
    """Inner and outer reductions, vectorised and scalar, kept dims split between threads
    (parallel_dim_reduction above GRAIN_SIZE), and every permutation of a 3-D array."""
    torch = torch_or_skip()
    x = _values(shape, dtype, sum(shape))
    nd = len(shape)
    dims = [None] + [c for r in range(1, nd + 1) for c in itertools.combinations(range(nd), r)]
    for perm in itertools.permutations(range(nd)):
        xp = np.transpose(x, perm)
        for d in dims:
            for keepdim in (False, True):
                ours = torch_sum(xp, d, keepdim)
                theirs = _torch_sum(torch, xp, d, keepdim)
                assert np.shape(ours) == theirs.shape
                assert _bits(ours) == _bits(theirs), (perm, d, keepdim)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, index", [((100, 2000), (slice(None), slice(None, None, 2))),
                                          ((3000, 20), (slice(None, None, 3),)),
                                          ((60, 70, 9), (slice(None), slice(1, None, 2))),
                                          ((50000,), (slice(None, None, 5),))])
def test_sums_of_strided_slices_are_torchs(shape, index, dtype):
    """Rows read with a stride (scalar_inner_sum and scalar_outer_sum, one lane per row)."""
    torch = torch_or_skip()
    x = _values(shape, dtype, 9)[index]
    dims = [None] + [c for r in range(1, x.ndim + 1)
                     for c in itertools.combinations(range(x.ndim), r)]
    for d in dims:
        assert _bits(torch_sum(x, d)) == _bits(_torch_sum(torch, x, d)), d


@settings(max_examples=120, deadline=None)
@given(dtype=st.sampled_from(DTYPES),
       shape=st.lists(st.sampled_from([1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65,
                                       127, 129, 257, 513]), min_size=0, max_size=4),
       data=st.data())
def test_any_shape_dims_and_layout_sums_as_torch(dtype, shape, data):
    torch = torch_or_skip()
    shape = tuple(shape)
    while np.prod(shape) > 300_000:  # (keep each example quick)
        shape = shape[1:]
    x = _values(shape, dtype, data.draw(st.integers(0, 2**32 - 1)))
    perm = data.draw(st.permutations(range(len(shape))))
    xp = np.transpose(x, perm)
    dim = data.draw(st.none() | st.sets(st.integers(0, max(len(shape) - 1, 0)),
                                         min_size=1).map(lambda s: tuple(sorted(s))))
    if dim is not None and not shape:
        dim = None
    keepdim = data.draw(st.booleans())
    assert _bits(torch_sum(xp, dim, keepdim)) == _bits(_torch_sum(torch, xp, dim, keepdim))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, to", [((2000,), ()), ((64, 100), (100,)), ((64, 100), (64, 1)),
                                       ((3, 40000), (1, 40000)), ((50000, 3), (3,)),
                                       ((4, 5, 600), (5, 1)), ((9, 9), (1, 1))])
def test_unbroadcast_is_torchs_sum_to_in_backward(shape, to, dtype):
    """A gradient summed to an input's shape: PyTorch's sum_to, one sum over the leading
    and the size-1 dims, against a real backward pass."""
    torch = torch_or_skip()
    g = _values(shape, dtype, len(shape) + len(to))
    p = torch.zeros(to, dtype=torch.from_numpy(g).dtype, requires_grad=True)
    (p + torch.zeros(shape, dtype=p.dtype)).backward(torch.from_numpy(g))
    assert _bits(unbroadcast(g, to)) == _bits(p.grad.numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2000,), (64, 10), (3, 70000)])
def test_mean_is_torchs_sum_divided_by_the_count(shape, dtype):
    torch = torch_or_skip()
    x = _values(shape, dtype, 11)
    t = torch.from_numpy(x)
    assert _bits(torch_mean(x)) == _bits(t.mean().numpy())
    assert _bits(torch_mean(x, (len(shape) - 1,))) == _bits(t.mean(dim=-1).numpy())


@pytest.mark.parametrize("n", [GRAIN_SIZE - 1, GRAIN_SIZE + 1, 262147, 1_000_003])
@pytest.mark.parametrize("chunk", [256, 1 << 18])
def test_a_sum_of_squares_made_in_chunks_is_the_sum_of_the_squares(n, chunk):
    x = _values(n, np.float64, n)
    assert _bits(sum_mapped(x, np.square, chunk)) == _bits(torch_sum(np.square(x)))


@pytest.mark.parametrize("shape", [(9, 5), (40, 3), (3, 40), (2, 7, 6), (700, 9, 1),
                                   (3, 40, 1), (20, 16, 32)])
def test_chain_adds_rows_one_after_another(shape):
    """The additions the kernels are built of: each lane's rows from the first, in order."""
    x = _values(shape, np.float32, 5)
    acc = x[..., 0, :].copy()
    for k in range(1, shape[-2]):
        acc = acc + x[..., k, :]
    assert _bits(chain(x)) == _bits(acc)
    assert _bits(chain(np.swapaxes(np.swapaxes(x, -1, -2).copy(), -1, -2))) == _bits(acc)


@settings(max_examples=200, deadline=None)
@given(dtype=st.sampled_from(DTYPES),
       n=st.integers(32, GRAIN_SIZE - 1) | st.sampled_from([32, 255, 256, 511, 512, 2047,
                                                            2048, 4095, 4096, 4097, 8192,
                                                            16384, 32767]),
       seed=st.integers(0, 2**32 - 1), decades=st.integers(0, 30))
def test_the_small_sum_kernel_adds_as_the_general_cascade(dtype, n, seed, decades):
    """A contiguous vector below GRAIN_SIZE takes kernels_sumsmall.small_sum (Python floats
    for float64's last additions, one-vector rows for float32's); its bits are those of the
    cascade it shortcuts, at every level boundary (16 rows of 4 vectors a step, einsum from 8
    steps, level 2 from 16)."""
    rng = np.random.default_rng(seed)
    decades = min(decades, 12) if dtype == np.float32 else decades
    x = (rng.standard_normal(n) * 10.0 ** rng.uniform(-decades, decades, n)).astype(dtype)
    before = x.copy()
    got = torch_sum(x)
    assert type(got) is dtype
    width = 32 // x.itemsize
    assert _bits(got) == _bits(inner_vectorized(x, width) + dtype(0))
    assert _bits(x) == _bits(before)  # (read only)


@pytest.mark.parametrize("n", [16, 2048, 4096, 100_000])
def test_a_small_sum_that_overflows_still_reports_it(n):
    """The small kernel leaves a sum that is not finite to the general path, which raises the
    floating-point event: the trace says where inf came from, as for any other size (einsum,
    which adds the larger blocks, raises no flags: such a block is added again by reduce)."""
    for _ in range(2):  # (the first call traces, the second replays its template)
        t = ddx.trace("sum(x)", x=np.full(n, 1e308))
        assert t.value == np.inf
        assert t.warnings == ["sum(x) gives inf (overflow) at SumBackward0"]
        t = ddx.trace("sum(x)", x=np.full(n, 3e38), dtype="float32")
        assert t.value == np.inf
        assert t.warnings == ["sum(x) gives inf (overflow) at SumBackward0"]
    t = ddx.trace("sum(x)", x=np.concatenate([np.full(n - 1, 1.0), [np.nan]]))
    assert np.isnan(t.value)


def test_a_whole_sum_of_negative_zeros_is_zero_and_an_empty_sum_is_zero():
    torch = torch_or_skip()
    for x in (np.array([-0.0, -0.0], np.float32), np.zeros((0, 3)), np.array(-0.0)):
        assert _bits(torch_sum(x)) == _bits(torch.from_numpy(x).sum().numpy())
    assert _bits(torch_sum(np.zeros((0, 3)), (0,))) == _bits(np.zeros(3))


def test_ddx_sum_mean_and_mse_and_their_gradients_are_torchs():
    """Through ddx itself (float64, the one-liner's default): sum, mean, a sum of squares
    and the broadcast gradients of a scalar, as PyTorch prints them."""
    torch = torch_or_skip()
    x = _values(2000, np.float64, 3)
    text = "sum((a + b*x)^2) + mean(x*b)"
    g = ddx.trace(text, a=0.3, b=-1.7, x=x, wrt="a,b")
    g.backward()
    tx = torch.from_numpy(x)
    a = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    b = torch.tensor(-1.7, dtype=torch.float64, requires_grad=True)
    out = ((a + b * tx) ** 2).sum() + (tx * b).mean()
    out.backward()
    assert _bits(g.value) == _bits(out.detach().numpy())
    assert _bits(g.grads["a"]) == _bits(a.grad.numpy())
    assert _bits(g.grads["b"]) == _bits(b.grad.numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, sizes", [((3,), (5, 700)), ((2, 3), (40, 50, 1)),
                                          ((4, 5), (1, 900)), ((7,), (3000,)),
                                          ((2, 3, 4), (9, 1, 5, 7))])
def test_repeats_gradient_sums_as_torchs_repeat_backward(shape, sizes, dtype):
    """repeat's VJP: the new leading dims summed one at a time, then the repeats at once."""
    torch = torch_or_skip()
    from ddx.ops.kernels_shape import repeat_back

    a = _values(shape, dtype, 1)
    t = torch.from_numpy(a.copy()).requires_grad_()
    out = t.repeat(*sizes)
    g = _values(tuple(out.shape), dtype, 2)
    out.backward(torch.from_numpy(g))
    assert _bits(repeat_back(g, None, a, sizes=sizes)) == _bits(t.grad.numpy())
