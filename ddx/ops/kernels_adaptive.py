"""Adaptive average pooling over the last two dims as ATen's CPU kernel computes it
(AdaptiveAvgPoolKernel.cpp, cpu_adaptive_avg_pool2d and its backward): output cell (oh, ow)
averages rows floor(oh * H / OH) to ceil((oh + 1) * H / OH) and the same columns, its window
added row by row from 0 in the input's type and divided by the window's height, then its
width; backward adds g / kh / kw into each cell's window, cell after cell."""

from __future__ import annotations

import numpy as np

from .kernels_shape import on_parts


def _bounds(out: int, size: int) -> list:
    return [((o * size) // out, -(-((o + 1) * size) // out)) for o in range(out)]


def _pool(x: np.ndarray, output_size: tuple) -> np.ndarray:
    x = np.asarray(x)
    oh, ow = output_size
    dt = x.dtype
    out = np.empty(x.shape[:-2] + (oh, ow), dt)
    for i, (h0, h1) in enumerate(_bounds(oh, x.shape[-2])):
        for j, (w0, w1) in enumerate(_bounds(ow, x.shape[-1])):
            window = x[..., h0:h1, w0:w1].reshape(x.shape[:-2] + (-1,))
            total = np.add.accumulate(window, axis=-1)[..., -1]
            if dt.kind == "f":
                out[..., i, j] = (total / dt.type(h1 - h0) / dt.type(w1 - w0)).astype(dt)
            else:
                out[..., i, j] = total / (h1 - h0) / (w1 - w0)
    return out


def adaptive_avg_pool(x, output_size=(1, 1)):
    return on_parts(_pool, x, tuple(output_size))


def _back(g: np.ndarray, shape: tuple) -> np.ndarray:
    oh, ow = g.shape[-2:]
    dt = g.dtype
    grad = np.zeros(shape, dt)
    for i, (h0, h1) in enumerate(_bounds(oh, shape[-2])):
        for j, (w0, w1) in enumerate(_bounds(ow, shape[-1])):
            delta = (g[..., i, j] / dt.type(h1 - h0) / dt.type(w1 - w0)).astype(dt)
            grad[..., h0:h1, w0:w1] += delta[..., None, None]
    return grad


def adaptive_avg_pool_vjp(g, o, x, output_size=(1, 1)):
    shape = np.shape(x)
    return on_parts(lambda gg: _back(np.broadcast_to(gg, np.shape(o)).astype(np.asarray(x).dtype),
                                     shape), g)


def adaptive_avg_pool_jvp(ts, o, x, output_size=(1, 1)):
    return adaptive_avg_pool(np.broadcast_to(ts[0], np.shape(x)), output_size)


def windows(shape: tuple, output_size: tuple) -> list:
    """[(h0, h1, w0, w1)] of each output row, for the emitted JAX."""
    oh, ow = output_size
    return [[(h0, h1, w0, w1) for w0, w1 in _bounds(ow, shape[-1])]
            for h0, h1 in _bounds(oh, shape[-2])]
