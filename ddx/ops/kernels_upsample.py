"""Nearest-neighbour upsampling over the last 1-3 dims as ATen's CPU kernel computes it
(UpSample.h's nearest_idx, UpSampleKernel.cpp's cpu_upsample_nearest and its backward):
the source of output index i is i itself when the sizes are equal, i >> 1 when the output is
twice the input, else min(floor(i * scale), in - 1) in float32, scale being 1 / scale_factor
(when the caller gave one) or in / out; backward adds each output cell's gradient into its
source, cell after cell."""

from __future__ import annotations

import numpy as np

from .kernels_shape import on_parts


def source_index(out: int, size: int, scale) -> np.ndarray:
    """nearest_idx for every output index of one dim (``scale``: the scale factor or None)."""
    i = np.arange(out, dtype=np.int64)
    if out == size:
        return i
    if out == 2 * size:
        return i >> 1
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else \
        np.float32(np.float32(size) / np.float32(out))
    return np.minimum(np.floor(i.astype(np.float32) * s).astype(np.int64), size - 1)


def _indices(shape: tuple, output_size: tuple, scales: tuple) -> tuple:
    n = len(output_size)
    return tuple(source_index(o, shape[-n + k], scales[k])
                 for k, o in enumerate(output_size))


def _take(x: np.ndarray, output_size: tuple, scales: tuple) -> np.ndarray:
    x = np.asarray(x)
    n = len(output_size)
    for k, idx in enumerate(_indices(x.shape, output_size, scales)):
        x = np.take(x, idx, axis=x.ndim - n + k)
    return np.ascontiguousarray(x)


def upsample_nearest(x, output_size=(1,), scales=(None,)):
    return on_parts(_take, x, tuple(output_size), tuple(scales))


def _back(g: np.ndarray, shape: tuple, output_size: tuple, scales: tuple) -> np.ndarray:
    n = len(output_size)
    lead = shape[:-n]
    idx = _indices(shape, output_size, scales)
    flat_in = np.ravel_multi_index(np.meshgrid(*idx, indexing="ij"), shape[-n:]).reshape(-1)
    rows = int(np.prod(lead, dtype=np.int64))
    inner = int(np.prod(shape[-n:], dtype=np.int64))
    grad = np.zeros((rows, inner), g.dtype)
    gg = np.ascontiguousarray(g).reshape(rows, -1)
    for r in range(rows):  # (per row, the output cells in order: np.add.at adds in order)
        np.add.at(grad[r], flat_in, gg[r])
    return grad.reshape(shape)


def upsample_nearest_vjp(g, o, x, output_size=(1,), scales=(None,)):
    shape = np.shape(x)
    return on_parts(lambda gg: _back(np.broadcast_to(gg, np.shape(o)).astype(np.asarray(x).dtype),
                                     shape, tuple(output_size), tuple(scales)), g)


def upsample_nearest_jvp(ts, o, x, output_size=(1,), scales=(None,)):
    return upsample_nearest(np.broadcast_to(ts[0], np.shape(x)), output_size, scales)


def sources(shape: tuple, output_size: tuple, scales: tuple) -> list:
    """The source index lists, for the emitted JAX."""
    return [idx.tolist() for idx in _indices(shape, tuple(output_size), tuple(scales))]


# --- bilinear (mode='bilinear', 4-d input) --------------------------------------------------

def _fma_of(dt):
    from .rng_math import fma32, fma64

    return (lambda a, b, c: fma32(a, b, c).astype(dt)) if dt == np.float32 else \
        (lambda a, b, c: fma64(a, b, c).astype(dt))


def linear_weights(size: int, out: int, align: bool, scale, dt: np.dtype) -> tuple:
    """compute_source_index_and_lambda for each output index: (i0, i1, lambda0, lambda1),
    in the input's type (area_pixel_compute_scale and _source_index; the source index
    ``scale * (i + 0.5) - 0.5`` one fused multiply-add)."""
    t = dt.type
    i = np.arange(out)
    if out == size:
        return i, i, np.ones(out, dt), np.zeros(out, dt)
    if align:
        ratio = t(t(size - 1) / t(out - 1)) if out > 1 else t(0)
        real = (ratio * i.astype(dt)).astype(dt)
    else:
        ratio = t(1.0 / scale) if scale is not None and scale > 0 else t(t(size) / t(out))
        real = _fma_of(dt)(np.full(out, ratio, dt), (i.astype(dt) + t(0.5)).astype(dt),
                           np.full(out, t(-0.5), dt))
        real = np.where(real < 0, t(0), real).astype(dt)
    i0 = np.minimum(np.floor(real).astype(np.int64), size - 1)
    l1 = np.minimum(np.maximum((real - i0.astype(dt)).astype(dt), t(0)), t(1)).astype(dt)
    return i0, i0 + (i0 < size - 1), (t(1) - l1).astype(dt), l1


def _corners(shape, output_size, align, scales, dt):
    (h0, h1, a0, a1), (w0, w1, b0, b1) = (
        linear_weights(shape[-2 + k], output_size[k], align, scales[k], dt) for k in (0, 1))
    return h0, h1, w0, w1, (a0, a1), (b0, b1)


