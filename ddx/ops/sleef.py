"""float32 exp, expm1, log1p and tanh as PyTorch's CPU kernels compute them inside the vector
bodies of its activation functions: Sleef's ``Sleef_*f8_u10`` (the AVX2 build, where every
``vmla`` is a fused multiply-add), ported to numpy operation for operation, with its
double-float arithmetic (``df.h``, FMA variants). Also ``Vectorized<float>::erf``, ATen's own
polynomial (vec256_float.h). PyTorch registers these kernels without an AVX512 version, so the
AVX2 ones run even on AVX512 machines.

The scalar tails of those kernels call the C library (``std::exp`` and friends): ``libm32``
calls the platform's float32 functions by ctypes, element by element (a tail has at most 15).
Everything here is float32 in, float32 out; callers check the dtype."""

from __future__ import annotations

import numpy as np

from . import libm
from .rng_math import fma32, fma64

F32, I32 = np.float32, np.int32
_ONE, _ZERO = F32(1.0), F32(0.0)
_R_LN2 = F32(1.442695040888963407359924681001892137426645954152985934135449406931)
_L2U, _L2L = F32(0.693145751953125), F32(1.428606765330187045e-06)


# --- Sleef's helpers (helperavx2.h, sleefsimdsp.c) --------------------------------------------

def dd_pow2i(q):
    return ((q + I32(0x7F)) << 23).astype(I32).view(F32)


def dd_ldexp2(d, q):
    h = q >> 1
    return d * dd_pow2i(h) * dd_pow2i(q - h)


def dd_ldexp3(d, q):
    return (d.view(I32) + (q << 23)).astype(I32).view(F32)


def dd_ilogb2k(d):
    return ((d.view(I32) >> 23) & 0xFF) - I32(0x7F)


def dd_rint(u):
    """vrint_vi2_vf: round to nearest even; out of range (masked later anyway) gives 0."""
    r = np.rint(u)
    return np.where(np.abs(r) < 2.0 ** 31, r, 0).astype(I32)


def fma_f64(a, b, c):
    """float64 a*b + c rounded once: rng_math's emulation, and where it cannot be (operands past
    2**996, whose splitting overflows; products below 2**-960, whose error underflows) the
    exact sum of fractions, rounded."""
    out = fma64(a, b, c)
    with np.errstate(all="ignore"):
        p = np.asarray(a) * b
        bad = np.isnan(out) & ~np.isnan(p + c) | (np.abs(p) < 2.0 ** -960) & (p != 0)
    if bad.any():
        from fractions import Fraction

        out = np.array(out)
        a, b, c = (np.broadcast_to(v, out.shape)[bad].tolist() for v in (a, b, c))
        exact = []
        for x, y, z in zip(a, b, c):
            try:
                exact.append(float(Fraction(x) * Fraction(y) + Fraction(z)))
            except OverflowError:
                exact.append(x * y + z)
        out[bad] = exact
    return out


def dd_fma(a, b, c):
    """a*b + c rounded once, in the dtype of a (float32 or float64)."""
    return fma32(a, b, c) if a.dtype == F32 else fma_f64(a, b, c)


def dd_fms(a, b, c):  # vfmapn: a*b - c, rounded once
    return dd_fma(a, b, -c)


def dd_fnma(a, b, c):  # vfmanp: -a*b + c, rounded once
    return dd_fma(-a, b, c)


# --- double-float / double-double arithmetic (df.h, dd.h, with FMA): a pair (hi, lo) --------

def dd_add_f_f(x, y):
    rx = x + y
    return rx, (x - rx) + y


def dd_add2_f_f(x, y):
    rx = x + y
    v = rx - x
    return rx, (x - (rx - v)) + (y - v)


def dd_add2_df_f(x, y):
    rx = x[0] + y
    v = rx - x[0]
    return rx, ((x[0] - (rx - v)) + (y - v)) + x[1]


def dd_add2_df_df(x, y):
    rx = x[0] + y[0]
    v = rx - x[0]
    return rx, ((x[0] - (rx - v)) + (y[0] - v)) + (x[1] + y[1])


