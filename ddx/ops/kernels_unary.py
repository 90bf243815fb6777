"""Elementwise functions and their rules as PyTorch's CPU build computes them, to the last bit.

ATen's backward formulas (tools/autograd/derivatives.yaml) are compositions of tensor ops,
each rounded on its own, in the order written there: reciprocal's ``-grad * (result *
result)``, rsqrt's ``-0.5 * grad * result.pow(3)`` (pow(3) is x*x*x), erf's ``2.0 /
sqrt(M_PI) * exp(-(self.pow(2))) * grad``, asinh's ``grad * (self.pow(2) + 1).rsqrt()``.
The rules below keep those orders. tanh's is a dedicated kernel (tanh_backward) where the
compiler fuses ``1 - y*y`` into one fused multiply-add. (softsign and tanhshrink, which
torch.nn.functional writes as other ops, are recorded as those ops: ddx/graph/calls_composite.py.)

Values: asinh and acosh are std::asinh / std::acosh of the C library, element by element, in
both dtypes (ATen's cpu_kernel); erf is MKL's vsErf in float32 (as vml.py's functions);
float32 sinh, cosh, atanh and log1p are SLEEF's vector functions (kernels_sleef.py) with the
C library's on the scalar tails, and float64 sinh, cosh and atanh of fewer than 16 elements
are the C library's (all tail).

Exact kernels take float32/float64 arrays and numpy or Python floats; anything else (dual
numbers, symbolic values, object arrays) gets the plain formula, so every mode still runs."""

from __future__ import annotations

import math

import numpy as np

from . import libm, vml
from .vecloop import thread_ranges

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_SCALAR64 = (float, np.float64)
TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)  # (the C++ double 2.0 / sqrt(M_PI))


_HALF_ULPS = (2.0 ** -54, 2.0 ** -55)  # half an ulp just below 1, and below 0.5


def _one_minus_square64(o: float) -> float:
    """fma(-o, o, 1) of a Python float. o*o = p + e exactly (Dekker's product); for
    1/2 <= p <= 2, 1 - p is exact (Sterbenz), so one rounding is left; below, 1 - p = s + z
    exactly (Fast2Sum) and s + (z - e) rounds as the fma unless it is a tie of s, which
    |z - e| tells (then exactly, by integers)."""
    p = o * o
    t = o * 134217729.0  # 2**27 + 1
    h = t - (t - o)
    lo = o - h
    e = ((h * h - p) + 2 * h * lo) + lo * lo
    if 0.5 <= p <= 2.0:
        return (1.0 - p) - e
    if p < 0.5:
        s = 1.0 - p
        w = ((1.0 - s) - p) - e
        if abs(w) not in _HALF_ULPS:
            return s + w
    try:
        n, d = o.as_integer_ratio()  # (d a power of two: Python's int division rounds once)
    except (OverflowError, ValueError):
        return 1 - o * o
    dd = d * d
    try:
        return (dd - n * n) / dd
    except OverflowError:
        return 1 - o * o


def one_minus_square(o):
    """``1 - o*o`` rounded once (fma(-o, o, 1)), as ATen's compiled tanh_backward has it."""
    kind = type(o)
    if kind is np.float64 or kind is float or kind is np.ndarray and o.dtype is _F64 \
            and o.ndim == 0:
        return _one_minus_square64(float(o))  # (a Python float: g * it is g's type)
    if kind is np.float32 or kind is np.ndarray and (o.dtype is _F32 or o.dtype is _F64):
        from .rng_math import fma32, fma64  # (on first use: start-up is a feature)

        r = (fma64 if o.dtype is _F64 else fma32)(-o, o, 1.0)
        return r[()] if kind is np.float32 else r
    return 1 - o * o


def tanh_vjp(g, o, a):
    """TanhBackward0: tanh_backward(grad, result) = grad * (1 - result*result), fused."""
    if type(o) is np.float64:  # (the scalar replay's case, first)
        return g * _one_minus_square64(float(o))
    return g * one_minus_square(o)


def reciprocal(a):
    """1/a; of an integer or bool tensor a float one (ddx/graph/program.py computes it again
    in the default float dtype, as PyTorch does)."""
    if isinstance(a, np.ndarray) and a.dtype.kind in "biu":
        a = a.astype(np.float64)
    return np.reciprocal(a)


def rint(a):
    """round(a): an integer tensor is its own rounding (numpy's rint would make it float)."""
    if isinstance(a, np.ndarray) and a.dtype.kind in "biu":
        return a.copy()
    return np.rint(a)


# (the ufuncs these compute: rules that call them are differentiated by these rows)
reciprocal.ufunc, rint.ufunc = np.reciprocal, np.rint


