"""float64 exp, expm1, log1p and tanh as the vector bodies of PyTorch's activation kernels
compute them: Sleef's ``Sleef_*d8_u10`` (the AVX512F build, every ``vmla`` a fused multiply-add;
polynomials by Estrin's scheme, its POLY macros), ported to numpy with the double-double
arithmetic of ops/sleef.py (dd.h's FMA variants). float64 in, float64 out."""

from __future__ import annotations

import numpy as np

from .sleef import (
    dd_add2_df_df,
    dd_add2_df_f,
    dd_add2_f_f,
    dd_add_df_df,
    dd_add_df_f,
    dd_add_f_df,
    dd_add_f_f,
    dd_div_df,
    dd_mul_df_df,
    dd_mul_df_f,
    dd_rec_df,
    dd_squ_df,
)
from .sleef import fma_f64 as fma64

F64, I64 = np.float64, np.int64
_R_LN2 = 1.442695040888963407359924681001892137426645954152985934135449406931
_L2U = .69314718055966295651160180568695068359375
_L2L = .28235290563031577122588448175013436025525412068e-12
LN2_DD = (F64(0.693147180559945286226764), F64(2.319046813846299558417771e-17))


def _rint_int(u):
    """vrint_vi_vd of an integral double; out of range (masked later) gives 0."""
    return np.where(np.abs(u) < 2.0 ** 31, u, 0).astype(I64)


def _pow2i(q):
    return ((q + 0x3FF) << 52).view(F64)


def _ldexp2(d, q):
    h = q >> 1
    return d * _pow2i(h) * _pow2i(q - h)


def _ldexp3(d, q):
    return (d.view(I64) + (q << 52)).view(F64)


def _poly2(x, c1, c0):
    return fma64(x, F64(c1), F64(c0))


def _poly4(x, x2, c3, c2, c1, c0):
    return fma64(x2, _poly2(x, c3, c2), _poly2(x, c1, c0))


def poly8(x, x2, x4, *c):
    return fma64(x4, _poly4(x, x2, *c[:4]), _poly4(x, x2, *c[4:]))


def _poly10(x, x2, x4, x8, *c):
    return fma64(x8, _poly2(x, *c[:2]), poly8(x, x2, x4, *c[2:]))


def _poly7(x, x2, x4, *c):
    three = fma64(x2, F64(c[0]), _poly2(x, c[1], c[2]))  # POLY3
    return fma64(x4, three, _poly4(x, x2, *c[3:]))


_EXP = (+0.2081276378237164457e-8, +0.2511210703042288022e-7, +0.2755762628169491192e-6,
        +0.2755723402025388239e-5, +0.2480158687479686264e-4, +0.1984126989855865850e-3,
        +0.1388888888914497797e-2, +0.8333333333314938210e-2, +0.4166666666666602598e-1,
        +0.1666666666666669072e+0)


def expd(d: np.ndarray) -> np.ndarray:
    """Sleef_expd8_u10 (xexp, ENABLE_FMA_DP)."""
    d = np.asarray(d, F64)
    with np.errstate(all="ignore"):
        u = np.rint(d * _R_LN2)
        q = _rint_int(u)
        s = fma64(u, F64(-_L2U), d)
        s = fma64(u, F64(-_L2L), s)
        s2 = s * s
        s4 = s2 * s2
        u = _poly10(s, s2, s4, s4 * s4, *_EXP)
        for c in (0.5, 1.0, 1.0):
            u = fma64(u, s, F64(c))
        u = _ldexp2(u, q)
        u = np.where(d > 709.78271114955742909217217426, np.inf, u)
        return np.where(d < -1000, 0.0, u)


_EXPK2 = (+0.1602472219709932072e-9, +0.2092255183563157007e-8, +0.2505230023782644465e-7,
          +0.2755724800902135303e-6, +0.2755731892386044373e-5, +0.2480158735605815065e-4,
          +0.1984126984148071858e-3, +0.1388888888886763255e-2, +0.8333333333333347095e-2,
          +0.4166666666666669905e-1)


