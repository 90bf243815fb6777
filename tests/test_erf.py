"""erf and erfc on arrays (ddx/ops/kernels_erf.py): the same double as Python's math.erf and
math.erfc (glibc's fdlibm erf) for every input, in every range of fdlibm's, at its edges and
at the special values; through the op table, gelu and the batch data path too; and beside
PyTorch's float64 erf, which is within 1 ulp of it (erfc within 3)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import torch_or_skip
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import ddx
from ddx.ops import OPS
from ddx.ops import kernels_erf as K

# fdlibm's ranges of |x| (erf and erfc switch formulas at each)
RANGES = [(0.0, 2.0 ** -56), (2.0 ** -56, 2.0 ** -28), (2.0 ** -28, 0.25), (0.25, 0.84375),
          (0.84375, 1.25), (1.25, 1 / 0.35), (1 / 0.35, 6.0), (6.0, 28.0), (28.0, 40.0)]
BOUNDS = [2.0 ** -1022, 2.0 ** -1015, 2.0 ** -56, 2.0 ** -28, 0.25, 0.84375, 1.25,
          K.ERF_RB, K.ERFC_RB, 6.0, 22.5, 26.5, 27.3, 28.0]
SPECIAL = [0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, -5e-324, 2.0 ** -1074 * 3,
           1e308, -1e308, 1.0, -1.0]
FUNCS = [(K.erf, math.erf), (K.erfc, math.erfc)]


def bits(a) -> np.ndarray:
    """The values' bit patterns, every nan as one pattern."""
    a = np.asarray(a, dtype=np.float64)
    return np.where(np.isnan(a), np.nan, a).view(np.uint64)


def reference(fn, x: np.ndarray) -> np.ndarray:
    return np.array([fn(v) for v in x.tolist()], dtype=np.float64)


def assert_same(got, want, x) -> None:
    diff = np.flatnonzero(bits(got) != bits(want))
    assert diff.size == 0, (f"{diff.size} of {x.size} differ, e.g. x={x[diff[:3]].tolist()} "
                            f"got {np.asarray(got)[diff[:3]].tolist()} "
                            f"want {np.asarray(want)[diff[:3]].tolist()}")


@pytest.mark.parametrize("fast, slow", FUNCS, ids=["erf", "erfc"])
def test_every_range_of_fdlibm_gives_the_very_double_of_math(fast, slow):
    rng = np.random.default_rng(2026)
    parts = []
    for lo, hi in RANGES:
        v = rng.uniform(lo, hi, 20_000)
        parts += [v, -v]
    x = np.concatenate(parts)
    assert_same(fast(x), reference(slow, x), x)


@pytest.mark.parametrize("fast, slow", FUNCS, ids=["erf", "erfc"])
def test_edges_special_values_and_subnormals(fast, slow):
    edges = [np.nextafter(b, d) for b in BOUNDS for d in (0.0, np.inf)] + BOUNDS
    rng = np.random.default_rng(7)
    tiny = rng.uniform(-1, 1, 2000) * 2.0 ** rng.uniform(-1074, -1000, 2000)
    # (with 40 values in front, the array is long enough for the vectorised path)
    x = np.concatenate([edges, np.negative(edges), SPECIAL, tiny])
    got = fast(x)
    assert_same(got, reference(slow, x), x)
    assert x.size >= K.SMALL
    assert np.signbit(K.erf(np.array([-0.0] * 40))).all()  # erf(-0) is -0
    assert K.erf(np.array([math.inf, -math.inf] * 20)).tolist() == [1.0, -1.0] * 20
    assert K.erfc(np.array([math.inf, -math.inf] * 20)).tolist() == [0.0, 2.0] * 20


@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, st.integers(K.SMALL, 300),
              elements=st.floats(allow_nan=True, allow_infinity=True, width=64)))
def test_any_doubles_give_math_erf_and_erfc_bit_for_bit(x):
    for fast, slow in FUNCS:
        assert_same(fast(x), reference(slow, x), x)


@settings(max_examples=100, deadline=None)
@given(arrays(np.float64, st.integers(K.SMALL, 200), elements=st.floats(-8, 8)))
def test_the_range_where_exp_is_used_gives_math_erf_bit_for_bit(x):
    for fast, slow in FUNCS:
        assert_same(fast(x), reference(slow, x), x)


