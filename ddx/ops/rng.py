"""PyTorch's CPU random generator in numpy: mt19937 seeded as CPUGeneratorImpl seeds it, and
the transforms of ATen's CPU kernels, so that ``manual_seed(s)`` and then rand, randn, randint,
normal_ and uniform_ give PyTorch's numbers bit for bit (float32 and float64).

Sources (pytorch/pytorch): aten/src/ATen/core/MT19937RNGEngine.h (the engine and its seeding),
CPUGeneratorImpl.cpp (random64 = first word << 32 | second), core/TransformationHelper.h and
core/DistributionsHelper.h (uniform_real, uniform_int_from_to (its #else branch), normal_distribution with its
cached second sample), native/cpu/DistributionTemplates.h (normal_fill: 16 at a time, the
float32 one on AVX2; fewer than 16 numbers go one by one through normal_distribution<double>)."""

from __future__ import annotations

import math
import os

import numpy as np

from . import rng_math

N, M = 624, 397
_U32 = np.uint32
_MATRIX_A, _UPPER, _LOWER = _U32(0x9908b0df), _U32(0x80000000), _U32(0x7fffffff)


def seeded(seed: int) -> np.ndarray:
    """mt19937's init_genrand: the state array for a seed (its low 32 bits)."""
    mt = [seed & 0xffffffff]
    x = mt[0]
    for j in range(1, N):
        x = (1812433253 * (x ^ (x >> 30)) + j) & 0xffffffff
        mt.append(x)
    return np.array(mt, dtype=_U32)


def _twist(mt: np.ndarray) -> np.ndarray:
    """The next state array, in four vector steps: each reads only words already final."""
    new = mt.copy()

    def part(lo: int, hi: int, far: np.ndarray, nxt: np.ndarray) -> None:
        y = (mt[lo:hi] & _UPPER) | (nxt & _LOWER)
        new[lo:hi] = far ^ (y >> _U32(1)) ^ ((nxt & _U32(1)) * _MATRIX_A)

    part(0, N - M, mt[M:], mt[1:N - M + 1])
    part(N - M, 2 * (N - M), new[:N - M], mt[N - M + 1:2 * (N - M) + 1])
    part(2 * (N - M), N - 1, new[N - M:M - 1], mt[2 * (N - M) + 1:])
    part(N - 1, N, new[M - 1:M], new[:1])
    return new


def _temper(y: np.ndarray) -> np.ndarray:
    y = y ^ (y >> _U32(11))
    y = y ^ ((y << _U32(7)) & _U32(0x9d2c5680))
    y = y ^ ((y << _U32(15)) & _U32(0xefc60000))
    return y ^ (y >> _U32(18))


# CPUGeneratorImplState (aten/src/ATen/CPUGeneratorImpl.cpp), the bytes of get_state(): its
# legacy part (the seed, mt19937's left/seeded/next and 624 words widened to uint64, then the
# normal cache: normal_y is the cached double sample, normal_x and normal_rho are always 0),
# then the float normal cache; the padding C++ puts after normal_is_valid and at the end is 0.
STATE = np.dtype([("seed", "<u8"), ("left", "<i4"), ("seeded", "<i4"), ("next", "<u8"),
                  ("state", "<u8", (N,)), ("normal_x", "<f8"), ("normal_y", "<f8"),
                  ("normal_rho", "<f8"), ("normal_is_valid", "<i4"), ("pad", "<i4"),
                  ("float_sample", "<f4"), ("float_valid", "u1"), ("pad_end", "u1", (3,))])


class StateError(ValueError):
    """A state set_state refuses, with PyTorch's words."""


