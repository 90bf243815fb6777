"""lgamma, digamma and erfinv as ATen's CPU kernels compute them: element by element (their
Vectorized forms map the scalar function), with the C library's lgamma/lgammaf, erf/erff,
exp/expf, log/logf (glibc's, through ctypes, in the input's precision) and ATen's own
calc_digamma (Cephes) and calc_erfinv (two Newton steps from a rational first guess).

A plain loop, so slow on large tensors (about a microsecond per element and call); these
are the everyday functions of a lesson, not of a training loop. Where the C library is not
found the float64 functions of Python's math module stand in (the same glibc calls on Linux)."""

from __future__ import annotations

import math

import numpy as np

from . import libm


def _f(name: str, single: bool):
    """The C library's function ``name`` (``namef`` for float32) on Python floats."""
    single = single and name != "tan"
    fn = libm.function(name + "f" if single else name, single)
    if fn is None:
        return getattr(math, name) if name != "lgamma" else _lgamma_py
    return fn


def _lgamma_py(x: float) -> float:
    try:
        return math.lgamma(x)
    except ValueError:
        return math.inf


def _each(fn, a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    dtype = a.dtype if a.dtype.kind == "f" else np.dtype(np.float32)
    flat = a.astype(dtype).reshape(-1).tolist()
    return np.asarray([fn(x) for x in flat], dtype=dtype).reshape(a.shape)


def _single(a) -> bool:
    return np.asarray(a).dtype == np.float32


# --- lgamma ----------------------------------------------------------------------------------------
def lgamma(a):
    f = _f("lgamma", _single(a))
    return _each(f, a)


# --- digamma (ATen's calc_digamma, Cephes) -----------------------------------------------------
_PSI_A = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
          -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
          8.33333333333333333333E-2)
_PSI_10 = 2.25175258906672110764


def _digamma64(x: float) -> float:
    if x == 0:
        return math.copysign(math.inf, -x)
    if x < 0:
        if math.isinf(x) or x == math.trunc(x):
            return math.nan
        r = math.fmod(x, 1.0)  # (std::modf's fraction: tan(pi r) is the more accurate)
        return _digamma64(1 - x) - math.pi / _f("tan", False)(math.pi * r)
    result = 0.0
    while x < 10:
        result -= 1 / x
        x += 1
    if x == 10:
        return result + _PSI_10
    y = 0.0
    if x < 1.0e17:
        z = 1.0 / (x * x)
        p = 0.0
        for c in _PSI_A:
            p = p * z + c
        y = z * p
    return result + _f("log", False)(x) - (0.5 / x) - y


def _digamma32(x: float) -> float:
    f32 = np.float32
    x = f32(x)
    if x == 0:
        return float(math.copysign(math.inf, -x))
    if x < 0:
        if np.isinf(x) or x == np.trunc(x):
            return math.nan
        r = math.fmod(float(x), 1.0)
        pi_over_tan = f32(math.pi / _f("tan", False)(math.pi * r))
        return float(f32(_digamma32(f32(1) - x)) - pi_over_tan)
    result = f32(0)
    while x < 10:
        result = f32(result - f32(1) / x)
        x = f32(x + f32(1))
    if x == 10:
        return float(result + f32(_PSI_10))
    y = f32(0)
    if x < f32(1.0e17):
        z = f32(1) / (x * x)
        p = f32(0)
        for c in _PSI_A:
            p = f32(p * z + f32(c))
        y = z * p
    return float(result + f32(_f("log", True)(float(x))) - (f32(0.5) / x) - y)


def digamma(a):
    return _each(_digamma32 if _single(a) else _digamma64, a)


# --- erfinv (ATen's calc_erfinv) -----------------------------------------------------------------
_A = (0.886226899, -1.645349621, 0.914624893, -0.140543331)
_B = (-2.118377725, 1.442710462, -0.329097515, 0.012229801)
_C = (-1.970840454, -1.624906493, 3.429567803, 1.641345311)
_D = (3.543889200, 1.637067800)