def test_exp_without_fused_operations_flags_every_element_glibc_may_round_otherwise():
    """The unfused exp differs from math.exp in a few elements; each of those is flagged (and so
    computed again by math.erf), while the flags stay few."""
    x = np.random.default_rng(11).uniform(-37.0, 1.0, 1_000_000)
    y, doubt = K.exp_doubt(x)
    want = reference(math.exp, x)
    differ = y != want
    assert differ.sum() > 0  # (the check that makes the second pass necessary)
    assert not (differ & ~doubt).any()
    assert doubt.mean() < 0.05
    close = ~doubt  # and what is not flagged is exactly glibc's
    assert np.array_equal(y[close], want[close])


def test_the_table_of_powers_of_two_is_glibcs():
    tails, highs = K._table()
    assert highs[0] == 0x3FF0000000000000 and tails[0] == 0.0
    assert hex(int(highs[1])) == "0x3feff63da9fb3335"
    assert hex(int(tails[1:2].view(np.uint64)[0])) == "0x3c9b3b4f1a88bf6e"
    for k in (5, 64, 127):  # H[k] * (1 + T[k]) is 2^(k/128) to far beyond a double
        h = (highs[k] + (np.uint64(k) << np.uint64(45))).view(np.float64)
        assert abs(float(h) * (1 + float(tails[k])) - 2 ** (k / 128)) <= 2 ** -52


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "bool"])
def test_result_dtype_and_shape_are_the_inputs(dtype):
    x = (np.arange(-48, 48).reshape(4, 2, 12) / 8).astype(dtype)
    got = K.erf(x)
    want_dtype = x.dtype if x.dtype.kind == "f" else np.float64
    assert got.dtype == want_dtype and got.shape == x.shape
    want = np.array([math.erf(v) for v in x.astype(np.float64).ravel().tolist()])
    assert np.array_equal(got.ravel(), want.astype(want_dtype))
    assert K.erf(np.float64(0.5)).shape == () and K.erf(np.float64(0.5)) == math.erf(0.5)


def test_the_op_rows_and_gelu_use_it():
    x = np.random.default_rng(3).standard_normal(5000) * 3
    assert_same(OPS["erf"].fn(x), reference(math.erf, x), x)
    assert_same(OPS["erfc"].fn(x), reference(math.erfc, x), x)
    # gelu of a number is ATen's scalar lambda, with the C library's erf (of a longer array,
    # its vector bodies use Sleef's erf: tests/test_act_exact.py)
    want = np.array([v * 0.5 * (1 + math.erf(v * math.sqrt(0.5))) for v in x.tolist()])
    assert_same(np.array([OPS["gelu"].fn(np.float64(v)) for v in x.tolist()]), want, x)


def test_erf_and_its_gradient_through_the_library():
    x = np.linspace(-4, 4, 257)
    g = ddx.trace("sum(erf(x))", x=x)
    g.backward()
    assert np.allclose(g.grads["x"], 2 / math.sqrt(math.pi) * np.exp(-x * x), rtol=1e-15, atol=0)
    g = ddx.trace("erf(x)", x=x)
    assert_same(np.asarray(g.value), reference(math.erf, x), x)


def test_beside_torch_float64_erf_is_within_one_ulp_and_erfc_within_three():
    torch = torch_or_skip()
    x = np.random.default_rng(5).standard_normal(200_000) * 2
    for fn, tfn, most in ((K.erf, torch.erf, 1), (K.erfc, torch.erfc, 3)):
        ours = fn(x)
        theirs = tfn(torch.from_numpy(x)).numpy()
        assert (np.sign(ours) == np.sign(theirs)).all()
        ulps = np.abs(ours.view(np.int64) - theirs.view(np.int64))
        assert ulps.max() <= most
        assert (ulps == 0).mean() > 0.75  # (mostly the same double)


def test_a_c_library_with_another_erf_is_found_out_and_called_per_element(monkeypatch):
    assert K._same_as_the_library()
    other = SimpleNamespace(erf=lambda v: math.nextafter(math.erf(v), 2.0), erfc=math.erfc)
    monkeypatch.setattr(K, "math", other)
    assert not K._same_as_the_library.__wrapped__()  # (the probe, run again)
    monkeypatch.setattr(K, "_same_as_the_library", lambda: False)
    x = np.linspace(-3, 3, 1001)
    assert_same(K.erf(x), reference(other.erf, x), x)
