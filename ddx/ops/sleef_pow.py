"""float32 x ** y as PyTorch's AVX-512 CPU kernel computes it in its vector body: SLEEF's
Sleef_powf16_u10 (xpowf of sleefsimdsp.c in its AVX512F build, every ``vmla`` a fused
multiply-add; by Naoki Shibata and contributors, Boost Software License 1.0), done with numpy
on float32 arrays operation for operation, with the double-float arithmetic of
kernels_sleef.py, so the results are the same bits.

ATen's pow (PowKernel.cpp) runs it through cpu_kernel_vec: 32 elements at a time, the last
n % 32 by the scalar ``std::pow(float, double)``, which is the C library's double pow
rounded to float; ddx/ops/kernels_pow.py does that cutting."""

from __future__ import annotations

import numpy as np

from . import libm
from .kernels_sleef import (
    FOUR_THIRDS,
    L2L,
    L2U,
    LN2_HI,
    LN2_LO,
    ONE,
    R_LN2,
    TWO,
    add2_dd,
    add2_df_f,
    add2_ff,
    add_dd,
    add_f_df,
    div_dd,
    getexp,
    getmant,
    mul_dd,
    mul_df_f,
    mulsign,
    rint_int,
    scale,
    set_nan,
    squ,
)
from .rng_math import fma32 as _fma
from .sleef import (
    dd_add2_f_f,
    dd_add_df_df,
    dd_div_df,
    dd_mul_df_df,
    dd_mul_df_f,
    dd_squ_df,
)
from .sleef import fma_f64 as fma64
from .sleef64 import LN2_DD, expk, getexp64, getmant64, poly8

F32, I32, F64, I64 = np.float32, np.int32, np.float64, np.int64
_ALL_ONES64, _SIGN64 = I64(-1), I64(-0x8000000000000000)
_C = (F32(0.66666662693023681640625), F32(3.69183861259614332084311e-09))
_INF = F32(np.inf)


def _logkf(d):
    """logkf (the AVX-512 form: exponent and significand by getexp and getmant)."""
    e = getexp(d * FOUR_THIRDS)
    e = np.where(e == _INF, F32(128), e)
    m = getmant(d)
    x = div_dd(add2_ff(F32(-1), m), add2_ff(ONE, m))
    x2 = squ(x)
    t = np.full_like(x2[0], F32(0.240320354700088500976562))
    t = _fma(t, x2[0], F32(0.285112679004669189453125))
    t = _fma(t, x2[0], F32(0.400007992982864379882812))
    s = mul_df_f((np.full_like(e, LN2_HI), np.full_like(e, LN2_LO)), e)
    s = add_dd(s, scale(x, TWO))
    c = (np.full_like(t, _C[0]), np.full_like(t, _C[1]))
    return add_dd(s, mul_dd(mul_dd(x2, x), add2_dd(mul_df_f(x2, t), c)))


def _ldexp(x, q):
    """vldexp_vf_vf_vi2: x * 2**q by four and then one power-of-two products."""
    m = q >> I32(31)
    m = (((m + q) >> I32(6)) - m) << I32(4)
    q = q - (m << I32(2))
    m = m + I32(0x7F)
    m = np.where(m > 0, m, I32(0))
    m = np.where(m > I32(0xFF), I32(0xFF), m)
    u = (m << I32(23)).astype(I32).view(F32)
    x = x * u * u * u * u
    return x * ((q + I32(0x7F)) << I32(23)).astype(I32).view(F32)


def _expkf(d):
    """expkf: exp of a double-float, as one float."""
    u = (d[0] + d[1]) * R_LN2
    q = rint_int(u)
    qf = q.astype(F32)
    s = add2_df_f(add2_df_f(d, qf * -L2U), qf * -L2L)
    s0 = s[0] + s[1]  # dfnormalize_vf2_vf2
    s1 = s[0] - s0 + s[1]
    u = np.full_like(s0, F32(0.00136324646882712841033936))
    u = _fma(u, s0, F32(0.00836596917361021041870117))
    u = _fma(u, s0, F32(0.0416710823774337768554688))
    u = _fma(u, s0, F32(0.166665524244308471679688))
    u = _fma(u, s0, F32(0.499999850988388061523438))
    t = add_dd((s0, s1), mul_df_f(squ((s0, s1)), u))
    t = add_f_df(ONE, t)
    u = _ldexp(t[0] + t[1], q)
    return np.where(d[0] < F32(-104), F32(0), u)