def _expk2(d):
    """Sleef's expk2: exp of a double-double, as a double-double."""
    u = (d[0] + d[1]) * _R_LN2
    dq = np.rint(u)
    q = _rint_int(dq)
    s = dd_add2_df_f(d, dq * -_L2U)
    s = dd_add2_df_f(s, dq * -_L2L)
    s2 = dd_squ_df(s)
    s4 = dd_squ_df(s2)
    u = _poly10(s[0], s2[0], s4[0], s4[0] * s4[0], *_EXPK2)
    t = dd_add_f_df(F64(0.5), dd_mul_df_f(s, F64(+0.1666666666666666574e+0)))
    t = dd_add_f_df(F64(1.0), dd_mul_df_df(t, s))
    t = dd_add_f_df(F64(1.0), dd_mul_df_df(t, s))
    t = dd_add_df_df(t, dd_mul_df_f(s4, u))
    low = d[0] < -1000
    return (np.where(low, 0.0, _ldexp2(t[0], q)), np.where(low, 0.0, _ldexp2(t[1], q)))


def expm1d(a: np.ndarray) -> np.ndarray:
    """Sleef_expm1d8_u10 (xexpm1)."""
    a = np.asarray(a, F64)
    with np.errstate(all="ignore"):
        d = dd_add2_df_f(_expk2((a, np.zeros_like(a))), F64(-1.0))
        x = d[0] + d[1]
        x = np.where(a > 709.782712893383996732223, np.inf, x)
        x = np.where(a < -36.736800569677101399113302437, -1.0, x)
        x = np.where((a == 0) & np.signbit(a), -0.0, x)
        return np.where(np.isnan(a), a, x)


def tanhd(x: np.ndarray) -> np.ndarray:
    """Sleef_tanhd8_u10 (xtanh)."""
    x = np.asarray(x, F64)
    with np.errstate(all="ignore"):
        y = np.abs(x)
        d = _expk2((y, np.zeros_like(y)))
        e = dd_rec_df(d)
        d = dd_div_df(dd_add2_df_df(d, (-e[0], -e[1])), dd_add2_df_df(d, e))
        y = d[0] + d[1]
        y = np.where((np.abs(x) > 18.714973875) | np.isnan(y), 1.0, y)
        y = np.copysign(y, x)
        return np.where(np.isnan(x), x, y)


_LOG1P = (0.1532076988502701353e+0, 0.1525629051003428716e+0, 0.1818605932937785996e+0,
          0.2222214519839380009e+0, 0.2857142932794299317e+0, 0.3999999999635251990e+0,
          0.6666666666667333541e+0)


def getexp64(v):
    """vgetexp_vd_vd: floor(log2|v|) as a double (-inf at 0, inf at inf, nan at nan)."""
    e = (np.frexp(v)[1] - 1).astype(F64)
    e = np.where(v == 0, -np.inf, e)
    e = np.where(np.isinf(v), np.inf, e)
    return np.where(np.isnan(v), np.nan, e)