def dd_add_f_df(x, y):
    rx = x + y[0]
    return rx, ((x - rx) + y[0]) + y[1]


def dd_add_df_f(x, y):
    rx = x[0] + y
    return rx, ((x[0] - rx) + y) + x[1]


def dd_add_df_df(x, y):
    rx = x[0] + y[0]
    return rx, (((x[0] - rx) + y[0]) + x[1]) + y[1]


def dd_mul_df_f(x, y):
    rx = x[0] * y
    return rx, dd_fma(x[1], y, dd_fms(x[0], y, rx))


def dd_mul_df_df(x, y):
    rx = x[0] * y[0]
    return rx, dd_fma(x[0], y[1], dd_fma(x[1], y[0], dd_fms(x[0], y[0], rx)))


def dd_squ_df(x):
    rx = x[0] * x[0]
    return rx, dd_fma(x[0] + x[0], x[1], dd_fms(x[0], x[0], rx))


def dd_rec_df(d):
    qx = _ONE / d[0]
    return qx, qx * dd_fnma(d[1], qx, dd_fnma(d[0], qx, _ONE))


def dd_div_df(n, d):
    t = _ONE / d[0]
    qx = n[0] * t
    u = dd_fms(t, n[0], qx)
    qy = dd_fnma(d[1], t, dd_fnma(d[0], t, _ONE))
    return qx, dd_fma(qx, qy, dd_fma(n[1], t, u))


# --- the functions ----------------------------------------------------------------------------

def expf(d: np.ndarray) -> np.ndarray:
    """Sleef_expf8_u10 (xexpf)."""
    d = np.asarray(d, F32)
    with np.errstate(all="ignore"):
        q = dd_rint(d * _R_LN2)
        qf = q.astype(F32)
        s = fma32(qf, -_L2U, d)
        s = fma32(qf, -_L2L, s)
        u = np.full_like(s, F32(0.000198527617612853646278381))
        for c in (0.00139304355252534151077271, 0.00833336077630519866943359,
                  0.0416664853692054748535156, 0.166666671633720397949219, 0.5):
            u = fma32(u, s, F32(c))
        u = _ONE + fma32(s * s, u, s)
        u = dd_ldexp2(u, q)
        u = np.where(d < F32(-104), _ZERO, u)
        return np.where(F32(100) < d, F32(np.inf), u)


def _expk2f(d):
    """Sleef's expk2f: exp of a double-float, as a double-float."""
    u = (d[0] + d[1]) * _R_LN2
    q = dd_rint(u)
    qf = q.astype(F32)
    s = dd_add2_df_f(d, qf * -_L2U)
    s = dd_add2_df_f(s, qf * -_L2L)
    u = np.full_like(s[0], F32(0.1980960224e-3))
    for c in (0.1394256484e-2, 0.8333456703e-2, 0.4166637361e-1):
        u = fma32(u, s[0], F32(c))
    t = dd_add2_df_f(dd_mul_df_f(s, u), F32(0.166666659414234244790680580464))
    t = dd_add2_df_f(dd_mul_df_df(s, t), F32(0.5))
    t = dd_add2_df_df(s, dd_mul_df_df(dd_squ_df(s), t))
    t = dd_add_f_df(_ONE, t)
    low = d[0] < F32(-104)
    return (np.where(low, _ZERO, dd_ldexp2(t[0], q)), np.where(low, _ZERO, dd_ldexp2(t[1], q)))


def expm1f(a: np.ndarray) -> np.ndarray:
    """Sleef_expm1f8_u10 (xexpm1f)."""
    a = np.asarray(a, F32)
    with np.errstate(all="ignore"):
        d = dd_add2_df_f(_expk2f((a, np.zeros_like(a))), F32(-1.0))
        x = d[0] + d[1]
        x = np.where(a > F32(88.72283172607421875), F32(np.inf), x)
        x = np.where(a < F32(-16.635532333438687426013570), F32(-1.0), x)
        x = np.where((a == 0) & np.signbit(a), F32(-0.0), x)
        return np.where(np.isnan(a), a, x)


