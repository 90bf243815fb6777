"""ATen's elementwise CPU loop (cpu_kernel_vec, aten/src/ATen/native/cpu/Loops.h) as the
activation kernels of ops/kernels_act.py see it: the vector lambda over 2 * Vectorized<T>::size()
elements at a time, the scalar lambda over the rest of each thread's chunk. Measured on torch
2.13: these kernels run their AVX512 build where the CPU has it (32 float32 or 16 float64 at a
time: a 16-element float32 tensor is all scalar), else AVX2's (16 or 8). The vector lambdas
call Sleef (ops/sleef.py), the scalar ones the C library (here: ctypes for float32, Python's
math module for float64)."""

from __future__ import annotations

import math
import os

import numpy as np

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
GRAIN = 32768  # at::internal::GRAIN_SIZE: below it TensorIterator runs on one thread
_CAPABILITY: list = []


def ports():
    """(ops/sleef.py, ops/sleef64.py), imported at the first array: a one-liner of numbers
    never loads them."""
    from . import sleef, sleef64

    return sleef, sleef64
_THREADS: list = []


def exact_dtype(*args):
    """The dtype (float32 or float64) when every argument is an ndarray or numpy scalar of it."""
    dt = None
    for a in args:
        kind = type(a)
        if kind is not np.ndarray and kind is not np.float64 and kind is not np.float32:
            return None
        d = a.dtype
        if (d != F32 and d != F64) or (dt is not None and d != dt):
            return None
        dt = d
    return dt


_FLAGS: list = []


def cpu_flags() -> set:
    """The CPU's feature flags (/proc/cpuinfo; empty where there is none)."""
    if not _FLAGS:
        flags: set = set()
        try:
            with open("/proc/cpuinfo") as info:
                for line in info:
                    if line.startswith("flags"):
                        flags = set(line.split(":", 1)[1].split())
                        break
        except OSError:
            pass
        _FLAGS.append(flags)
    return _FLAGS[0]


def avx512() -> bool:
    """Whether PyTorch runs its AVX512 kernels here: ATEN_CPU_CAPABILITY when set, else the
    CPU's flags as torch's cpuinfo test reads them (avx512vl, bw, dq and fma); AVX2 otherwise."""
    if not _CAPABILITY:
        asked = os.environ.get("ATEN_CPU_CAPABILITY", "").strip().lower()
        _CAPABILITY.append(asked == "avx512" if asked else
                           {"avx512vl", "avx512bw", "avx512dq", "fma"} <= cpu_flags())
    return _CAPABILITY[0]


def threads() -> int:
    """PyTorch's default number of threads: one per core it may run on."""
    if not _THREADS:
        try:
            n = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            n = os.cpu_count() or 1
        _THREADS.append(max(1, n))
    return _THREADS[0]