def log1pd(d: np.ndarray, avx512: bool = True) -> np.ndarray:
    """Sleef_log1pd8_u10 (xlog1p; with AVX512F its exponent by vgetexp, else Sleef_log1pd4_u10's
    by the bits, tiny arguments scaled by 2**64 first)."""
    d = np.asarray(d, F64)
    with np.errstate(all="ignore"):
        dp1 = d + 1.0
        if avx512:
            e = getexp64(dp1 * (1.0 / 0.75))
            e = np.where(np.isposinf(e), 1024.0, e)
            t = _ldexp3(np.ones_like(d), -_rint_int(np.where(np.isfinite(e), e, 0.0)))
        else:
            o = dp1 < np.finfo(F64).tiny
            dp1 = np.where(o, dp1 * 2.0 ** 64, dp1)
            q = ((dp1 * (1.0 / 0.75)).view(I64) >> 52 & 0x7FF) - 0x3FF
            t = _ldexp3(np.ones_like(d), -q)
            e = np.where(o, q - 64, q).astype(F64)
        m = fma64(d, t, t - 1.0)
        s = dd_mul_df_f(LN2_DD, e)
        x = dd_div_df((m, np.zeros_like(m)), dd_add_f_f(F64(2.0), m))
        x2 = x[0] * x[0]
        x4 = x2 * x2
        t = _poly7(x2, x4, x4 * x4, *_LOG1P)
        s = dd_add_df_df(s, (x[0] * 2.0, x[1] * 2.0))
        s = dd_add_df_f(s, (x2 * x[0]) * t)
        r = s[0] + s[1]
        r = np.where(d > 1e307, np.inf, r)
        r = np.where((d < -1) | np.isnan(d), np.nan, r)
        r = np.where(d == -1, -np.inf, r)
        r = np.where((d == 0) & np.signbit(d), -0.0, r)
        return np.where(np.isnan(d), d, r)


def _normalize(t):
    x = t[0] + t[1]
    return x, (t[0] - x) + t[1]


_EXPK = (2.51069683420950419527139e-08, 2.76286166770270649116855e-07,
         2.75572496725023574143864e-06, 2.48014973989819794114153e-05,
         0.000198412698809069797676111, 0.0013888888939977128960529,
         0.00833333333332371417601081, 0.0416666666665409524128449,
         0.166666666666666740681535, 0.500000000000000999200722)


def expk(d):
    """Sleef's expk: exp of a double-double, as a double."""
    u = (d[0] + d[1]) * _R_LN2
    dq = np.rint(u)
    q = _rint_int(dq)
    s = dd_add2_df_f(d, dq * -_L2U)
    s = _normalize(dd_add2_df_f(s, dq * -_L2L))
    s2 = s[0] * s[0]
    s4 = s2 * s2
    u = _poly10(s[0], s2, s4, s4 * s4, *_EXPK)
    t = dd_add_f_df(F64(1.0), s)
    t = dd_add_df_df(t, dd_mul_df_f(dd_squ_df(s), u))
    return np.where(d[0] < -1000, 0.0, _ldexp2(t[0] + t[1], q))


def _poly16(x, x2, x4, x8, *c):
    return fma64(x8, poly8(x, x2, x4, *c[:8]), poly8(x, x2, x4, *c[8:]))


def _poly21(x, x2, x4, x8, x16, *c):
    five = fma64(x4, F64(c[0]), _poly4(x, x2, *c[1:5]))  # POLY5
    return fma64(x16, five, _poly16(x, x2, x4, x8, *c[5:]))


def _mla_dd(x, y, z):  # ddmla_vd2_vd_vd2_vd2: z + y * x
    return dd_add_df_df(z, dd_mul_df_f(y, x))


def _poly4dd(x, c3, c2, c1, c0):
    return _mla_dd(x * x, _mla_dd(x, (c3, np.zeros_like(c3)), c2), _mla_dd(x, c1, c0))


_ERF_NEAR = (-0.2083271002525222097e-14, +0.7151909970790897009e-13, -0.1162238220110999364e-11,
             +0.1186474230821585259e-10, -0.8499973178354613440e-10, +0.4507647462598841629e-9,
             -0.1808044474288848915e-8, +0.5435081826716212389e-8, -0.1143939895758628484e-7,
             +0.1215442362680889243e-7, +0.1669878756181250355e-7, -0.9808074602255194288e-7,
             +0.1389000557865837204e-6, +0.2945514529987331866e-6, -0.1842918273003998283e-5,
             +0.3417987836115362136e-5, +0.3860236356493129101e-5, -0.3309403072749947546e-4,
             +0.1060862922597579532e-3, +0.2323253155213076174e-3, +0.1490149719145544729e-3)