def _bilinear(x: np.ndarray, output_size: tuple, align: bool, scales: tuple) -> np.ndarray:
    """Each output cell: its four corners times the products of their weights, added by
    fused multiply-adds in the kernel's order: (0, 1), (0, 0), (1, 0), (1, 1)."""
    x = np.asarray(x)
    dt = x.dtype
    h0, h1, w0, w1, hw, ww = _corners(x.shape, output_size, align, scales, dt)
    fma = _fma_of(dt)
    hs, ws = (h0, h1), (w0, w1)
    acc = None
    for i, j in ((0, 1), (0, 0), (1, 0), (1, 1)):
        corner = x[..., hs[i][:, None], ws[j][None, :]]
        weight = np.broadcast_to((hw[i][:, None] * ww[j][None, :]).astype(dt), corner.shape)
        acc = (corner * weight).astype(dt) if acc is None else fma(corner, weight, acc)
    return acc


def upsample_bilinear(x, output_size=(1, 1), align_corners=False, scales=(None, None)):
    return on_parts(_bilinear, x, tuple(output_size), bool(align_corners), tuple(scales))


def _bilinear_back(g: np.ndarray, shape: tuple, output_size: tuple, align: bool,
                   scales: tuple) -> np.ndarray:
    """cpu_upsample_linear_backward: output cell after cell, each adding h * w * g into its
    four corners (one fused multiply-add each)."""
    dt = g.dtype
    h0, h1, w0, w1, (a0, a1), (b0, b1) = _corners(shape, output_size, align, scales, dt)
    lead = shape[:-2]
    grad = np.zeros(lead + (shape[-2] * shape[-1],), dt)
    fma = _fma_of(dt)
    width = shape[-1]
    for oh in range(output_size[0]):
        for ow in range(output_size[1]):
            go = g[..., oh, ow]
            for ih, lh in ((h0[oh], a0[oh]), (h1[oh], a1[oh])):
                for iw, lw in ((w0[ow], b0[ow]), (w1[ow], b1[ow])):
                    k = ih * width + iw
                    grad[..., k] = fma(np.full(go.shape, dt.type(lh * lw), dt), go,
                                       grad[..., k])
    return grad.reshape(shape)


def upsample_bilinear_vjp(g, o, x, output_size=(1, 1), align_corners=False,
                          scales=(None, None)):
    shape = np.shape(x)
    dt = np.asarray(x).dtype
    return on_parts(lambda gg: _bilinear_back(np.broadcast_to(gg, np.shape(o)).astype(dt),
                                              shape, tuple(output_size), bool(align_corners),
                                              tuple(scales)), g)


def upsample_bilinear_jvp(ts, o, x, output_size=(1, 1), align_corners=False,
                          scales=(None, None)):
    return upsample_bilinear(np.broadcast_to(ts[0], np.shape(x)), output_size, align_corners,
                             scales)


def bilinear_terms(shape: tuple, output_size: tuple, align: bool, scales: tuple,
                   dt=np.float64) -> list:
    """[(rows, cols, weights)] of the four corners, for the emitted JAX."""
    h0, h1, w0, w1, hw, ww = _corners(shape, output_size, align, scales, np.dtype(dt))
    hs, ws = (h0, h1), (w0, w1)
    return [(hs[i].tolist(), ws[j].tolist(), (hw[i][:, None] * ww[j][None, :]).tolist())
            for i, j in ((0, 1), (0, 0), (1, 0), (1, 1))]


# --- linear (mode='linear', 3-d input) ------------------------------------------------------

def _linear(x: np.ndarray, output_size: tuple, align: bool, scales: tuple) -> np.ndarray:
    """fma(x[i0], lambda0, x[i1] * lambda1) per output index, as the kernel's fused sum."""
    x = np.asarray(x)
    dt = x.dtype
    i0, i1, l0, l1 = linear_weights(x.shape[-1], output_size[0], align, scales[0], dt)
    shape = x.shape[:-1] + (output_size[0],)
    return _fma_of(dt)(x[..., i0], np.broadcast_to(l0, shape),
                       (x[..., i1] * l1).astype(dt))


def upsample_linear(x, output_size=(1,), align_corners=False, scales=(None,)):
    return on_parts(_linear, x, tuple(output_size), bool(align_corners), tuple(scales))


def _linear_back(g: np.ndarray, shape: tuple, output_size: tuple, align: bool,
                 scales: tuple) -> np.ndarray:
    dt = g.dtype
    i0, i1, l0, l1 = linear_weights(shape[-1], output_size[0], align, scales[0], dt)
    grad = np.zeros(shape, dt)
    fma = _fma_of(dt)
    for o in range(output_size[0]):
        go = g[..., o]
        for i, lam in ((i0[o], l0[o]), (i1[o], l1[o])):
            grad[..., i] = fma(np.full(go.shape, lam, dt), go, grad[..., i])
    return grad


def upsample_linear_vjp(g, o, x, output_size=(1,), align_corners=False, scales=(None,)):
    shape = np.shape(x)
    dt = np.asarray(x).dtype
    return on_parts(lambda gg: _linear_back(np.broadcast_to(gg, np.shape(o)).astype(dt), shape,
                                            tuple(output_size), bool(align_corners),
                                            tuple(scales)), g)


def upsample_linear_jvp(ts, o, x, output_size=(1,), align_corners=False, scales=(None,)):
    return upsample_linear(np.broadcast_to(ts[0], np.shape(x)), output_size, align_corners,
                           scales)


def linear_terms(shape: tuple, output_size: tuple, align: bool, scales: tuple,
                 dt=np.float64) -> list:
    i0, i1, l0, l1 = linear_weights(shape[-1], output_size[0], align, scales[0], np.dtype(dt))
    return [(i0.tolist(), l0.tolist()), (i1.tolist(), l1.tolist())]
