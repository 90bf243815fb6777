"""ATen's RowwiseMoments (aten/src/ATen/native/cpu/moments_utils.h), the mean and variance
of each row that layer_norm's and group_norm's CPU kernels normalise with: Welford over chunks of 16 vectors
(the AVX2 kernel's 8 float or 4 double lanes, with its fused multiply-adds), the chunks'
moments merged pairwise (a cascade), the lanes then merged into the scalar Welford of the
row's tail. Vectorised over the rows with numpy; the same bits as torch 2.13's CPU build."""

from __future__ import annotations

import numpy as np

from ..ops.rng_math import fma32, fma64


def _fma(a, b, c, dt) -> np.ndarray:
    return (fma32 if dt == np.float32 else fma64)(a, b, c).astype(dt)


def _ceil_log2(x: int) -> int:
    return 1 if x <= 2 else int(x - 1).bit_length()


def rowwise_moments(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean, biased variance) of each row of the 2-d float array X."""
    dt = X.dtype
    T = dt.type
    lanes = 8 if dt == np.float32 else 4
    rows, N = X.shape
    n = N // lanes
    m = -(-n // 16)
    depth = _ceil_log2(m)
    zero = np.zeros((rows, lanes), dt)
    m0s = [0] * depth
    m1s = [zero] * depth
    m2s = [zero] * depth
    c_vecs = [T(T(1) / T(i + 1)) for i in range(16)]

    def add_vec(m0_add: int, m1_add, m2_add, k: int) -> None:  # AddMomentsVec into level k
        total = m0s[k] + m0_add
        c = T(0) if total == 0 else T(T(m0_add) / T(total))
        delta = (m1_add - m1s[k]).astype(dt)
        m2_tmp = (m2s[k] + m2_add).astype(dt)
        c_delta = (c * delta).astype(dt)
        m0_delta = (delta * T(m0s[k])).astype(dt)
        m1s[k] = (m1s[k] + c_delta).astype(dt)
        m2s[k] = _fma(m0_delta, c_delta, m2_tmp, dt)
        m0s[k] = total

    for i in range(m):
        base = i * 16 * lanes
        count = min(16, n - i * 16)
        m1v, m2v = zero, zero
        for j in range(count):
            x = X[:, base + j * lanes: base + (j + 1) * lanes]
            delta = (x - m1v).astype(dt)
            m1v = _fma(np.full_like(delta, c_vecs[j]), delta, m1v, dt)
            m2v = _fma(delta, (x - m1v).astype(dt), m2v, dt)
        add_vec(count, m1v, m2v, 0)
        mask, j = i + 1, 1
        while j < depth and (mask & 1) == 0:
            add_vec(m0s[j - 1], m1s[j - 1], m2s[j - 1], j)
            m0s[j - 1], m1s[j - 1], m2s[j - 1] = 0, zero, zero
            mask >>= 1
            j += 1
    for i in range(1, depth):
        add_vec(m0s[i], m1s[i], m2s[i], 0)
    m1_lanes, m2_lanes = m1s[0], m2s[0]
    count = 0
    m1 = np.zeros(rows, dt)
    m2 = np.zeros(rows, dt)
    for i in range(n * lanes, N):  # the tail, one element at a time
        x = X[:, i]
        delta = (x - m1).astype(dt)
        count += 1
        m1 = (m1 + (delta / T(count)).astype(dt)).astype(dt)
        m2 = (m2 + (delta * (x - m1).astype(dt)).astype(dt)).astype(dt)
    for lane in range(lanes):  # AddMoments(n, lane's moments): contracted to fmas
        total = count + n
        c = T(0) if total == 0 else T(T(n) / T(total))
        delta = (m1_lanes[:, lane] - m1).astype(dt)
        m1 = _fma(np.full_like(delta, c), delta, m1, dt)
        t = ((delta * delta).astype(dt) * c).astype(dt)
        m2 = (m2 + _fma(t, np.full_like(t, T(count)), m2_lanes[:, lane], dt)).astype(dt)
        count = total
    return m1, (m2 / T(N)).astype(dt)


__all__ = ["rowwise_moments"]