_ERF_FAR = (-0.4024015130752621932e-18, +0.3847193332817048172e-16, -0.1749316241455644088e-14,
            +0.5029618322872872715e-13, -0.1025221466851463164e-11, +0.1573695559331945583e-10,
            -0.1884658558040203709e-9, +0.1798167853032159309e-8, -0.1380745342355033142e-7,
            +0.8525705726469103499e-7, -0.4160448058101303405e-6, +0.1517272660008588485e-5,
            -0.3341634127317201697e-5, -0.2515023395879724513e-5, +0.6539731269664907554e-4,
            -0.3551065097428388658e-3, +0.1210736097958368864e-2, -0.2605566912579998680e-2,
            +0.1252823202436093193e-2, +0.1820191395263313222e-1, -0.1021557155453465954e+0)
_ERF_DD_NEAR = ((0.0092877958392275604405, 7.9287559463961107493e-19),
                (0.042275531758784692937, 1.3785226620501016138e-19),
                (0.07052369794346953491, 9.5846628070792092842e-19))
_ERF_DD_FAR = ((-0.63691044383641748361, -2.4249477526539431839e-17),
               (-1.1282926061803961737, -6.2970338860410996505e-17),
               (-1.2261313785184804967e-05, -5.5329707514490107044e-22))


def erfd(a: np.ndarray) -> np.ndarray:
    """Sleef_erfd8_u10 (xerf_u1): up to 2.5, (1 + x P(x))^-16 (Abramowitz and Stegun's form),
    past it exp of a polynomial; 1 - that."""
    a = np.asarray(a, F64)
    with np.errstate(all="ignore"):
        x = np.abs(a)
        x2 = x * x
        x4 = x2 * x2
        x8 = x4 * x4
        near = x <= 2.5
        coef = [np.where(near, n, f) for n, f in zip(_ERF_NEAR, _ERF_FAR)]
        t = _poly21(x, x2, x4, x8, x8 * x8, *coef)
        dd = [(np.where(near, n[0], f[0]), np.where(near, n[1], f[1]))
              for n, f in zip(_ERF_DD_NEAR, _ERF_DD_FAR)]
        t2 = _poly4dd(x, t, *dd)
        s2 = dd_add_f_df(F64(1.0), dd_mul_df_f(t2, x))
        for _ in range(4):
            s2 = dd_squ_df(s2)
        s2 = dd_rec_df(s2)
        far = expk(t2)
        t2 = (np.where(near, s2[0], far), np.where(near, s2[1], 0.0))
        t2 = dd_add2_df_f(t2, F64(-1.0))
        z = -(t2[0] + t2[1])
        z = np.where(x < 1e-8, x * 1.12837916709551262756245475959, z)
        z = np.where(x >= 6, 1.0, z)
        z = np.where(np.isinf(a), 1.0, z)
        z = np.where(a == 0, 0.0, z)
        return np.where(np.isnan(a), a, np.copysign(z, a))


def getmant64(d):
    """vgetmant_vd_vd (_MM_MANT_NORM_p75_1p5) for d >= 0: the significand in [0.75, 1.5)."""
    f, _ = np.frexp(d)
    return np.where(f < 0.75, f * 2.0, f)


def logd(d: np.ndarray) -> np.ndarray:
    """Sleef_logd8_u10 (xlog_u1, AVX512F: vgetexp and vgetmant) of float64 d > 0 (what a
    softmax's sum is: the special cases are left to the caller)."""
    d = np.asarray(d, F64)
    with np.errstate(all="ignore"):
        e = getexp64(d * (1.0 / 0.75))
        e = np.where(np.isposinf(e), 1024.0, e)
        m = getmant64(d)
        x = dd_div_df(dd_add2_f_f(F64(-1.0), m), dd_add2_f_f(F64(1.0), m))
        x2 = x[0] * x[0]
        x4 = x2 * x2
        t = _poly7(x2, x4, x4 * x4, *_LOG1P)
        s = dd_mul_df_f(LN2_DD, e)
        s = dd_add_df_df(s, (x[0] * 2.0, x[1] * 2.0))
        s = dd_add_df_f(s, (x2 * x[0]) * t)
        return s[0] + s[1]
