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