def _erfinv_with(t, erf, exp, log):
    a, b, c, d = ([t(v) for v in vs] for vs in (_A, _B, _C, _D))
    one, two = t(1.0), t(2.0)
    scale = two * t(1 / math.sqrt(math.pi))  # (2 * c10::frac_1_sqrt_pi<T>)

    def fn(y: float) -> float:
        y = t(y)
        y_abs = abs(y)
        if y_abs > 1.0:
            return math.nan
        if y_abs == 1.0:
            return math.copysign(math.inf, y)
        if y_abs <= t(0.7):
            z = y * y
            num = ((a[3] * z + a[2]) * z + a[1]) * z + a[0]
            dem = (((b[3] * z + b[2]) * z + b[1]) * z + b[0]) * z + one
            x = y * num / dem
        else:
            z = t(math.sqrt(float(t(-t(log(float((one - y_abs) / two)))))))
            num = ((c[3] * z + c[2]) * z + c[1]) * z + c[0]
            dem = (d[1] * z + d[0]) * z + one
            x = t(math.copysign(float(num), float(y))) / dem
        for _ in range(2):
            x = x - (t(erf(float(x))) - y) / (scale * t(exp(float(-x * x))))
        return float(x)
    return fn


def erfinv(a):
    single = _single(a)
    t = np.float32 if single else float
    fn = _erfinv_with(t, _f("erf", single), _f("exp", single), _f("log", single))
    with np.errstate(all="ignore"):
        return _each(fn, a)


# --- trigamma (ATen's), and the derivatives the rules need on dual numbers ----------------------
def trigamma(a):
    """ATen's trigamma: the reflection below 1/2, six steps up, then its asymptotic series
    (vectorised: the same operations on every element)."""
    a = np.asarray(a)
    dtype = a.dtype if a.dtype.kind == "f" else np.dtype(np.float64)
    t = dtype.type
    x = a.astype(dtype)
    with np.errstate(all="ignore"):
        low = x < t(0.5)
        s = np.sin(t(math.pi) * x)
        result = np.where(low, -(t(math.pi) * t(math.pi)) / (s * s), t(0))
        x = np.where(low, t(1) - x, x)
        for _ in range(6):
            result = result + t(1) / (x * x)
            x = x + t(1)
        ixx = t(1) / (x * x)
        series = (t(1) + t(1) / (t(2) * x)
                  + ixx * (t(1 / 6) - ixx * (t(1 / 30) - ixx * t(1 / 42)))) / x
        return np.where(low, -(result + series), result + series).astype(dtype)


def _tetragamma(x: np.ndarray) -> np.ndarray:
    """psi''(x) (only a dual number's tangent needs it: accurate, not ATen's bits)."""
    x = np.asarray(x, dtype=np.float64)
    result = np.zeros(x.shape)
    for _ in range(10):
        result = result - 2 / (x * x * x)
        x = x + 1
    i2 = 1 / (x * x)
    series = -i2 * (1 + 1 / x + i2 * (0.5 - i2 * (1 / 6 - i2 * (1 / 6 - i2 * 0.3))))
    return result + series


def _dual_of(fn, slope):
    """fn on arrays; on a dual number (value, tangent), fn(value) with tangent slope * t."""
    def apply(a):
        if hasattr(a, "p") and hasattr(a, "t") and not isinstance(a, np.ndarray):
            p = np.asarray(a.p)
            t = 0.0 if a.t is None else a.t
            return type(a)(fn(p), slope(p) * t)
        if np.asarray(a).dtype == object:
            raise TypeError("no formula for this special function")
        return fn(a)
    return apply


digamma_of = _dual_of(digamma, trigamma)
trigamma_of = _dual_of(trigamma, _tetragamma)


def lgamma_vjp(g, o, a):
    return g * digamma_of(a)


def lgamma_jvp(ts, o, a):
    return ts[0] * digamma(a)


def digamma_vjp(g, o, a):
    return g * trigamma_of(a)


def digamma_jvp(ts, o, a):
    return ts[0] * trigamma(a)
