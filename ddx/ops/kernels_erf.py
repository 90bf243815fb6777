"""erf and erfc on whole arrays, bit for bit as Python's math.erf and math.erfc on glibc.

CPython's math.erf is the C library's, and glibc's (2.36 here) is Sun's fdlibm s_erf.c in the
form glibc gives it (each polynomial as a sum of pairs, for pipelined processors). The same
operations, in the same order and the same ranges of |x|, are done here with numpy on arrays, so
every result is the same double. Its exp is glibc's too (ARM's table-driven exp, in its fused
multiply-add build on a machine that has one): it is computed here without fused operations,
which can round the other way only when the result lies within a hundredth of a unit in the last
place of half-way between two doubles. Such an element (a few in a hundred) and any whose exp
argument is beyond 512 are computed again by math.erf / math.erfc itself, so the result is the
library's in every case. On a C library whose erf is another one, the first call finds out (on
a few values of each range) and math.erf is called on each element instead.

The coefficients are fdlibm's (Copyright (C) 1993 by Sun Microsystems, Inc.: "Permission to use,
copy, modify, and distribute this software is freely granted, provided that this notice is
preserved"); exp's constants are those of ARM's optimized-routines (MIT); its table of 2^(k/128)
is computed here."""

from __future__ import annotations

import functools
import math
import struct

import numpy as np

BLOCK = 65536  # elements at a time (the temporaries stay in the cache)
SMALL = 32  # fewer elements than this: math.erf on each is quicker

F64, U64 = np.float64, np.uint64
EXPONENT, MANTISSA = U64(0x7FF0000000000000), U64(0x000FFFFFFFFFFFFF)
ULP_SHIFT = U64(52 << 52)
LOW_WORD = U64(0xFFFFFFFF00000000)


def _word(high: int) -> float:
    """The double whose high 32 bits are ``high`` and low bits 0 (fdlibm's range bounds)."""
    return struct.unpack("<d", struct.pack("<Q", high << 32))[0]


ERX = 8.45062911510467529297e-01
EFX = 1.28379167095512586316e-01
PP = (1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
      -5.77027029648944159157e-03, -2.37630166566501626084e-05)
QQ = (0.0, 3.97917223959155352819e-01, 6.50222499887672944485e-02, 5.08130628187576562776e-03,
      1.32494738004321644526e-04, -3.96022827877536812320e-06)
PA = (-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
      3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
      -2.16637559486879084300e-03)
QA = (0.0, 1.06420880400844228286e-01, 5.40397917702171048937e-01, 7.18286544141962662868e-02,
      1.26171219808761642112e-01, 1.36370839120290507362e-02, 1.19844998467991074170e-02)
RA = (-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
      -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
      -8.12874355063065934246e+01, -9.81432934416914548592e+00)
SA = (0.0, 1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02,
      6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02,
      6.57024977031928170135e+00, -6.04244152148580987438e-02)
RB = (-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
      -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
      -4.83519191608651397019e+02)
SB = (0.0, 3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03,
      3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02,
      -2.24409524465858183362e+01)

TINY_X = _word(0x3E300000)  # 2^-28: erf(x) = x + efx*x below
SUBNORMAL_X = _word(0x00800000)  # (fdlibm scales by 16 below, to avoid a spurious underflow)
ERFC_TINY_X = _word(0x3C700000)  # 2^-56: erfc(x) = 1 - x below
FIRST = _word(0x3FEB0000)  # 0.84375
SECOND = _word(0x3FF40000)  # 1.25
ERF_RB = _word(0x4006DB6E)  # about 1/0.35: erf's switch to the second rational function
ERFC_RB = _word(0x4006DB6D)  # (erfc's bound is one below erf's, as in fdlibm)
SIX = _word(0x40180000)
TWENTY_EIGHT = _word(0x403C0000)

# --- exp, as glibc's (ARM optimized-routines, 128-entry table, degree-5 polynomial) ----------

N = 128
INV_LN2_N = float.fromhex("0x1.71547652b82fep0") * N
NEG_LN2_HI_N = float.fromhex("-0x1.62e42fefa0000p-8")
NEG_LN2_LO_N = float.fromhex("-0x1.cf79abc9e3b3ap-47")
SHIFT = float.fromhex("0x1.8p52")
C2, C3, C4, C5 = (float.fromhex(h) for h in (
    "0x1.ffffffffffdbdp-2", "0x1.555555555543cp-3", "0x1.55555cf172b91p-5",
    "0x1.1111167a4d017p-7"))