def kept(g, keep):
    """ATen's masked gradients (threshold_backward, clamp_backward, where's): g where
    ``keep``, else a +0 of g's dtype, also where g is nan (g * keep gives -0 for a negative
    g, and nan)."""
    if isinstance(g, (np.ndarray, np.floating)) and g.dtype.kind == "f":
        return np.where(keep, g, g.dtype.type(0))
    return g * keep


def zero_slope(g, o=None, *inputs, **kw):
    """The rule of an op whose slope is 0 (floor, sign, ...): PyTorch's zeros_like(grad), +0
    (g * 0 gives -0 for a negative g)."""
    if isinstance(g, (np.ndarray, np.floating)) and g.dtype.kind == "f":
        return np.zeros_like(g)
    return g * 0


def relu_vjp(g, o, a):
    """ReluBackward0, ATen's threshold_backward: the gradient where the output is positive."""
    return kept(g, o > 0)


def reciprocal_vjp(g, o, a):
    """ReciprocalBackward0: ``-grad * (result * result)``."""
    return -g * (o * o)


def rsqrt_vjp(g, o, a):
    """RsqrtBackward0: ``-0.5 * grad * result.pow(3)``, pow(3) being (r*r)*r."""
    return (-0.5 * g) * ((o * o) * o)


def erf_vjp(g, o, a):
    """ErfBackward0: ``2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad``."""
    m = -(a * a)
    return (TWO_OVER_SQRT_PI * vml.exp(m)) * g


def asinh_vjp(g, o, a):
    """AsinhBackward0: ``grad * (self.pow(2) + 1).rsqrt()`` (rsqrt: 1 / sqrt)."""
    return g * (1 / np.sqrt(a * a + 1))


def acosh_vjp(g, o, a):
    """AcoshBackward0 (real): ``grad * (self * self - 1).rsqrt()``."""
    return g * (1 / np.sqrt(a * a - 1))


def atanh_vjp(g, o, a):
    """AtanhBackward0: ``grad * 1 / (1 - self.pow(2))``."""
    return g / (1 - a * a)


# --- values --------------------------------------------------------------------------------

def c_library(ufunc: np.ufunc, double, single_name: str):
    """``ufunc`` as the C library computes it one element at a time (ATen's cpu_kernel of
    std::NAME): float64 by ``double`` (math's, which is the C library's), float32 by the
    library's float function; other inputs by the ufunc."""
    single: list = []

    def call(x, out=None):
        kind = type(x)
        if kind is np.float64 and out is None:  # (the one-liner's case, first)
            return np.float64(_safe(double, float(x)))
        if kind is np.ndarray and x.dtype is _F64 or kind in _SCALAR64:
            fn, dtype = double, _F64
        elif kind is np.ndarray and x.dtype is _F32 or kind is np.float32:
            if not single:
                single.append(libm.function(single_name))
            fn, dtype = single[0], _F32
            if fn is None:
                return ufunc(x) if out is None else ufunc(x, out=out)
        else:
            return ufunc(x) if out is None else ufunc(x, out=out)
        if kind is float:
            return _safe(fn, x)
        flat = np.asarray(x).ravel().tolist()
        result = np.fromiter((_safe(fn, v) for v in flat), dtype, len(flat)).reshape(np.shape(x))
        if out is not None:
            out[...] = result
            return out
        return result if kind is np.ndarray else result[()]

    call.__name__ = call.__qualname__ = ufunc.__name__
    call.ufunc = ufunc  # (the op table finds the row of np.arcsinh by it)
    return call


_DEFAULT_NAN = -math.nan  # (x86's default nan, which the C library's 0/0 gives: sign bit set)


def _safe(fn, v: float) -> float:
    try:
        return fn(v)
    except ValueError:  # (math's domain error: the C library's (x-x)/(x-x))
        return _DEFAULT_NAN
    except OverflowError:
        return math.copysign(math.inf, v)


arcsinh = c_library(np.arcsinh, math.asinh, "asinhf")
arccosh = c_library(np.arccosh, math.acosh, "acoshf")

def _mkl_or(name: str, fallback_name: str):
    """float32 (and float64 where vml.torch64(): the REPL) by MKL's vm{s,d}NAME (HA) as
    torch's CPU build (ATen's vml.h sends erf and erfc there), else ddx/ops/kernels.py's
    ``fallback_name`` (math.erf's values)."""
    mkl = vml.caller(name)
    fallback: list = []

    def call(a):
        dt = vml.mkl_dtype(a)
        if dt is not None:
            src = np.ascontiguousarray(a, dt)
            dst = np.empty(src.shape, dt)
            vml.apply(mkl(dt), src, dst)
            dst = dst.reshape(np.shape(a))
            return dst if type(a) is np.ndarray else dst[()]
        if not fallback:
            from . import kernels  # (whose erf module is imported at the first call)

            fallback.append(getattr(kernels, fallback_name))
        return fallback[0](a)

    call.__name__ = call.__qualname__ = fallback_name
    return call