def tanhf(x: np.ndarray) -> np.ndarray:
    """Sleef_tanhf8_u10 (xtanhf)."""
    x = np.asarray(x, F32)
    with np.errstate(all="ignore"):
        y = np.abs(x)
        d = _expk2f((y, np.zeros_like(y)))
        e = dd_rec_df(d)
        d = dd_div_df(dd_add_df_df(d, (-e[0], -e[1])), dd_add_df_df(d, e))
        y = d[0] + d[1]
        y = np.where((np.abs(x) > F32(8.664339742)) | np.isnan(y), _ONE, y)
        y = np.copysign(y, x)  # (vmulsign: y >= 0 here)
        return np.where(np.isnan(x), x, y)


_LN2_DF = (F32(0.69314718246459960938), F32(-1.904654323148236017e-09))


def log1pf(d: np.ndarray) -> np.ndarray:
    """Sleef_log1pf8_u10 (xlog1pf, the branch without AVX512F)."""
    d = np.asarray(d, F32)
    with np.errstate(all="ignore"):
        dp1 = d + _ONE
        o = dp1 < F32(np.finfo(F32).tiny)
        dp1 = np.where(o, dp1 * F32(2.0 ** 64), dp1)
        e = dd_ilogb2k(dp1 * F32(1.0 / 0.75))
        t = dd_ldexp3(np.ones_like(d), -e)
        m = fma32(d, t, t - _ONE)
        e = np.where(o, e - I32(64), e)
        s = dd_mul_df_f(_LN2_DF, e.astype(F32))
        x = dd_div_df((m, np.zeros_like(m)), dd_add_f_f(F32(2.0), m))
        x2 = x[0] * x[0]
        t = np.full_like(x2, F32(0.3027294874))
        t = fma32(t, x2, F32(0.3996108174))
        t = fma32(t, x2, F32(0.6666694880))
        s = dd_add_df_df(s, (x[0] * F32(2.0), x[1] * F32(2.0)))
        s = dd_add_df_f(s, (x2 * x[0]) * t)
        r = s[0] + s[1]
        r = np.where(d > F32(1e38), F32(np.inf), r)
        r = np.where(F32(-1) > d, F32(np.nan), r)
        r = np.where(d == F32(-1), F32(-np.inf), r)
        r = np.where((d == 0) & np.signbit(d), F32(-0.0), r)
        return np.where(np.isnan(d), d, r)


_ERF_P = F32(0.3275911)
_ERF_C = [F32(v) for v in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)]


def erf_vec(x: np.ndarray) -> np.ndarray:
    """Vectorized<float>::erf (vec256_float.h): Abramowitz and Stegun's 7.1.26 with Sleef's exp."""
    x = np.asarray(x, F32)
    with np.errstate(all="ignore"):
        t = _ONE / fma32(_ERF_P, np.abs(x), _ONE)
        r = np.full_like(t, _ERF_C[0])
        for c in _ERF_C[1:]:
            r = fma32(r, t, c)
        y = fma32(-expf(-(x * x)) * t, r, _ONE)
        return np.copysign(y, x)  # (the sign bit or-ed in: y >= 0 here)


# --- the C library's float32 functions, for the scalar tails ----------------------------------

_NUMPY32 = {"expf": np.exp, "expm1f": np.expm1, "log1pf": np.log1p, "tanhf": np.tanh}


def libm32(name: str, x: np.ndarray) -> np.ndarray:
    """The C library's float32 ``name`` (expf, expm1f, log1pf, tanhf, erff) over a few values."""
    x = np.asarray(x, F32)
    fn = libm.function(name)
    if fn is None:  # (no C library found: numpy's, or erf through float64)
        if name == "erff":
            import math
            return np.array([math.erf(v) for v in x.ravel().tolist()], np.float64) \
                .astype(F32).reshape(x.shape)
        return _NUMPY32[name](x)
    return np.array([fn(v) for v in x.ravel().tolist()], F32).reshape(x.shape)
