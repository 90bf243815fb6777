"""float32 sinh, cosh, atanh and log1p as PyTorch's AVX-512 CPU kernels compute them: SLEEF's
1.0-ulp vector functions (Sleef_sinhf16_u10 ...) in their fused multiply-add build.

ATen's Vectorized<float> calls SLEEF for these four (vec512_float.h), and MKL is not used for
them (vml.h leaves sinh and cosh to the vector path and has no MKL stub for atanh or log1p).
The algorithms below are SLEEF's (sleefsimdsp.c and the double-float arithmetic of df.h, by
Naoki Shibata and contributors, Boost Software License 1.0), done with numpy on float32
arrays: each float32 operation rounds as the vector instruction does, and each fused
multiply-add is computed exactly (rng_math.fma32), so the results are the same bits.

Where ATen runs them: sinh, cosh and atanh go through cpu_kernel_vec, whose vector loop takes
32 elements at a time and leaves the rest to the scalar std::sinh (the C library's); log1p
goes through vml's vec::map, which runs the vector function on the tail too. The cutting is
done by ddx/ops/kernels_unary.py; these functions compute whatever they are given."""

from __future__ import annotations

import numpy as np

from .rng_math import fma32

F32, I32 = np.float32, np.int32
R_LN2 = F32(1.442695040888963407359924681001892137426645954152985934135449406931)
L2U, L2L = F32(0.693145751953125), F32(1.428606765330187045e-06)
LN2_HI, LN2_LO = F32(0.69314718246459960938), F32(-1.904654323148236017e-09)
FOUR_THIRDS = F32(1.0) / F32(0.75)
ONE, HALF, TWO = F32(1.0), F32(0.5), F32(2.0)
ALL_ONES = I32(-1)  # (SLEEF's NaN: every bit set)


def _fma(a, b, c):
    return fma32(a, b, c)


# --- double-float arithmetic (df.h, the ENABLE_FMA_SP forms) ---------------------------------

def add_ff(x, y):  # dfadd_vf2_vf_vf
    s = x + y
    return s, (x - s) + y


def add2_ff(x, y):  # dfadd2_vf2_vf_vf
    s = x + y
    v = s - x
    return s, (x - (s - v)) + (y - v)


def add_df_f(x, y):  # dfadd_vf2_vf2_vf
    s = x[0] + y
    return s, ((x[0] - s) + y) + x[1]


def add2_df_f(x, y):  # dfadd2_vf2_vf2_vf
    s = x[0] + y
    v = s - x[0]
    t = (x[0] - (s - v)) + (y - v)
    return s, t + x[1]


def add_f_df(x, y):  # dfadd_vf2_vf_vf2
    s = x + y[0]
    return s, ((x - s) + y[0]) + y[1]


def add_dd(x, y):  # dfadd_vf2_vf2_vf2 (|x| >= |y|)
    s = x[0] + y[0]
    return s, (((x[0] - s) + y[0]) + x[1]) + y[1]


def add2_dd(x, y):  # dfadd2_vf2_vf2_vf2
    s = x[0] + y[0]
    v = s - x[0]
    t = (x[0] - (s - v)) + (y[0] - v)
    return s, t + (x[1] + y[1])


def sub_dd(x, y):  # dfsub_vf2_vf2_vf2 (|x| >= |y|)
    s = x[0] - y[0]
    t = ((x[0] - s) - y[0]) + x[1]
    return s, t - y[1]


def mul_df_f(x, y):  # dfmul_vf2_vf2_vf
    s = x[0] * y
    return s, _fma(x[1], y, _fma(x[0], y, -s))


def mul_dd(x, y):  # dfmul_vf2_vf2_vf2
    s = x[0] * y[0]
    return s, _fma(x[0], y[1], _fma(x[1], y[0], _fma(x[0], y[0], -s)))


def squ(x):  # dfsqu_vf2_vf2
    s = x[0] * x[0]
    return s, _fma(x[0] + x[0], x[1], _fma(x[0], x[0], -s))


def rec_dd(d):  # dfrec_vf2_vf2
    s = ONE / d[0]
    return s, s * _fma(-d[1], s, _fma(-d[0], s, ONE))


