"""The arithmetic of PyTorch's CPU random kernels, bit for bit: exact fused multiply-adds, the
AVX2 kernel's float32 log and sincos (avx_mathfun.h, as compiled: with FMA contraction), and
the platform's libm for float64 (numpy's own log differs from libm in the last bit)."""

from __future__ import annotations

import math

import numpy as np

_F32, _F64, _I32 = np.float32, np.float64, np.int32


def _round_to_odd(s: np.ndarray, err: np.ndarray) -> np.ndarray:
    """``s + err`` (err the exact rounding error of s) rounded to odd: a value that then
    rounds to any narrower precision exactly as ``s + err`` would."""
    adjust = (err != 0) & ((s.view(np.int64) & 1) == 0)
    if adjust.any():
        s = np.where(adjust, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    return s


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def fma32(a, b, c) -> np.ndarray:
    """float32 ``a*b + c`` rounded once. The product is exact in float64 and so is the sum's
    rounding to float64 except in the last bits; rounding that to float32 is wrong only when
    it lands exactly halfway between two floats and was inexact: those few are redone."""
    a, b, c = np.asarray(a, _F64), np.asarray(b, _F64), np.asarray(c, _F64)
    if b.ndim == 0 and c.ndim == 0 and b == 1 and c == 0:
        return a.astype(_F32) + _F32(0.0)  # (exact; -0 becomes +0 as in the fma)
    p = a * b
    s = p + c
    tie = (s.view(np.int64) & 0x1FFFFFFF) == 0x10000000
    if tie.any():
        p, c = np.broadcast_to(p, s.shape)[tie], np.broadcast_to(c, s.shape)[tie]
        s = np.array(s)
        s[tie] = _round_to_odd(*_two_sum(p, c))
    return s.astype(_F32)


def _split(a):
    t = a * 134217729.0  # 2**27 + 1: Dekker's split into two 26-bit halves
    hi = t - (t - a)
    return hi, a - hi


def fma64(a, b, c) -> np.ndarray:
    """float64 ``a*b + c`` rounded once (Boldo and Melquiond's emulation with round-to-odd)."""
    a, b, c = (np.asarray(v, _F64) for v in (a, b, c))
    if b.ndim == 0 and c.ndim == 0 and b == 1 and c == 0:
        return a + 0.0  # (exact; -0 becomes +0 as in the fma)
    uh = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    ul = ((ah * bh - uh) + ah * bl + al * bh) + al * bl
    th, tl = _two_sum(c, uh)
    v, err = _two_sum(tl, ul)
    with np.errstate(invalid="ignore", over="ignore"):
        out = th + _round_to_odd(v, err)
        plain = uh + c  # (where that is not finite, neither is the fma: inf, nan)
    return np.where(np.isfinite(plain), out, plain)


def libm(fn, x: np.ndarray) -> np.ndarray:
    """``fn`` (math.log, math.cos, ...) over an array: the same libm PyTorch calls."""
    flat = x.ravel().tolist()
    return np.fromiter(map(fn, flat), _F64, len(flat)).reshape(x.shape)


_LOG_P = [_F32(v) for v in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1,
                            -1.2420140846E-1, 1.4249322787E-1, -1.6668057665E-1,
                            2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1)]
_HALF_BITS = np.array([0.5], _F32).view(_I32)[0]
_MIN_NORM = np.array([0x00800000], _I32).view(_F32)[0]


def log_avx(x: np.ndarray) -> np.ndarray:
    """log256_ps of float32 x > 0 (Cephes' logf, eight lanes at a time in PyTorch)."""
    one, zero = _F32(1.0), _F32(0.0)
    x = np.maximum(x, _MIN_NORM)
    e = ((x.view(_I32) >> 23) - 127).astype(_F32) + one
    x = ((x.view(_I32) & _I32(~0x7f800000)) | _HALF_BITS).view(_F32)
    small = x < _F32(0.707106781186547524)
    tmp = np.where(small, x, zero)
    x = x - one
    e = e - np.where(small, one, zero)
    x = x + tmp
    z = x * x
    y = np.full_like(x, _LOG_P[0])
    for p in _LOG_P[1:]:
        y = fma32(y, x, p)
    y = y * x
    y = fma32(y, z, e * _F32(-2.12194440e-4))
    y = fma32(-z, _F32(0.5), y)
    return fma32(e, _F32(0.693359375), x + y)


def sincos_avx(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sincos256_ps of float32 x (Cephes' sinf/cosf): (sin, cos)."""
    sign_sin = x.view(_I32) & _I32(-0x80000000)
    x = np.abs(x)
    j = ((x * _F32(1.27323954473516)).astype(_I32) + 1) & _I32(~1)
    y = j.astype(_F32)
    sign_sin = sign_sin ^ ((j & 4) << 29)
    sign_cos = (~(j - 2) & 4) << 29
    first = (j & 2) == 0  # which polynomial gives the sine
    for dp in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8):
        x = fma32(y, _F32(dp), x)
    z = x * x
    c = fma32(np.full_like(x, _F32(2.443315711809948E-005)), z, _F32(-1.388731625493765E-003))
    c = fma32(c, z, _F32(4.166664568298827E-002))
    c = fma32(c * z, z, -(z * _F32(0.5))) + _F32(1.0)
    s = fma32(np.full_like(x, _F32(-1.9515295891E-4)), z, _F32(8.3321608736E-3))
    s = fma32(s, z, _F32(-1.6666654611E-1))
    s = fma32(s * z, x, x)
    zero = np.zeros_like(x)
    sin2 = np.where(first, s, zero)
    sin1 = np.where(first, zero, c)
    sin = ((sin1 + sin2).view(_I32) ^ sign_sin).view(_F32)
    cos = (((c - sin1) + (s - sin2)).view(_I32) ^ sign_cos).view(_F32)
    return sin, cos


def box_muller_avx(u: np.ndarray, mean: np.float32, std: np.float32) -> np.ndarray:
    """normal_fill_16_AVX2 over rows of 16 float32 uniforms: the first 8 give the radius, the
    last 8 the angle; cos fills the first half of the row, sin the second."""
    radius = np.sqrt(_F32(-2.0) * log_avx(_F32(1.0) - u[:, :8]))
    sin, cos = sincos_avx(_F32(2.0 * math.pi) * u[:, 8:])
    return np.concatenate([fma32(radius * cos, std, mean), fma32(radius * sin, std, mean)], 1)


_TRIG: list = []


def _trig():
    """cos and sin as libm computes them: numpy's own where they agree with libm on a probe
    (numpy's float64 sin and cos call libm; a SIMD version would differ in the last bit on
    many of the probe's 4096 angles), else libm number by number. (numpy's log differs.)"""
    if not _TRIG:
        probe = np.linspace(0.0, 2 * math.pi, 4096)
        fast = np.array_equal(np.cos(probe), libm(math.cos, probe)) and \
            np.array_equal(np.sin(probe), libm(math.sin, probe))
        _TRIG.append((np.cos, np.sin) if fast else
                     (lambda x: libm(math.cos, x), lambda x: libm(math.sin, x)))
    return _TRIG[0]


def box_muller(u: np.ndarray, mean: float, std: float) -> np.ndarray:
    """normal_fill_16 in float64 over rows of 16 uniforms (std::log, std::cos, std::sin)."""
    cos, sin = _trig()
    radius = np.sqrt(-2.0 * libm(math.log, 1.0 - u[:, :8]))
    theta = (2.0 * math.pi) * u[:, 8:]
    return np.concatenate([fma64(radius * cos(theta), std, mean),
                           fma64(radius * sin(theta), std, mean)], 1)