class Generator:
    """torch.default_generator. ``state`` is replaced, never changed in place, at each draw
    (so an undo log can keep it): (seed, state array, words used of it, cached normal)."""

    def __init__(self) -> None:
        self.state: tuple | None = None  # seeded on first use, as PyTorch seeds at start-up

    def manual_seed(self, seed: int) -> None:
        self.state = (seed, seeded(seed), N, None)

    def seed(self) -> int:
        """A seed of its own (PyTorch's: 53 random bits), as torch.seed()."""
        s = int.from_bytes(os.urandom(8), "little") & ((1 << 53) - 1)
        self.manual_seed(s)
        return s

    def _current(self) -> tuple:
        if self.state is None:
            self.seed()
        return self.state

    def initial_seed(self) -> int:
        return self._current()[0]

    def get_state(self) -> np.ndarray:
        """PyTorch's get_state(): STATE's 5056 bytes. ddx's ``pos`` (words used of the
        array) is mt19937's ``next``, and ``left`` is what remains plus one; just after
        seeding (the array not yet twisted) PyTorch has left 1 and next 0."""
        seed, mt, pos, cache = self._current()
        rec = np.zeros((), STATE)
        rec["seed"], rec["seeded"], rec["state"] = seed, 1, mt
        rec["left"] = N + 1 - pos
        rec["next"] = 0 if pos == N and np.array_equal(mt, seeded(seed)) else pos
        if cache is not None:
            rec["normal_y"], rec["normal_is_valid"] = cache, 1
        return np.frombuffer(rec.tobytes(), np.uint8).copy()

    def set_state(self, raw: np.ndarray) -> None:
        """PyTorch's set_state() of STATE's bytes (its checks, in its words). ddx keeps
        no float normal cache (its float32 draws of fewer than 16 go through the double
        one), so a state's float sample is not used."""
        if raw.size != STATE.itemsize:
            raise StateError(f"Expected a CPUGeneratorImplState of size {STATE.itemsize} but "
                             f"found the input RNG state size to be {raw.size}")
        rec = np.frombuffer(raw.tobytes(), STATE)[0]
        left, nxt = int(rec["left"]), int(rec["next"])
        if not (rec["seeded"] & 0xff and 0 < left <= N and nxt <= N):  # (seeded_ is a bool)
            raise StateError("Invalid mt19937 state")
        if left != 1 and nxt != N + 1 - left:
            raise StateError(f"ddx: an mt19937 state with left {left} and next {nxt} is not "
                             "one PyTorch's generator reaches (left is 625 - next)")
        mt = (rec["state"] & np.uint64(0xffffffff)).astype(_U32)
        cache = float(rec["normal_y"]) if rec["normal_is_valid"] else None
        self.state = (int(rec["seed"]), mt, N if left == 1 else nxt, cache)

    def words(self, n: int) -> np.ndarray:
        """The next ``n`` 32-bit outputs of the engine."""
        seed, mt, pos, cache = self._current()
        raw = []
        take = min(n, N - pos)
        raw.append(mt[pos:pos + take])
        pos += take
        left = n - take
        while left > 0:
            mt = _twist(mt)
            take = min(left, N)
            raw.append(mt[:take])
            pos, left = take, left - take
        self.state = (seed, mt, pos, cache)
        return _temper(np.concatenate(raw))

    def words64(self, n: int) -> np.ndarray:
        """``n`` random64() draws: two words each, the first the high half."""
        w = self.words(2 * n).astype(np.uint64)
        return (w[0::2] << np.uint64(32)) | w[1::2]

    def uniform(self, n: int, dtype, low: float = 0.0, high: float = 1.0) -> np.ndarray:
        """uniform_(low, high): 24 random bits per float32, 53 per float64."""
        if np.dtype(dtype) == np.float32:
            x = (self.words(n) & _U32((1 << 24) - 1)).astype(np.float32) * np.float32(2.0 ** -24)
            lo, hi = np.float32(low), np.float32(high)
            return x if (lo, hi) == (0, 1) else rng_math.fma32(x, hi - lo, lo)
        x = (self.words64(n) & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0 ** -53
        return x if (low, high) == (0, 1) else rng_math.fma64(x, high - low, low)

    def normal(self, n: int, dtype, mean: float = 0.0, std: float = 1.0) -> np.ndarray:
        """normal_(mean, std) as PyTorch's CPU kernel draws it for a contiguous tensor."""
        if n < 16:
            return np.array([self._normal_one(mean, std) for _ in range(n)], dtype=dtype)
        f32 = np.dtype(dtype) == np.float32
        u = self.uniform(n, dtype)
        out = np.empty(n, dtype)
        full = n - n % 16
        if f32:
            m, s = np.float32(mean), np.float32(std)
            fill = lambda rows: rng_math.box_muller_avx(rows, m, s)  # noqa: E731
        else:
            fill = lambda rows: rng_math.box_muller(rows, mean, std)  # noqa: E731
        out[:full] = fill(u[:full].reshape(-1, 16)).ravel()
        if n % 16:  # the last 16 again, from 16 new uniforms
            out[n - 16:] = fill(self.uniform(16, dtype).reshape(1, 16)).ravel()
        return out

    def _normal_one(self, mean: float, std: float) -> float:
        """normal_distribution<double>: Box-Muller, the second sample kept for the next call."""
        seed, mt, pos, cache = self._current()
        if cache is not None:
            self.state = (seed, mt, pos, None)
            return float(rng_math.fma64(cache, std, mean))
        u1, u2 = self.uniform(2, np.float64).tolist()
        r = math.sqrt(-2.0 * math.log1p(-u2))
        theta = 2.0 * math.pi * u1
        seed, mt, pos, _ = self.state
        self.state = (seed, mt, pos, r * math.sin(theta))
        return float(rng_math.fma64(r * math.cos(theta), std, mean))

    def randint(self, n: int, low: int, high: int) -> np.ndarray:
        """random_(low, high) as int64: one word per number, two from a range of 2**28 (the
        public builds' threshold: "allow approx 5% skew in uniform int generation using %")."""
        span = high - low
        if span >= 1 << 28:
            v = self.words64(n) % np.uint64(span)
        else:
            v = (self.words(n) % _U32(span)).astype(np.uint64)
        # (uint64 arithmetic, wrapping, as the C++ does)
        return (v.astype(np.uint64) + np.uint64(low & 0xffffffffffffffff)).view(np.int64)

    def permutation(self, n: int) -> np.ndarray:
        """randperm(n): Fisher-Yates from the front, one word per swap (word % (n - i))."""
        out = list(range(n))
        if n > 1:
            steps = (self.words(n - 1).astype(np.int64) % np.arange(n, 1, -1)).tolist()
            for i, k in enumerate(steps):  # (each swap needs the ones before it)
                j = i + k
                out[i], out[j] = out[j], out[i]
        return np.array(out, dtype=np.int64)


GENERATOR = Generator()