def powf(x: np.ndarray, y) -> np.ndarray:
    """Sleef_powf16_u10(x, y) over float32 arrays (y broadcast to x)."""
    with np.errstate(all="ignore"):
        x = np.asarray(x, F32)
        y = np.broadcast_to(np.asarray(y, F32), x.shape)
        ay = np.abs(y)
        big = F32(1 << 24)
        yisint = (np.trunc(y) == y) | (ay > big)
        ti = np.where(ay < big, y, F32(0)).astype(I32)  # (vtruncate_vi2_vf where it fits)
        yisodd = ((ti & I32(1)) == I32(1)) & yisint & (ay < big)
        result = _expkf(mul_df_f(_logkf(np.abs(x)), y))
        result = np.where(np.isnan(result), _INF, result)
        sign = np.where(x > 0, ONE, np.where(yisint, np.where(yisodd, F32(-1), ONE),
                                             F32(np.nan)))
        result = result * sign
        efx = mulsign(np.abs(x) - ONE, y)
        at_inf = np.where(efx < 0, F32(0), np.where(efx == 0, ONE, _INF))
        result = np.where(np.isinf(y), at_inf, result)
        edge = np.where(np.signbit(y) ^ (x == 0), F32(0), _INF)
        result = np.where(np.isinf(x) | (x == 0), mulsign(edge, np.where(yisodd, x, ONE)),
                          result)
        result = set_nan(np.isnan(x) | np.isnan(y), result)
        return np.where((y == 0) | (x == 1), ONE, result).astype(F32)


# --- float64: Sleef_powd8_u10 (xpow of sleefsimddp.c, AVX512F, POLY macros by Estrin) -----

_LOGK = (0.116255524079935043668677, 0.103239680901072952701192, 0.117754809412463995466069,
         0.13332981086846273921509, 0.153846227114512262845736, 0.181818180850050775676507,
         0.222222222230083560345903, 0.285714285714249172087875, 0.400000000000000077715612)
_LOGK_C = (np.float64(0.666666666666666629659233), np.float64(3.80554962542412056336616e-17))


def _logk64(d):
    """Sleef's logk (AVX512F: vgetexp and vgetmant): log of a double, as a double-double."""
    e = getexp64(d * (1.0 / 0.75))
    e = np.where(np.isposinf(e), 1024.0, e)
    m = getmant64(d)
    x = dd_div_df(dd_add2_f_f(np.float64(-1.0), m), dd_add2_f_f(np.float64(1.0), m))
    x2 = dd_squ_df(x)
    x4 = x2[0] * x2[0]
    x8 = x4 * x4
    t = fma64(x8 * x8, np.float64(_LOGK[0]), poly8(x2[0], x4, x8, *_LOGK[1:]))  # POLY9
    s = dd_mul_df_f(LN2_DD, e)
    s = dd_add_df_df(s, (x[0] * 2.0, x[1] * 2.0))
    x = dd_mul_df_df(x2, x)
    s = dd_add_df_df(s, dd_mul_df_df(x, _LOGK_C))
    x = dd_mul_df_df(x2, x)
    return dd_add_df_df(s, dd_mul_df_f(x, t))


def powd(x: np.ndarray, y) -> np.ndarray:
    """Sleef_powd8_u10(x, y) over float64 arrays (y broadcast to x)."""
    with np.errstate(all="ignore"):
        x = np.asarray(x, F64)
        y = np.broadcast_to(np.asarray(y, F64), x.shape)
        yisint = np.trunc(y) == y
        half = y * 0.5
        yisodd = (np.trunc(half) != half) & yisint
        d = dd_mul_df_f(_logk64(np.abs(x)), y)
        result = expk(d)
        result = np.where(d[0] > 709.78271114955742909217217426, np.inf, result)
        sign = np.where(x > 0, 1.0, np.where(yisint, np.where(yisodd, -1.0, 1.0), np.nan))
        result = result * sign
        efx = _mulsign64(np.abs(x) - 1.0, y)
        at_inf = np.where(efx < 0, 0.0, np.where(efx == 0, 1.0, np.inf))
        result = np.where(np.isinf(y), at_inf, result)
        edge = np.where(np.signbit(y) ^ (x == 0), 0.0, np.inf)
        result = np.where(np.isinf(x) | (x == 0), _mulsign64(edge, np.where(yisodd, x, 1.0)),
                          result)
        result = np.where(np.isnan(x) | np.isnan(y), _ALL_ONES64, result.view(I64)).view(F64)
        return np.where((y == 0) | (x == 1), 1.0, result)


def _mulsign64(a, b):
    return (np.asarray(a, F64).view(I64) ^ (np.asarray(b, F64).view(I64) & _SIGN64)).view(F64)


# --- ATen's pow loop ----------------------------------------------------------------------------

def pow_loop(a: np.ndarray, b, scalar_exponent: bool) -> np.ndarray:
    """a ** b for a float32/float64 array ``a`` (b a number, or an array of a's dtype that
    broadcasts with it) as PowKernel.cpp's cpu_kernel_vec: SLEEF's pow on the whole vectors
    of each 1-D loop, and the scalar tail by ``std::pow``: of (float, double) for a number
    exponent (the C library's double pow, rounded to float), of (float, float) for a tensor
    exponent (the C library's powf)."""
    from .vecloop import binary_loop

    single = a.dtype == F32
    return binary_loop(a, b, powf if single else powd, _tail(single, scalar_exponent),
                       scalar_exponent)


def _tail(single: bool, scalar_exponent: bool):
    if not single or scalar_exponent:
        return libm.c_pow  # (a float32 tail: the double result, rounded by the store)
    powf_c = libm.function("powf", True, 2)
    return powf_c if powf_c is not None else libm.c_pow