def tails(n: int, lanes: int, grain: int = GRAIN) -> list[tuple[int, int]]:
    """(begin, end) of the elements that ATen computes one at a time: the last n % lanes of
    each thread's chunk (at::parallel_for's split: divup(n, threads) each)."""
    n_threads = threads()
    if n < grain or n_threads == 1:
        chunks = [(0, n)]
    else:
        k = min(n_threads, -(-n // grain))
        size = -(-n // k)
        chunks = [(b, min(n, b + size)) for b in range(0, n, size)]
    return [(e - (e - b) % lanes, e) for b, e in chunks if (e - b) % lanes]


def elementwise(vector, scalar, args, dt, grain: int = GRAIN, py=None):
    """``vector`` over the vector bodies and ``scalar`` over the tails, as ATen's loop does.
    Both take and return flat arrays of ``dt``; the result has the broadcast shape. ``py``, the
    scalar lambda on Python floats (C doubles), serves float64 numpy scalars: the one-liner's
    hot path."""
    if py is not None and all(type(v) is np.float64 for v in args):
        try:
            out = py(*(float(v) for v in args))
        except (ArithmeticError, ValueError):  # (1/0, fsum's overflow: numpy's rules instead)
            out = None
        if out is not None:
            if not math.isfinite(out):
                events(out, args)
            return np.float64(out)
    shape = np.broadcast_shapes(*(np.shape(a) for a in args))
    flat = [np.broadcast_to(a, shape).ravel() for a in args]
    n = flat[0].size
    ends = tails(n, (32 if dt == F32 else 16) if avx512() else (16 if dt == F32 else 8), grain)
    with np.errstate(all="ignore"):
        if ends and ends[0] == (0, n):
            out = scalar(*flat)
        else:
            out = np.array(vector(*flat), dt)
            for b, e in ends:
                out[b:e] = scalar(*(f[b:e] for f in flat))
    events(out, flat)
    out = out.reshape(shape)
    return out if type(args[0]) is np.ndarray else out[()]


_INF, _BIG = np.array(np.inf), np.array(1e308)


def events(out, args) -> None:
    """numpy's floating-point events for a result, as the plain formulas raised them: invalid
    where a nan arises, overflow where an inf arises from finite inputs. (The kernels' inner
    steps run with events off: their intermediate infinities are no user's concern.)"""
    out = np.asarray(out)
    if np.isfinite(out).all():
        return
    nan_in = inf_in = False
    for a in args:
        a = np.asarray(a)
        nan_in = nan_in | np.isnan(a)
        inf_in = inf_in | ~np.isfinite(a)
    if np.any(np.isnan(out) & ~nan_in):
        np.subtract(_INF, _INF)
    if np.any(np.isinf(out) & ~inf_in):
        np.multiply(_BIG, _BIG)


# --- the C library's functions over a few values (the scalar lambdas) -------------------------



def libm(name: str, x: np.ndarray) -> np.ndarray:
    """``name`` (expf, expm1f, log1pf, tanhf, erff) as the C library computes it, in x's dtype:
    float32's ``expf``..., float64's ``exp``... (Python's math module calls the same)."""
    if x.dtype == F32:
        return ports()[0].libm32(name, x)
    fn = {"expf": pexp, "expm1f": pexpm1, "log1pf": plog1p, "tanhf": math.tanh,
          "erff": math.erf}[name]
    return np.array([fn(v) for v in x.tolist()], F64)


def pexp(v: float) -> float:
    """The C library's exp of a double (math.exp raises where C returns inf)."""
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


def pexpm1(v: float) -> float:
    try:
        return math.expm1(v)
    except OverflowError:
        return math.inf


def plog1p(v: float) -> float:
    try:
        return math.log1p(v)
    except ValueError:
        return -math.inf if v == -1 else math.nan


def pfma(a: float, b: float, c: float) -> float:
    """a*b + c rounded once, on Python floats: the product split exactly into two doubles
    (Dekker), then math.fsum, which rounds the exact sum once."""
    p = a * b
    if not math.isfinite(p) or not math.isfinite(c):
        return p + c
    if p != 0 and abs(p) < 2.0 ** -960:  # (the product's error would underflow: exactly)
        from fractions import Fraction

        return float(Fraction(a) * Fraction(b) + Fraction(c))
    t = 134217729.0 * a
    ah = t - (t - a)
    t = 134217729.0 * b
    bh = t - (t - b)
    al, bl = a - ah, b - bh
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return math.fsum((p, err, c)) if math.isfinite(err) else p + c


# float64 arrays longer than this take numpy's exp, expm1, log1p, tanh and the C library's erf
# in the vector bodies instead of the Sleef ports: the same formulas, within an ulp of Sleef's
# but not always its bits, and 50 to 200 times faster (the ports' fused multiply-adds are
# emulated). Up to it (one thread's worth, GRAIN_SIZE) float64 is PyTorch's to the bit;
# float32 always is.
EXACT64_LIMIT = GRAIN


def _sleef64(x) -> bool:
    return x.size <= EXACT64_LIMIT


def vexp(x):
    sleef, sleef64 = ports()
    if x.dtype == F32:
        return sleef.expf(x)
    return sleef64.expd(x) if _sleef64(x) else np.exp(x)


def vexpm1(x):
    sleef, sleef64 = ports()
    if x.dtype == F32:
        return sleef.expm1f(x)
    return sleef64.expm1d(x) if _sleef64(x) else np.expm1(x)


def vlog1p(x):
    sleef, sleef64 = ports()
    if x.dtype == F32:
        return sleef.log1pf(x)
    return sleef64.log1pd(x, avx512()) if _sleef64(x) else np.log1p(x)


def vtanh(x):
    sleef, sleef64 = ports()
    if x.dtype == F32:
        return sleef.tanhf(x)
    return sleef64.tanhd(x) if _sleef64(x) else np.tanh(x)


def verf(x):
    """float64 only: Sleef's erf (ATen's Vectorized<double>::erf), or past the limit libm's."""
    if _sleef64(x):
        return ports()[1].erfd(x)
    from .kernels_erf import erf

    return erf(x)


def fma(a, b, c):
    """a*b + c rounded once, in a's dtype (where GCC contracts)."""
    from .rng_math import fma32

    return fma32(a, b, c) if a.dtype == F32 else ports()[0].fma_f64(a, b, c)


def _const(dt, value: float):
    return dt.type(value)


