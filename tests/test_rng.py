"""ddx/ops/rng.py against PyTorch's CPU generator, bit for bit: after manual_seed(s), rand, randn,
randint, normal_ and uniform_ give PyTorch's numbers in float32 and float64, below and above
the 16 numbers where PyTorch changes how it draws normals, and the state carries over between
calls. The engine is also checked against numpy's own MT19937, and the exact fused
multiply-adds against rational arithmetic."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from conftest import torch_or_skip
from hypothesis import given, settings
from hypothesis import strategies as st

from ddx.ops import rng_math
from ddx.ops.rng import Generator, N, seeded

SEEDS = [0, 1, 42, 2**31 + 5]
SIZES = [1, 7, 15, 16, 17, 100, 1000]
DTYPES = ["float32", "float64"]


def same_bits(ours: np.ndarray, theirs) -> bool:
    theirs = theirs.numpy()
    return ours.dtype == theirs.dtype and ours.shape == theirs.shape and \
        ours.tobytes() == theirs.tobytes()


def draw(gen: Generator, torch, what: str, n: int, dtype: str):
    """One call, ours and PyTorch's."""
    tdt = getattr(torch, dtype)
    if what == "rand":
        return gen.uniform(n, dtype), torch.rand(n, dtype=tdt)
    if what == "randn":
        return gen.normal(n, dtype), torch.randn(n, dtype=tdt)
    if what == "randint":
        return gen.randint(n, -3, 1000), torch.randint(-3, 1000, (n,))
    if what == "normal_":
        return gen.normal(n, dtype, 0.3, 2.5), torch.empty(n, dtype=tdt).normal_(0.3, 2.5)
    if what == "uniform_":
        return gen.uniform(n, dtype, -1.3, 2.9), torch.empty(n, dtype=tdt).uniform_(-1.3, 2.9)
    raise AssertionError(what)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("what", ["rand", "randn", "randint", "normal_", "uniform_"])
def test_streams_match_pytorch(seed, dtype, what):
    torch = torch_or_skip()
    gen = Generator()
    for n in SIZES:
        torch.manual_seed(seed)
        gen.manual_seed(seed)
        ours, theirs = draw(gen, torch, what, n, dtype)
        assert same_bits(ours, theirs), (seed, n, dtype, what)
        # a second call goes on from where the first left off
        ours, theirs = draw(gen, torch, what, n, dtype)
        assert same_bits(ours, theirs), (seed, n, dtype, what, "second call")


@pytest.mark.parametrize("seed", SEEDS)
def test_interleaved_calls_carry_the_state_over(seed):
    """Mixed calls, dtypes and sizes in one stream: the words used, the position in the state
    array (across twists) and the normal kept from an odd count of small randn all carry over."""
    torch = torch_or_skip()
    gen = Generator()
    torch.manual_seed(seed)
    gen.manual_seed(seed)
    plan = [("randn", 3, "float64"), ("rand", 5, "float32"), ("randn", 1, "float32"),
            ("randint", 700, "float64"), ("randn", 33, "float32"), ("normal_", 2, "float64"),
            ("uniform_", 17, "float64"), ("randn", 15, "float64"), ("rand", 1000, "float64"),
            ("randn", 7, "float64"), ("randn", 16, "float64"), ("randn", 5, "float32")]
    for what, n, dtype in plan:
        ours, theirs = draw(gen, torch, what, n, dtype)
        assert same_bits(ours, theirs), (seed, what, n, dtype)


def test_randint_ranges_from_2_28_use_two_words_per_number():
    torch = torch_or_skip()
    gen = Generator()
    for low, high in [(-2**40, 2**41), (0, 2**32), (0, 2**32 - 1), (0, 2**28), (0, 2**28 - 1),
                      (-2**27, 2**27), (-5, -2), (2**62, 2**63 - 1)]:
        torch.manual_seed(7)
        gen.manual_seed(7)
        assert same_bits(gen.randint(50, low, high), torch.randint(low, high, (50,))), (low, high)


def test_seeds_past_32_bits_and_negative_seeds_as_pytorch():
    torch = torch_or_skip()
    gen = Generator()
    for seed in [2**32 + 3, 2**64 - 1, 2**63]:
        torch.manual_seed(seed)
        gen.manual_seed(seed)
        assert same_bits(gen.uniform(20, "float64"), torch.rand(20, dtype=torch.float64))
        assert gen.initial_seed() == torch.initial_seed() == seed


def test_a_million_numbers_match_too():
    torch = torch_or_skip()
    gen = Generator()
    for dtype in DTYPES:
        torch.manual_seed(3)
        gen.manual_seed(3)
        tdt = getattr(torch, dtype)
        assert same_bits(gen.normal(10**6 + 5, dtype), torch.randn(10**6 + 5, dtype=tdt))
        assert same_bits(gen.uniform(10**6, dtype), torch.rand(10**6, dtype=tdt))


def test_engine_matches_numpys_mt19937():
    """The vectorised twist against numpy's C implementation of the same engine."""
    for seed in SEEDS:
        bits = np.random.MT19937()
        bits.state = {"bit_generator": "MT19937", "state": {"key": seeded(seed), "pos": N}}
        gen = Generator()
        gen.manual_seed(seed)
        ours = np.concatenate([gen.words(k) for k in (1, 623, 624, 1, 2000, 5)])
        assert np.array_equal(ours, bits.random_raw(len(ours)).astype(np.uint32))


def test_the_state_is_replaced_not_changed_in_place():
    """(An undo log keeps the old state: it must stay valid after later draws.)"""
    gen = Generator()
    gen.manual_seed(5)
    before = gen.state
    first = gen.uniform(700, "float64")
    gen.normal(3, "float64")
    gen.state = before
    assert np.array_equal(gen.uniform(700, "float64"), first)


def exact_float32(value: Fraction) -> np.float32:
    """``value`` rounded to the nearest float32, ties to even."""
    near = np.float32(float(value))
    best = None
    for cand in (np.nextafter(near, np.float32(-np.inf)), near,
                 np.nextafter(near, np.float32(np.inf))):
        key = (abs(Fraction(float(cand)) - value), int(cand.view(np.int32)) & 1)
        if best is None or key < best[0]:
            best = (key, cand)
    return best[1]


finite32 = st.floats(-1e6, 1e6, width=32, allow_subnormal=False)
finite64 = st.floats(-1e100, 1e100, allow_subnormal=False)


@settings(max_examples=400, deadline=None)
@given(finite32, finite32, finite32)
def test_fma32_rounds_once(a, b, c):
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    ours = rng_math.fma32(np.float32(a), np.float32(b), np.float32(c))
    assert ours == exact_float32(exact) or (ours == 0 and exact == 0)


@settings(max_examples=400, deadline=None)
@given(finite64, finite64, finite64)
def test_fma64_rounds_once(a, b, c):
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    assert float(rng_math.fma64(a, b, c)) == float(exact)


def test_fma_halfway_cases():
    """Sums that land exactly between two float32s after rounding to float64 (where a plain
    float64 sum would round twice), and ties that are real ties."""
    a, b = np.float32(1 + 2**-23), np.float32(1 + 2**-23)  # a*b = 1 + 2^-22 + 2^-46
    for c in (np.float32(2**-24), np.float32(-2**-24), np.float32(0)):
        exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
        assert rng_math.fma32(a, b, c) == exact_float32(exact)
    one, tie = np.float32(1), np.float32(2**-24)
    assert rng_math.fma32(one, one, tie) == np.float32(1)  # a tie: to even