erf_value = _mkl_or("Erf", "erf")
erfc_value = _mkl_or("Erfc", "erfc")


def erfc_vjp(g, o, a):
    """ErfcBackward0: ``-2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad``."""
    m = -(a * a)
    return (-TWO_OVER_SQRT_PI * vml.exp(m)) * g


def logit(a):
    """logit (eps None): x / (1 - x), then MKL's log in float32 (LogitMKLKernel)."""
    return vml.log(a / (1 - a))


# --- SLEEF's (ddx/ops/kernels_sleef.py) for float32; float64 stays numpy's -------------------

def _sleef(ufunc: np.ufunc, vector_name: str, libm_name: str | None, double=None):
    """``ufunc``; float32 as ATen's AVX-512 kernel: SLEEF's vector function, and where
    ``libm_name`` is given (cpu_kernel_vec), the C library's for the elements past the last
    whole 32 of each thread's range (at::parallel_for's split of GRAIN_SIZE). float64: with
    ``double`` (the C library's function), numbers and arrays of fewer than 16 elements, which
    are all tail in ATen's float64 loop; longer ones stay numpy's (SLEEF's float64 functions
    are not done here)."""
    single: list = []

    def exact(x, out=None):
        kind = type(x)
        if double is not None:
            if kind is np.float64 and out is None:
                return np.float64(double(float(x)))
            if kind is float and out is None:
                return double(x)
            if kind is np.ndarray and x.dtype is _F64 and x.size < 16:
                r = np.array([double(v) for v in x.ravel().tolist()], _F64).reshape(x.shape)
                if out is not None:
                    out[...] = r
                    return out
                return r
        if not (kind is np.ndarray and x.dtype is _F32 or kind is np.float32):
            return ufunc(x) if out is None else ufunc(x, out=out)
        from . import kernels_sleef

        vector = _blocks(getattr(kernels_sleef, vector_name))
        flat = np.ascontiguousarray(x, _F32).reshape(-1)
        result = np.empty_like(flat)
        if libm_name is None:
            result[...] = vector(flat)
        else:
            if not single:
                single.append(libm.function(libm_name))
            for begin, end in thread_ranges(flat.size):
                body = begin + (end - begin) // 32 * 32
                if body > begin:
                    result[begin:body] = vector(flat[begin:body])
                if end > body:
                    tail = flat[body:end].tolist()
                    result[body:end] = [_safe(single[0], v) for v in tail] if single[0] \
                        else ufunc(flat[body:end])
        result = result.reshape(np.shape(x))
        if out is not None:
            out[...] = result
            return out
        return result if kind is np.ndarray else result[()]

    def call(x, out=None):
        r = exact(x, out)
        kind = type(r)
        if (kind is float or kind is np.float32 or kind is np.float64) and not math.isfinite(r) \
                or kind is np.ndarray and r.dtype.kind == "f" and not np.isfinite(r).all():
            ufunc(x)  # (numpy's own flags for what became inf or nan: the trace's warnings)
        return r

    call.__name__ = call.__qualname__ = ufunc.__name__
    call.ufunc = ufunc
    return call


def _blocks(vector, block: int = 65536):
    """``vector`` on 65,536 elements at a time (its temporaries stay in the cache: 5x)."""
    def run(flat: np.ndarray) -> np.ndarray:
        if flat.size <= block:
            return vector(flat) if flat.size else flat.copy()
        out = np.empty_like(flat)
        for at in range(0, flat.size, block):
            out[at:at + block] = vector(flat[at:at + block])
        return out
    return run


def _sinh64(v: float) -> float:
    try:
        return math.sinh(v)
    except OverflowError:
        return math.copysign(math.inf, v)


def _cosh64(v: float) -> float:
    try:
        return math.cosh(v)
    except OverflowError:
        return math.inf


def _atanh64(v: float) -> float:
    if v == 1.0 or v == -1.0:  # (the C library's pole; math calls it a domain error)
        return math.copysign(math.inf, v)
    try:
        return math.atanh(v)
    except ValueError:
        return _DEFAULT_NAN


def _exp2_64(v: float) -> float:
    try:
        return math.exp2(v)
    except OverflowError:
        return math.inf


sinh = _sleef(np.sinh, "sinhf", "sinhf", _sinh64)
cosh = _sleef(np.cosh, "coshf", "coshf", _cosh64)
arctanh = _sleef(np.arctanh, "atanhf", "atanhf", _atanh64)
log1p = _sleef(np.log1p, "log1pf", None)
expm1 = _sleef(np.expm1, "expm1f", None)
exp2 = _sleef(np.exp2, "exp2f", "exp2f", _exp2_64)
