"""float32 GELU (approximate='none') and its backward as PyTorch's CPU build computes them for
a contiguous float32 tensor of more than one element: through oneDNN (ATen's gelu_out_cpu and
gelu_backward_out_cpu call ideep's eltwise_gelu_erf when use_mkldnn(self)), whose JIT kernels
for AVX512 cores are ported here operation for operation (oneDNN's jit_uni_eltwise_injector:
the forward a piecewise minimax polynomial of |x| picked by the exponent and two mantissa bits,
the backward Abramowitz and Stegun's erf with oneDNN's own exp). Every element takes the same
path (the tail of a row is masked, not scalar). float32 in, float32 out."""

from __future__ import annotations

import os

import numpy as np

from .act_loop import cpu_flags
from .rng_math import fma32

F32, I32 = np.float32, np.int32


def _f(bits: int) -> np.float32:
    return np.array([bits], np.uint32).view(F32)[0]


# gelu_erf_minimax_pol: coefficients of degree 0..5 (rows) of 25 polynomials (columns)
_POLY = np.array([
    (0xa6f2cb94, 0x32827792, 0x3381cc0c, 0x34523d4a, 0x351ac44d, 0x35f36d88, 0x36ee8229,
     0x37b8a3bb, 0x3867a213, 0x3940033b, 0x3a2a5a1d, 0x3ae35863, 0x3b7828f2, 0x3c08b14b,
     0x3c515ed3, 0xbb503236, 0xbd8d8e5e, 0xbe8abcd9, 0xbf0c19a2, 0xbeccb328, 0x3e176ced,
     0x3f470d99, 0x3f7abb28, 0x3f800000, 0x00000000),
    (0x3f4c422a, 0x3f4c421f, 0x3f4c4207, 0x3f4c41cb, 0x3f4c413b, 0x3f4c3fad, 0x3f4c3a2f,
     0x3f4c2d40, 0x3f4c146a, 0x3f4bc341, 0x3f4ad08c, 0x3f48f8cf, 0x3f45fac7, 0x3f404e07,
     0x3f3b980f, 0x3f48dff3, 0x3f78b21b, 0x3fbb0704, 0x40019c32, 0x3fe536d6, 0x3f81331e,
     0x3e6c8684, 0x3c98f936, 0x00000000, 0x3f800000),
    (0xb62173f4, 0x3735e4cf, 0x37f2ff89, 0x388c23be, 0x3917535c, 0x39ab2ab0, 0x3a60fadb,
     0x3af9b960, 0x3b6e5491, 0x3c0a4ec5, 0x3ca5aa8c, 0x3d2138d9, 0x3d8737d4, 0x3ddfb660,
     0x3e0f27ab, 0x3d94004b, 0xbe0efdeb, 0xbf1d96c3, 0xbf89db58, 0xbf6d9897, 0xbef69fb8,
     0xbdc4f8a8, 0xbbde6422, 0x00000000, 0x00000000),
    (0xbe081a19, 0xbe084570, 0xbe08639b, 0xbe089837, 0xbe08f409, 0xbe09ab95, 0xbe0b66d0,
     0xbe0e400a, 0xbe124df8, 0xbe1bde02, 0xbe2f19c9, 0xbe4931bf, 0xbe685fbc, 0xbe89c95f,
     0xbe96cbca, 0xbe8044aa, 0xbe0550f2, 0x3dcfd6a1, 0x3e94c826, 0x3e79345f, 0x3decec91,
     0x3ca46568, 0x3aa1e00a, 0x00000000, 0x00000000),
    (0xba3d61db, 0x39f097a3, 0x3a5845dc, 0x3ab1fa35, 0x3b0cefb8, 0x3b653ab6, 0x3bcae527,
     0x3c221712, 0x3c6c5840, 0x3cc0a703, 0x3d1dcc19, 0x3d63656d, 0x3d955907, 0x3dbf9910,
     0x3dd53f69, 0x3db7dcef, 0x3d639ebe, 0xba6ede48, 0xbd22be69, 0xbd041cf1, 0xbc64f5ab,
     0xbb097a32, 0xb8ebf380, 0x00000000, 0x00000000),
    (0x3cb7d80c, 0x3c9b6050, 0x3c978d11, 0x3c92e850, 0x3c8d058b, 0x3c848454, 0x3c6cd623,
     0x3c4c824b, 0x3c2a7935, 0x3be0b390, 0x3b0651ac, 0xbb232f53, 0xbbd42fa0, 0xbc2c5366,
     0xbc492c9e, 0xbc2a7aa6, 0xbbd55d04, 0xba823a76, 0x3b102aa8, 0x3ae25a7e, 0x3a31f792,
     0x38b84375, 0x3689bb5a, 0x00000000, 0x00000000),
], np.uint32).view(F32)
_IDX_BIAS = np.int64(np.array([0xC21FFFFF], np.uint32).view(I32)[0])
_RBOUND = _f(0x40B15CEE)  # past it, erf is 1: polynomial 23
_ONE, _HALF = F32(1.0), F32(0.5)