def div_dd(n, d):  # dfdiv_vf2_vf2_vf2
    t = ONE / d[0]
    s = n[0] * t
    u = _fma(t, n[0], -s)
    v = _fma(-d[1], t, _fma(-d[0], t, ONE))
    return s, _fma(s, v, _fma(n[1], t, u))


def scale(d, s):  # dfscale_vf2_vf2_vf
    return d[0] * s, d[1] * s


# --- helpers of sleefsimdsp.c ----------------------------------------------------------------

def pow2i(q):
    """vpow2i_vf_vi2: 2**q built in the exponent field (q in [-126, 127])."""
    return ((q.astype(I32) + I32(0x7F)) << I32(23)).view(F32)


def ldexp2(d, e):
    """vldexp2_vf_vf_vi2: d * 2**(e >> 1) * 2**(e - (e >> 1)), two rounded products."""
    half = e >> I32(1)
    return (d * pow2i(half)) * pow2i(e - half)


def getexp(x):
    """_mm512_getexp_ps: floor(log2(|x|)) as a float (-inf at 0, inf at inf, nan at nan)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        _, e = np.frexp(np.abs(x))
        out = (e - 1).astype(F32)
        out = np.where(x == 0, F32(-np.inf), out)
        out = np.where(np.isinf(x), F32(np.inf), out)
        return np.where(np.isnan(x), x, out).astype(F32)


def rint_int(x):
    """vrint_vi2_vf: round to nearest even, to int32."""
    return np.rint(x).astype(I32)


def mulsign(y, x):
    return (y.view(I32) ^ (x.view(I32) & I32(-0x80000000))).view(F32)


def set_nan(mask, y):
    """vor_vm_vo32_vm: every bit of y set where mask."""
    return np.where(mask, ALL_ONES, y.view(I32)).view(F32)


def expk2(d):
    """expk2f: exp of a double-float, as a double-float."""
    u = (d[0] + d[1]) * R_LN2
    q = rint_int(u)
    qf = q.astype(F32)
    s = add2_df_f(d, qf * -L2U)
    s = add2_df_f(s, qf * -L2L)
    u = np.full_like(s[0], F32(+0.1980960224e-3))
    u = _fma(u, s[0], F32(+0.1394256484e-2))
    u = _fma(u, s[0], F32(+0.8333456703e-2))
    u = _fma(u, s[0], F32(+0.4166637361e-1))
    t = add2_df_f(mul_df_f(s, u), F32(+0.166666659414234244790680580464e+0))
    t = add2_df_f(mul_dd(s, t), HALF)
    t = add2_dd(s, mul_dd(squ(s), t))
    t = add_f_df(ONE, t)
    x, y = ldexp2(t[0], q), ldexp2(t[1], q)
    low = d[0] < F32(-104)
    return np.where(low, F32(0), x), np.where(low, F32(0), y)


def logk2(d):
    """logk2f (AVX-512 form: the exponent by getexp)."""
    e = rint_int(getexp(d[0] * FOUR_THIRDS))
    m = scale(d, pow2i(-e))
    x = div_dd(add2_df_f(m, F32(-1)), add2_df_f(m, ONE))
    x2 = squ(x)
    t = np.full_like(x2[0], F32(0.2392828464508056640625))
    t = _fma(t, x2[0], F32(0.28518211841583251953125))
    t = _fma(t, x2[0], F32(0.400005877017974853515625))
    t = _fma(t, x2[0], F32(0.666666686534881591796875))
    s = mul_df_f((np.full_like(t, LN2_HI), np.full_like(t, LN2_LO)), e.astype(F32))
    s = add_dd(s, scale(x, TWO))
    return add_dd(s, mul_df_f(mul_dd(x2, x), t))


# --- the functions -------------------------------------------------------------------------

def sinhf(x: np.ndarray) -> np.ndarray:
    """Sleef_sinhf_u10 over a float32 array."""
    with np.errstate(all="ignore"):
        y = np.abs(x)
        d = expk2((y, np.zeros_like(y)))
        d = sub_dd(d, rec_dd(d))
        y = (d[0] + d[1]) * HALF
        y = np.where((np.abs(x) > F32(89)) | np.isnan(y), F32(np.inf), y)
        y = mulsign(y, x)
        return set_nan(np.isnan(x), y)


def coshf(x: np.ndarray) -> np.ndarray:
    """Sleef_coshf_u10 over a float32 array."""
    with np.errstate(all="ignore"):
        y = np.abs(x)
        d = expk2((y, np.zeros_like(y)))
        d = add_dd(d, rec_dd(d))
        y = (d[0] + d[1]) * HALF
        y = np.where((np.abs(x) > F32(89)) | np.isnan(y), F32(np.inf), y)
        return set_nan(np.isnan(x), y)


def atanhf(x: np.ndarray) -> np.ndarray:
    """Sleef_atanhf_u10 over a float32 array."""
    with np.errstate(all="ignore"):
        y = np.abs(x)
        d = logk2(div_dd(add2_ff(ONE, y), add2_ff(ONE, -y)))
        inner = np.where(y == ONE, F32(np.inf), (d[0] + d[1]) * HALF)
        y = set_nan(y > ONE, inner)
        y = set_nan(np.isinf(x) | np.isnan(y), y)
        y = mulsign(y, x)
        return set_nan(np.isnan(x), y)


def log1pf(d: np.ndarray) -> np.ndarray:
    """Sleef_log1pf_u10 over a float32 array (AVX-512 form)."""
    with np.errstate(all="ignore"):
        dp1 = d + ONE
        e = getexp(dp1 * FOUR_THIRDS)
        e = np.where(np.isposinf(e), F32(128), e)
        t = np.ldexp(ONE, -rint_int(e)).astype(F32)  # (exact, 2**-128 too, as torch's build)
        m = _fma(d, t, t - ONE)
        s = mul_df_f((np.full_like(m, LN2_HI), np.full_like(m, LN2_LO)), e)
        x = div_dd((m, np.zeros_like(m)), add_ff(TWO, m))
        x2 = x[0] * x[0]
        t = np.full_like(x2, F32(+0.3027294874e+0))
        t = _fma(t, x2, F32(+0.3996108174e+0))
        t = _fma(t, x2, F32(+0.6666694880e+0))
        s = add_dd(s, scale(x, TWO))
        s = add_df_f(s, (x2 * x[0]) * t)
        r = s[0] + s[1]
        r = np.where(np.isposinf(d), F32(np.inf), r)
        r = set_nan(F32(-1) > d, r)
        r = np.where(d == F32(-1), F32(-np.inf), r)
        r = np.where((d == 0) & np.signbit(d), F32(-0.0), r)
        # a nan argument comes out as itself, quieted (numpy's order of operands in the
        # intermediate steps could otherwise pick another nan's sign)
        return np.where(np.isnan(d), (d.view(I32) | I32(0x400000)).view(F32), r)


def expm1f(a: np.ndarray) -> np.ndarray:
    """Sleef_expm1f_u10 over a float32 array."""
    with np.errstate(all="ignore"):
        d = add2_df_f(expk2((a, np.zeros_like(a))), F32(-1.0))
        x = d[0] + d[1]
        x = np.where(a > F32(88.72283172607421875), F32(np.inf), x)
        x = np.where(a < F32(-16.635532333438687426013570), F32(-1), x)
        x = np.where((a == 0) & np.signbit(a), F32(-0.0), x)
        return np.where(np.isnan(a), (a.view(I32) | I32(0x400000)).view(F32), x)


_EXP2_POLY = [F32(v) for v in (+0.1535920892e-3, +0.1339262701e-2, +0.9618384764e-2,
                               +0.5550347269e-1, +0.2402264476e+0, +0.6931471825e+0)]


def exp2f(d: np.ndarray) -> np.ndarray:
    """Sleef_exp2f_u10 over a float32 array (the fused multiply-add form)."""
    with np.errstate(all="ignore"):
        u = np.rint(d).astype(F32)
        q = rint_int(u)
        s = d - u
        u = np.full_like(s, _EXP2_POLY[0])
        for c in _EXP2_POLY[1:]:
            u = _fma(u, s, c)
        u = _fma(u, s, ONE)
        u = ldexp2(u, q)
        u = np.where(d >= F32(128), F32(np.inf), u)
        u = np.where(d < F32(-150), F32(0), u)
        return np.where(np.isnan(d), (d.view(I32) | I32(0x400000)).view(F32), u)


def getmant(d):
    """_mm512_getmant_ps(d, _MM_MANT_NORM_p75_1p5, _MM_MANT_SIGN_nan) for d >= 0: the
    significand scaled into [0.75, 1.5)."""
    f, _ = np.frexp(d)  # f in [0.5, 1)
    f = f.astype(F32)
    return np.where(f < F32(0.75), f * TWO, f)


def logf(d: np.ndarray) -> np.ndarray:
    """Sleef_logf16_u10 (xlogf_u1, AVX-512 form) of float32 d > 0 (what a softmax's sum is)."""
    with np.errstate(all="ignore"):
        e = getexp(d * FOUR_THIRDS)
        e = np.where(e == F32(np.inf), F32(128), e)
        m = getmant(d)
        s = mul_df_f((np.full_like(e, LN2_HI), np.full_like(e, LN2_LO)), e)
        x = div_dd(add2_ff(F32(-1), m), add2_ff(ONE, m))
        x2 = x[0] * x[0]
        t = _fma(np.full_like(x2, F32(0.3027294874)), x2, F32(0.3996108174))
        t = _fma(t, x2, F32(0.6666694880))
        s = add_dd(s, scale(x, TWO))
        s = add_df_f(s, (x2 * x[0]) * t)
        return s[0] + s[1]


def _atan2k(y, x):
    """atan2kf_u1: atan2 of two double-floats (y >= 0), as a double-float."""
    neg = x[0] < 0
    q = np.where(neg, I32(-2), I32(0))
    r = np.where(neg, I32(-0x80000000), I32(0))
    x = ((x[0].view(I32) ^ r).view(F32), (x[1].view(I32) ^ r).view(F32))
    p = x[0] < y[0]
    q = np.where(p, q + I32(1), q)
    s = div_dd((np.where(p, -x[0], y[0]), np.where(p, -x[1], y[1])),
               (np.where(p, y[0], x[0]), np.where(p, y[1], x[1])))
    t = squ(s)
    t0 = t[0] + t[1]  # dfnormalize_vf2_vf2
    t = (t0, t[0] - t0 + t[1])
    u = np.full_like(t[0], F32(-0.00176397908944636583328247))
    for c in (0.0107900900766253471374512, -0.0309564601629972457885742,
              0.0577365085482597351074219, -0.0838950723409652709960938,
              0.109463557600975036621094, -0.142626821994781494140625,
              0.199983194470405578613281):
        u = _fma(u, t[0], F32(c))
    t = mul_dd(t, add_ff(np.full_like(u, F32(-0.333332866430282592773438)), u * t[0]))
    t = mul_dd(s, add_f_df(ONE, t))
    qf = q.astype(F32)
    half_pi = (np.full_like(qf, F32(1.5707963705062866211)),
               np.full_like(qf, F32(-4.3711388286737928865e-08)))
    return add_dd(mul_df_f(half_pi, qf), t)


def _isinf2(d, m):
    """visinf2_vf_vf_vf: m with d's sign bit or'd in where d is infinite, else +0."""
    bits = (np.signbit(d).astype(I32) << I32(31)) | m.view(I32)
    return np.where(np.isinf(d), bits, I32(0)).view(F32)


def atan2f(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Sleef_atan2f16_u10 (xatan2f_u1) over float32 arrays of one shape."""
    with np.errstate(all="ignore"):
        y, x = np.asarray(y, F32), np.asarray(x, F32)
        tiny = np.abs(x) < F32(2.9387372783541830947e-39)
        x = np.where(tiny, x * F32(1 << 24), x)
        y = np.where(tiny, y * F32(1 << 24), y)
        zero = np.zeros_like(x)
        d = _atan2k((np.abs(y), zero), (x, zero))
        r = mulsign(d[0] + d[1], x)
        half_pi = F32(np.pi / 2)
        r = np.where(np.isinf(x) | (x == 0),
                     half_pi - _isinf2(x, mulsign(np.full_like(x, half_pi), x)), r)
        r = np.where(np.isinf(y),
                     half_pi - _isinf2(x, mulsign(np.full_like(x, F32(np.pi / 4)), x)), r)
        r = np.where(y == 0, np.where(np.signbit(x), F32(np.pi), F32(0)), r)
        return set_nan(np.isnan(x) | np.isnan(y), mulsign(r, y))