GUARD = 1 / 64  # within this many units in the last place of half-way: math.erf decides
EXP_LIMIT = 512.0  # beyond: glibc's exp takes its special path; math.erf decides


@functools.cache
def _table() -> tuple[np.ndarray, np.ndarray]:
    """2^(k/128) ~= H[k] * (1 + T[k]): T[k], and H[k]'s bits less k << 45 (glibc's layout).

    H[k] is 2^(k/128) rounded to a double and T[k] the relative remainder rounded, both from
    2^(k/128) to 200 bits: a product of 2^(1/2), 2^(1/4), ..., 2^(1/128), each a square root
    of the one before, in integers."""
    from fractions import Fraction

    bits = 200
    one = 1 << bits
    roots = []  # roots[j] = 2^(2^j / 128) * one
    r = 2 * one
    for _ in range(7):
        r = math.isqrt(r * one)
        roots.append(r)
    roots.reverse()
    tails, highs = [], []
    for k in range(N):
        v = one
        for j in range(7):
            if k >> j & 1:
                v = v * roots[j] >> bits
        exact = Fraction(v, one)
        high = float(exact)
        highs.append(high)
        tails.append(float((exact - Fraction(high)) / Fraction(high)))
    hi_bits = np.array(highs, dtype=F64).view(U64) - (np.arange(N, dtype=U64) << U64(45))
    return np.array(tails, dtype=F64), hi_bits