_AVX512: list = []


def avx512_core() -> bool:
    """Whether oneDNN's kernels are its AVX512 ones: the CPU's avx512f/bw/vl/dq, unless
    ONEDNN_MAX_CPU_ISA (or DNNL_MAX_CPU_ISA) caps it below."""
    if not _AVX512:
        cap = (os.environ.get("ONEDNN_MAX_CPU_ISA") or os.environ.get("DNNL_MAX_CPU_ISA") or "")
        below = cap.strip().upper() in ("SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX2_VNNI_2")
        _AVX512.append(not below and {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= cpu_flags())
    return _AVX512[0]


def gelu(s: np.ndarray) -> np.ndarray:
    """oneDNN's gelu_erf forward: the minimax kernel on AVX512 cores, else Abramowitz and
    Stegun's erf."""
    return minimax_gelu(s) if avx512_core() else stegun_gelu(s)


def minimax_gelu(s: np.ndarray) -> np.ndarray:
    """gelu_erf_minimax_approx_compute_vector_fwd: 0.5 * s * (1 + sign(s) * P_i(|s|))."""
    s = np.asarray(s, F32)
    with np.errstate(all="ignore"):
        pos = np.abs(s)
        idx = pos.view(I32).astype(np.int64) + _IDX_BIAS  # (vpaddd wraps: take it mod 2**32)
        idx = (((idx + 2 ** 31) % 2 ** 32) - 2 ** 31).astype(I32) >> 21
        idx = np.where(_RBOUND < pos, 23, np.clip(idx, 1, 24))
        pol = _POLY[5][idx]
        for degree in (4, 3, 2, 1, 0):
            pol = fma32(pol, pos, _POLY[degree][idx])
        pol = np.where(np.signbit(s), -pol, pol)
        return (s * (pol + _ONE)) * _HALF


_LOG2EF, _LN_MAX, _LN_MIN, _LN2 = _f(0x3FB8AA3B), _f(0x42B17218), _f(0xC2AEAC50), _f(0x3F317218)
_EXP = [_f(v) for v in (0x3C07CFCE, 0x3D2B9D0D, 0x3E2AAD40, 0x3EFFFEE3, 0x3F7FFFFB)]  # p5..p1


def exp(x: np.ndarray) -> np.ndarray:
    """exp_compute_vector_fwd: 2 * 2^(n-1) * p(r), n = floor(x log2(e) + 0.5)."""
    x = np.asarray(x, F32)
    with np.errstate(all="ignore"):
        low = x < _LN_MIN
        x = np.maximum(np.minimum(x, _LN_MAX), _LN_MIN)
        t = np.floor(x * _LOG2EF + _HALF)
        r = fma32(-t, _LN2, x)
        n = (np.rint(t - _ONE).astype(I32) + I32(127)) << 23
        scale = np.where(low, 0, n).astype(I32).view(F32)
        pol = np.full_like(r, _EXP[0])
        for c in (*_EXP[1:], _ONE):
            pol = fma32(pol, r, c)
        return pol * scale * F32(2.0)


_AS_P, _AS_SQRT1_2, _AS_1_SQRTPI = _f(0x3EA7BA05), _f(0x3F3504F3), _f(0x3F106EBA)
_AS = [_f(v) for v in (0x3F87DC22, 0xBFBA00E3, 0x3FB5F0E3, 0xBE91A98E, 0x3E827906)]  # p5..p1


def _stegun_erf(r, q):
    """sign(r) (1 - p(w) w q), w = 1 / (1 + p |r|), q = exp(-r^2): oneDNN's erf."""
    w = _ONE / fma32(_AS_P, np.abs(r), _ONE)
    pol = np.full_like(w, _AS[0])
    for c in _AS[1:]:
        pol = fma32(pol, w, c)
    erf = fma32(-q * w, pol, _ONE)
    return np.where(np.signbit(r), -erf, erf)


def stegun_gelu(s: np.ndarray) -> np.ndarray:
    """gelu_erf_compute_vector_fwd below AVX512: S + S erf(s / sqrt 2), S = s / 2, fused."""
    s = np.asarray(s, F32)
    with np.errstate(all="ignore"):
        r = s * _AS_SQRT1_2
        erf = _stegun_erf(r, exp(-(r * r)))
        half_s = s * _HALF
        return fma32(erf, half_s, half_s)


def gelu_derivative(s: np.ndarray) -> np.ndarray:
    """gelu_erf_compute_vector_bwd: 0.5 + R exp(-R^2) / sqrt(pi) + 0.5 erf(R), R = s / sqrt(2);
    the gradient is the output's gradient times this."""
    s = np.asarray(s, F32)
    with np.errstate(all="ignore"):
        r = s * _AS_SQRT1_2
        q = exp(-(r * r))
        t = (r * _AS_1_SQRTPI) * q
        return fma32(_stegun_erf(r, q), _HALF, t + _HALF)
