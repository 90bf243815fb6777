"""F.pad(mode='circular') as ATen's _pad_circular computes it: the input copied into the
middle of the output, then for each padded dimension (the last first) its left pad copied
from the output's own right end and its right pad from its left end; so the gradient is the
output's gradient with those copies undone in reverse order (each copy's gradient added to
its source's), the middle then being the input's gradient, summed in ATen's order."""

from __future__ import annotations

import numpy as np

from .pyfused import fused


def _copies(shape: tuple, pads: list) -> tuple[tuple, list]:
    """The middle's slices and the (destination, source) slices of each copy, in order."""
    nd = len(shape)
    k = len(pads) // 2
    out_shape = list(shape)
    middle = [slice(None)] * nd
    for i in range(k):
        dim = nd - 1 - i
        left, right = pads[2 * i], pads[2 * i + 1]
        out_shape[dim] = shape[dim] + left + right
        middle[dim] = slice(left, left + shape[dim])
    copies = []
    for i in range(k):
        dim = nd - 1 - i
        left, right = pads[2 * i], pads[2 * i + 1]
        size = out_shape[dim]
        if left > 0:
            src = size - left - max(right, 0)
            copies.append((dim, slice(0, left), slice(src, src + left)))
        if right > 0:
            start = max(left, 0)
            copies.append((dim, slice(size - right, size), slice(start, start + right)))
    return (tuple(out_shape), tuple(middle)), copies


def _at(nd: int, dim: int, s: slice) -> tuple:
    index = [slice(None)] * nd
    index[dim] = s
    return tuple(index)


def circular(ev, node, x, pads: list):
    (out_shape, middle), copies = _copies(x.shape, pads)
    nd = x.value.ndim
    out = np.zeros(out_shape, dtype=x.value.dtype)
    out[middle] = x.value
    for dim, dst, src in copies:
        out[_at(nd, dim, dst)] = out[_at(nd, dim, src)]

    def vjp(g: np.ndarray) -> np.ndarray:
        grad = np.array(g, dtype=x.value.dtype)
        for dim, dst, src in reversed(copies):
            moved = grad[_at(nd, dim, dst)].copy()
            grad[_at(nd, dim, dst)] = 0
            grad[_at(nd, dim, src)] = (grad[_at(nd, dim, src)] + moved).astype(grad.dtype)
        return np.ascontiguousarray(grad[middle])

    return fused(ev, node, "CopySlices", out, [x], (vjp,))


__all__ = ["circular"]