def exp_doubt(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """glibc's exp(x) without fused operations, and where that may differ from glibc's own."""
    kd = x * INV_LN2_N
    kd += SHIFT
    ki = kd.view(U64).copy()
    kd -= SHIFT
    r = kd * NEG_LN2_HI_N
    r += x
    kd *= NEG_LN2_LO_N
    r += kd
    tails, highs = _table()
    idx = ki & U64(N - 1)
    ki <<= U64(45)
    ki += highs.take(idx)
    scale = ki.view(F64)
    r2 = r * r
    a = r * C3
    a += C2
    a *= r2
    b = r * C5
    b += C4
    r2 *= r2
    b *= r2
    tmp = tails.take(idx)
    tmp += r
    tmp += a
    tmp += b
    tmp *= scale  # scale * tmp
    y = scale + tmp
    # the sum's rounding error, exactly (|scale| > |scale * tmp|): how near half-way y was
    scale -= y
    scale += tmp
    bits = y.view(U64)
    ulp = ((bits & EXPONENT) - ULP_SHIFT).view(F64)
    ulp *= 0.5 - GUARD
    np.abs(scale, out=scale)
    doubt = scale >= ulp
    doubt |= (bits & MANTISSA) == 0  # a power of two: the step below it is half as wide
    np.abs(x, out=r)
    doubt |= r > EXP_LIMIT
    doubt |= r < 2.0 ** -54  # (glibc returns 1 + x there)
    return y, doubt


# --- the rational functions, as fdlibm evaluates them -------------------------------------------

def _pair_sum(s: np.ndarray, c0: float, c1: float) -> np.ndarray:
    """c0 + s*c1."""
    t = s * c1
    t += c0
    return t


def _small_ratio(x: np.ndarray) -> np.ndarray:
    """y with erf(x) = x + x*y, for |x| < 0.84375."""
    z = x * x
    r1 = _pair_sum(z, PP[0], PP[1])
    z2 = z * z
    r2 = _pair_sum(z, PP[2], PP[3])
    z4 = z2 * z2
    s1 = _pair_sum(z, 1.0, QQ[1])
    s2 = _pair_sum(z, QQ[2], QQ[3])
    s3 = _pair_sum(z, QQ[4], QQ[5])
    r2 *= z2
    r1 += r2
    r1 += z4 * PP[4]
    s2 *= z2
    s1 += s2
    s3 *= z4
    s1 += s3
    r1 /= s1
    return r1


def _near_one_ratio(ax: np.ndarray) -> np.ndarray:
    """P/Q with erf(|x|) = erx + P/Q, for 0.84375 <= |x| < 1.25."""
    s = ax - 1.0
    p1 = _pair_sum(s, PA[0], PA[1])
    s2 = s * s
    q1 = _pair_sum(s, 1.0, QA[1])
    s4 = s2 * s2
    p2 = _pair_sum(s, PA[2], PA[3])
    s6 = s4 * s2
    q2 = _pair_sum(s, QA[2], QA[3])
    p3 = _pair_sum(s, PA[4], PA[5])
    q3 = _pair_sum(s, QA[4], QA[5])
    p2 *= s2
    p1 += p2
    p3 *= s4
    p1 += p3
    p1 += s6 * PA[6]
    q2 *= s2
    q1 += q2
    q3 *= s4
    q1 += q3
    q1 += s6 * QA[6]
    p1 /= q1
    return p1


def _tail_ratio(ax: np.ndarray, first: bool) -> np.ndarray:
    """R/S of the asymptotic form, on s = 1/x^2: ra/sa (``first``, |x| < 1/0.35) or rb/sb."""
    s = ax * ax
    np.divide(1.0, s, out=s)
    s2 = s * s
    s4 = s2 * s2
    s6 = s4 * s2
    ra, sa = (RA, SA) if first else (RB, SB)
    r = _pair_sum(s, ra[0], ra[1])
    q = _pair_sum(s, 1.0, sa[1])
    t = _pair_sum(s, ra[2], ra[3])
    t *= s2
    r += t
    t = _pair_sum(s, ra[4], ra[5])
    t *= s4
    r += t
    t = _pair_sum(s, ra[6], ra[7]) if first else s6 * ra[6]
    if first:
        t *= s6
    r += t
    t = _pair_sum(s, sa[2], sa[3])
    t *= s2
    q += t
    t = _pair_sum(s, sa[4], sa[5])
    t *= s4
    q += t
    t = _pair_sum(s, sa[6], sa[7])
    t *= s6
    q += t
    if first:
        s4 *= s4  # s8
        s4 *= sa[8]
        q += s4
    r /= q
    return r


def _exp_part(ax: np.ndarray, first: bool) -> tuple[np.ndarray, np.ndarray]:
    """exp(-z*z - 0.5625) * exp((z - x)*(z + x) + R/S), z being |x| with its low word 0; and
    where glibc's exp may have rounded otherwise."""
    ratio = _tail_ratio(ax, first)
    z = (ax.view(U64) & LOW_WORD).view(F64)
    a = -z
    a *= z
    a -= 0.5625
    b = z - ax
    z += ax
    b *= z
    b += ratio
    ea, doubt = exp_doubt(a)
    eb, doubt_b = exp_doubt(b)
    doubt |= doubt_b
    ea *= eb
    return ea, doubt


def _bands(ax: np.ndarray, bounds: tuple[float, ...]) -> list[np.ndarray]:
    """The indexes of |x| below bounds[0], in [bounds[k-1], bounds[k]) for each k, at or above
    the last bound, and last those not finite (inf and nan)."""
    band = (ax >= bounds[0]).view(np.int8)
    for b in bounds[1:]:
        band += ax >= b
    last = len(bounds) + 1
    band[~(ax < np.inf)] = last  # (nan compares false)
    return [np.flatnonzero(band == k) for k in range(last + 1)]


# --- erf and erfc on one block --------------------------------------------------------------------

def _erf_block(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """erf of a float64 block into ``out``; the indexes that math.erf must decide."""
    ax = np.abs(x)
    neg = np.signbit(x)
    at = _bands(ax, (TINY_X, FIRST, SECOND, ERF_RB, SIX))
    if at[0].size:  # (below SUBNORMAL_X scaled by 16, as fdlibm)
        v = x[at[0]]
        out[at[0]] = np.where(np.abs(v) < SUBNORMAL_X, 0.0625 * (16.0 * v + (16.0 * EFX) * v),
                              v + EFX * v)
    if at[1].size:
        v = x[at[1]]
        out[at[1]] = v + v * _small_ratio(v)
    if at[2].size:
        w = _near_one_ratio(ax[at[2]])
        w += ERX
        out[at[2]] = np.copysign(w, x[at[2]])
    doubt = []
    for idx, first in ((at[3], True), (at[4], False)):
        if idx.size:
            a = ax[idx]
            r, d = _exp_part(a, first)
            r /= a
            np.subtract(1.0, r, out=r)
            out[idx] = np.copysign(r, x[idx])
            doubt.append(idx[d])
    if at[5].size:
        out[at[5]] = np.copysign(1.0, x[at[5]])
    if at[6].size:  # inf: +-1; nan: nan
        v = x[at[6]]
        out[at[6]] = np.where(neg[at[6]], -1.0, 1.0) + 1.0 / v
    return np.concatenate(doubt) if doubt else np.empty(0, dtype=np.intp)


def _erfc_block(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """erfc of a float64 block into ``out``; the indexes that math.erfc must decide."""
    ax = np.abs(x)
    neg = np.signbit(x)
    at = _bands(ax, (ERFC_TINY_X, FIRST, SECOND, ERFC_RB, TWENTY_EIGHT))
    if at[0].size:
        out[at[0]] = 1.0 - x[at[0]]
    if at[1].size:
        v = x[at[1]]
        y = _small_ratio(v)
        y *= v  # x*y; then 1 - (x + x*y) below 1/4, else 0.5 - (x*y + (x - 0.5))
        out[at[1]] = np.where(v < 0.25, 1.0 - (v + y), 0.5 - (y + (v - 0.5)))
    if at[2].size:
        w = _near_one_ratio(ax[at[2]])
        n = neg[at[2]]
        out[at[2]] = np.where(n, 1.0 + (ERX + w), (1.0 - ERX) - w)
    doubt = []
    for idx, first in ((at[3], True), (at[4], False)):
        if not first:  # x <= -6: 2 - tiny
            two = neg[idx] & (ax[idx] >= SIX)
            out[idx[two]] = 2.0
            idx = idx[~two]
        if idx.size:
            a = ax[idx]
            r, d = _exp_part(a, first)
            r /= a
            out[idx] = np.where(neg[idx], 2.0 - r, r)
            doubt.append(idx[d])
    if at[5].size:
        out[at[5]] = np.where(neg[at[5]], 2.0, 0.0)
    if at[6].size:  # +inf: 0; -inf: 2; nan: nan
        v = x[at[6]]
        out[at[6]] = np.where(neg[at[6]], 2.0, 0.0) + 1.0 / v
    return np.concatenate(doubt) if doubt else np.empty(0, dtype=np.intp)


def _apply(a, block, scalar):
    arr = np.asarray(a)
    dtype = arr.dtype if arr.dtype.kind == "f" else np.dtype(F64)
    flat = np.ascontiguousarray(arr, dtype=F64).reshape(-1)
    if flat.size < SMALL or not _same_as_the_library():
        out = np.array([scalar(v) for v in flat.tolist()], dtype=F64)
    else:
        out = np.empty_like(flat)
        with np.errstate(all="ignore"):
            for start in range(0, flat.size, BLOCK):
                part = flat[start:start + BLOCK]
                dest = out[start:start + BLOCK]
                doubt = block(part, dest)
                if doubt.size:
                    dest[doubt] = [scalar(v) for v in part[doubt].tolist()]
    return out.reshape(arr.shape).astype(dtype, copy=False)


@functools.cache
def _same_as_the_library() -> bool:
    """Whether this module gives math.erf's and math.erfc's doubles, on values of every range."""
    x = np.concatenate([np.linspace(-7.0, 7.0, 113), [1e-300, 3e-9, 0.3, 0.9, 2.0, 5.0, 27.0]])
    for block, scalar in ((_erf_block, math.erf), (_erfc_block, math.erfc)):
        want, out = [scalar(v) for v in x.tolist()], np.empty_like(x)
        with np.errstate(all="ignore"):
            doubt = block(x, out).tolist()
        out[doubt] = [want[i] for i in doubt]
        if out.tolist() != want:
            return False
    return True


def erf(a):
    """erf elementwise, in the input's float dtype (float64 for integers and booleans)."""
    return _apply(a, _erf_block, math.erf)


def erfc(a):
    """erfc elementwise, in the input's float dtype (float64 for integers and booleans)."""
    return _apply(a, _erfc_block, math.erfc)
