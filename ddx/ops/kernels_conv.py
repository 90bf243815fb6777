"""Kernels for ddx/ops/rows_conv.py: N-d convolution (ATen's convolution with groups, stride,
zero padding and dilation) as an im2col matrix product, its two gradients (the input's a
transposed convolution scattered back window offset by window offset, the weight's a matrix
product of the gradient with the windows), and max and average pooling over the last n
dimensions with their gradients. Every function works on plain arrays; the rules reach dual
numbers (second order) through ``bilinear_parts`` and ``on_parts``.

A convolution's value is not PyTorch's to the last bit: ATen's CPU build calls oneDNN, whose
summation order inside each output element is its own; ddx's product adds in BLAS's order
(within a few float32 ulps of PyTorch's). The pools are exact: a max is a copy, and an
average adds its window row by row in ATen's loop order, then divides once."""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .kernels_misc import bilinear_parts
from .kernels_more import primal
from .kernels_shape import on_parts


def _t(v) -> tuple:
    return tuple(int(i) for i in v)


def out_size(size: int, k: int, stride: int, pad: int, dilation: int) -> int:
    return (size + 2 * pad - dilation * (k - 1) - 1) // stride + 1


def _windows(xp: np.ndarray, k: tuple, out: tuple, stride: tuple, dilation: tuple):
    """A read-only view (lead..., *out, *k) of the windows over xp's last len(k) dims."""
    n = len(k)
    lead = xp.shape[:-n]
    st = xp.strides
    shape = (*lead, *out, *k)
    strides = (*st[:-n], *(st[-n + i] * stride[i] for i in range(n)),
               *(st[-n + i] * dilation[i] for i in range(n)))
    return as_strided(xp, shape, strides, writeable=False)


def _padded(x: np.ndarray, n: int, pad: tuple, fill=0) -> np.ndarray:
    if not any(pad):
        return x
    widths = [(0, 0)] * (x.ndim - n) + [(p, p) for p in pad]
    return np.pad(x, widths, constant_values=fill)


def _geometry(x_shape: tuple, w_shape: tuple, stride, padding, dilation) -> tuple:
    n = len(w_shape) - 2
    k = tuple(w_shape[2:])
    out = tuple(out_size(x_shape[2 + i], k[i], stride[i], padding[i], dilation[i])
                for i in range(n))
    return n, k, out


def _reads(offset: tuple, k: tuple, out: tuple, stride: tuple, dilation: tuple) -> tuple:
    """The slices of the padded input that window offset ``offset`` reads, for every output."""
    return tuple(slice(offset[i] * dilation[i],
                       offset[i] * dilation[i] + stride[i] * (out[i] - 1) + 1, stride[i])
                 for i in range(len(k)))


def _columns(x: np.ndarray, w_shape: tuple, stride, padding, dilation, groups,
             out: tuple | None = None) -> np.ndarray:
    """im2col: (N, G, Cg * prod(k), L), L the output positions in order, filled one window
    offset at a time (each a strided slice of the padded input); ``out``: the first windows
    only (a transposed convolution's gradients, where output_padding left more input)."""
    n, k, whole = _geometry(x.shape, w_shape, stride, padding, dilation)
    out = whole if out is None else out
    xp = _padded(x, n, padding)
    N, C = x.shape[:2]
    cols = np.empty((N, C, math.prod(k), *out), x.dtype)
    for j, offset in enumerate(np.ndindex(*k)):
        cols[:, :, j] = xp[(Ellipsis, *_reads(offset, k, out, stride, dilation))]
    return cols.reshape(N, groups, (C // groups) * math.prod(k), math.prod(out))


def convolve(x, w, b=None, *, stride=(1,), padding=(0,), dilation=(1,), groups=1, out=None):
    """ATen's convolution (not transposed) of x (N, C, *S) with w (O, C/groups, *k), plus b
    (``out``: the first windows only, see _columns)."""
    x, w = np.asarray(x), np.asarray(w)
    stride, padding, dilation = _t(stride), _t(padding), _t(dilation)
    n = w.ndim - 2
    out = _geometry(x.shape, w.shape, stride, padding, dilation)[2] if out is None else out
    N, C_out, G = x.shape[0], w.shape[0], groups
    cols = _columns(x, w.shape, stride, padding, dilation, G, out)  # N, G, CgK, L
    y = np.matmul(w.reshape(G, C_out // G, -1), cols).reshape(N, C_out, *out)
    if b is not None:
        y = y + np.asarray(b).reshape(C_out, *(1,) * n)
    return y


def _grad_input(g, w, x_shape: tuple, stride, padding, dilation, groups):
    g, w = np.asarray(g), np.asarray(w)
    n, k = len(w.shape) - 2, tuple(w.shape[2:])
    out = tuple(g.shape[2:])  # (a transposed convolution's output_padding: the input may be
    N, C = x_shape[:2]        # longer than the windows reach; its end gets nothing)
    C_out, G = w.shape[0], groups
    wm = w.reshape(G, C_out // G, -1)
    cols = np.matmul(np.swapaxes(wm, -1, -2), g.reshape(N, G, C_out // G, -1))  # N, G, CgK, L
    cols = cols.reshape(N, C, math.prod(k), *out)
    dtype = np.result_type(g, w)
    padded = np.zeros((N, C, *(x_shape[2 + i] + 2 * padding[i] for i in range(n))), dtype)
    for j, offset in enumerate(np.ndindex(*k)):  # each offset's share, added where it read
        padded[(Ellipsis, *_reads(offset, k, out, stride, dilation))] += cols[:, :, j]
    inner = tuple(slice(p, p + x_shape[2 + i]) for i, p in enumerate(padding))
    return np.ascontiguousarray(padded[(Ellipsis, *inner)])


def _grad_weight(g, x, w_shape: tuple, stride, padding, dilation, groups):
    g, x = np.asarray(g), np.asarray(x)
    N, C_out, G = g.shape[0], w_shape[0], groups
    cols = _columns(x, w_shape, stride, padding, dilation, G, tuple(g.shape[2:]))
    gm = g.reshape(N, G, C_out // G, -1)  # N, G, Og, L
    gw = np.matmul(gm, np.swapaxes(cols, -1, -2))  # N, G, Og, CgK
    return (gw[0] if N == 1 else gw.sum(axis=0)).reshape(w_shape)


def _conv_kw(kw: dict) -> tuple:
    return (_t(kw.get("stride", (1,))), _t(kw.get("padding", (0,))),
            _t(kw.get("dilation", (1,))), int(kw.get("groups", 1)))


def conv_vjp_input(g, o, x, w, b, **kw):
    args = (np.shape(x), *_conv_kw(kw))
    return bilinear_parts(lambda gg, ww: _grad_input(gg, ww, *args), g, w)


def conv_vjp_weight(g, o, x, w, b, **kw):
    args = (np.shape(w), *_conv_kw(kw))
    return bilinear_parts(lambda gg, xx: _grad_weight(gg, xx, *args), g, x)


def conv_vjp_bias(g, o, x, w, b, **kw):
    axes = (0, *range(2, len(np.shape(g))))
    return on_parts(lambda gg: gg.sum(axis=axes), g)


def _bilinear_bias_jvp(conv):
    """The JVP of conv(x, w) + b, bilinear in (x, w): conv(tx, w) + conv(x, tw) + tb."""
    def jvp(ts, o, x, w, b, **kw):
        tx, tw, tb = ts
        parts = []
        if tx is not None:
            parts.append(conv(tx, w, **kw))
        if tw is not None:
            parts.append(conv(x, tw, **kw))
        if tb is not None:
            parts.append(np.broadcast_to(np.reshape(tb, (-1, *(1,) * (np.ndim(o) - 2))),
                                         np.shape(o)))
        total = parts[0]
        for p in parts[1:]:
            total = total + p
        return total
    return jvp


conv_jvp = _bilinear_bias_jvp(convolve)


# --- transposed convolution: the adjoint of convolve in its input --------------------------

def transposed_shape(x_shape: tuple, w_shape: tuple, stride, padding, output_padding,
                     dilation, groups) -> tuple:
    """The output's shape: (N, w.shape[1] * groups, (in - 1) * s - 2p + d (k - 1) + op + 1)."""
    n = len(w_shape) - 2
    return (x_shape[0], w_shape[1] * groups,
            *((x_shape[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] *
              (w_shape[2 + i] - 1) + output_padding[i] + 1 for i in range(n)))


def _transposed_kw(kw: dict) -> tuple:
    n = len(kw.get("stride", (1,)))
    return (*_conv_kw(kw), _t(kw.get("output_padding", (0,) * n)))


def convolve_transposed(x, w, b=None, *, stride=(1,), padding=(0,), output_padding=(0,),
                        dilation=(1,), groups=1):
    """ATen's transposed convolution of x (N, C, *S) with w (C, O/groups, *k), plus b: the
    gradient a convolution with w sends to its input."""
    x, w = np.asarray(x), np.asarray(w)
    stride, padding, dilation = _t(stride), _t(padding), _t(dilation)
    shape = transposed_shape(x.shape, w.shape, stride, padding, _t(output_padding), dilation,
                             groups)
    y = _grad_input(x, w, shape, stride, padding, dilation, groups)
    if b is not None:
        y = y + np.asarray(b).reshape(-1, *(1,) * (len(shape) - 2))
    return y


def transposed_vjp_input(g, o, x, w, b, **kw):
    stride, padding, dilation, groups, _ = _transposed_kw(kw)
    out = tuple(np.shape(x)[2:])
    return bilinear_parts(lambda gg, ww: convolve(gg, ww, stride=stride, padding=padding,
                                                  dilation=dilation, groups=groups, out=out),
                          g, w)


def transposed_vjp_weight(g, o, x, w, b, **kw):
    stride, padding, dilation, groups, _ = _transposed_kw(kw)
    shape = np.shape(w)
    return bilinear_parts(lambda xx, gg: _grad_weight(xx, gg, shape, stride, padding, dilation,
                                                      groups), x, g)


transposed_jvp = _bilinear_bias_jvp(convolve_transposed)


# --- pooling over the last n dimensions -------------------------------------------------------

def pool_size(size: int, k: int, stride: int, pad: int, dilation: int, ceil: bool) -> int:
    """ATen's pooling_output_shape."""
    span = size + 2 * pad - dilation * (k - 1) - 1 + (stride - 1 if ceil else 0)
    out = span // stride + 1
    if ceil and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def pool_geometry(shape: tuple, kw: dict, n: int) -> tuple:
    k = _t(kw["kernel_size"])
    stride = _t(kw.get("stride") or k)
    pad = _t(kw.get("padding", (0,) * n))
    dilation = _t(kw.get("dilation", (1,) * n))
    ceil = bool(kw.get("ceil_mode", False))
    out = tuple(pool_size(shape[-n + i], k[i], stride[i], pad[i], dilation[i], ceil)
                for i in range(n))
    return k, stride, pad, dilation, out


def pool_pads(shape: tuple, n: int, kw: dict) -> list:
    """(before, after) of each of the last n dims: the padding, and at the end as far as a
    ceil_mode window reaches past it."""
    k, stride, pad, dilation, out = pool_geometry(shape, kw, n)
    widths = []
    for i in range(n):
        need = (out[i] - 1) * stride[i] + dilation[i] * (k[i] - 1) + 1
        widths.append((pad[i], max(0, need - shape[-n + i] - pad[i])))
    return widths


def _pool_windows(x: np.ndarray, n: int, kw: dict, fill) -> tuple:
    """The windows (lead..., *out, *k) over x padded with ``fill`` (see pool_pads)."""
    geometry = pool_geometry(x.shape, kw, n)
    k, stride, _, dilation, out = geometry
    widths = [(0, 0)] * (x.ndim - n) + pool_pads(x.shape, n, kw)
    xp = np.pad(x, widths, constant_values=fill) if any(a or b for a, b in widths) else x
    return _windows(xp, k, out, stride, dilation), geometry


def max_pool_indices(x, n: int, **kw) -> tuple[np.ndarray, np.ndarray]:
    """Values and PyTorch's indices (flat over the input's last n dims) of max pooling: the
    first maximum of each window in its order, a nan winning (the last nan, as ATen's
    ``val > maxval || isnan(val)``)."""
    x = np.asarray(x)
    win, (k, stride, pad, dilation, out) = _pool_windows(x, n, kw, -np.inf)
    flat = win.reshape(*win.shape[:-n], -1)
    pick = np.argmax(flat, axis=-1)
    nan = np.isnan(flat)
    if nan.any():
        last = flat.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
        pick = np.where(nan.any(axis=-1), last, pick)
    values = np.take_along_axis(flat, pick[..., None], -1)[..., 0]
    # the window offset -> the input's coordinates, then flat
    offs = np.unravel_index(pick, k)
    index = np.zeros(pick.shape, np.int64)
    size = x.shape[-n:]
    for i in range(n):
        base = (np.arange(out[i]) * stride[i] - pad[i]).reshape(
            (-1,) + (1,) * (n - 1 - i))
        coord = base + offs[i] * dilation[i]
        index = index * size[i] + coord
    return np.ascontiguousarray(values), index


def _n(kw: dict) -> int:
    return len(_t(kw["kernel_size"]))


def max_pool(x, **kw):
    return max_pool_indices(x, _n(kw), **kw)[0]


def _scatter(g: np.ndarray, index: np.ndarray, shape: tuple, n: int, overlap: bool):
    """g added at index (flat over the last n dims of shape), in the output's order."""
    lead = math.prod(shape[:-n])
    plane = math.prod(shape[-n:])
    grad = np.zeros((lead, plane), g.dtype)
    gi = g.reshape(lead, -1)
    idx = index.reshape(lead, -1)
    rows = np.arange(lead)[:, None]
    if overlap:
        np.add.at(grad, (np.broadcast_to(rows, idx.shape), idx), gi)
    else:
        grad[rows, idx] = gi
    return grad.reshape(shape)


def _overlaps(kw: dict, n: int) -> bool:
    k = _t(kw["kernel_size"])
    stride = _t(kw.get("stride") or k)
    dilation = _t(kw.get("dilation", (1,) * n))
    return any(s < d * (kk - 1) + 1 for s, d, kk in zip(stride, dilation, k))


def max_pool_vjp(g, o, x, **kw):
    n = _n(kw)
    index = max_pool_indices(primal(x), n, **kw)[1]
    shape = np.shape(x)
    return on_parts(lambda gg: _scatter(gg, index, shape, n, _overlaps(kw, n)), g)


def max_pool_jvp(ts, o, x, **kw):
    n = _n(kw)
    index = max_pool_indices(x, n, **kw)[1]
    t = np.asarray(ts[0])
    flat = np.broadcast_to(t, np.shape(x)).reshape(*np.shape(x)[:-n], -1)
    lead = flat.shape[:-1]
    return np.take_along_axis(flat, index.reshape(*lead, -1), -1).reshape(index.shape)


def divisors(shape: tuple, n: int, kw: dict, geometry: tuple) -> np.ndarray:
    """ATen's divide_factor of each output element: divisor_override, else the window's
    size clipped to the padded input (count_include_pad) or to the input itself."""
    k, stride, pad, _, out = geometry
    override = kw.get("divisor_override")
    if override:
        return np.asarray(override)
    include = bool(kw.get("count_include_pad", True))
    total = np.ones((), np.int64)
    for i in range(n):
        size = shape[-n + i]
        start = np.arange(out[i]) * stride[i] - pad[i]
        end = np.minimum(start + k[i], size + pad[i])
        count = end - start
        if not include:
            count = np.minimum(end, size) - np.maximum(start, 0)
        total = total[..., None] * count
    return total


def avg_pool(x, **kw):
    """The sum of each window in ATen's order (row by row), divided by its divide_factor."""
    x, n = np.asarray(x), _n(kw)
    win, geometry = _pool_windows(x, n, kw, 0)
    k = geometry[0]
    total = None
    for offset in np.ndindex(*k):
        part = win[(Ellipsis, *offset)]
        total = part + x.dtype.type(0) if total is None else np.add(total, part, out=total)
    return (total / divisors(x.shape, n, kw, geometry).astype(x.dtype)).astype(x.dtype)


def _avg_back(g: np.ndarray, shape: tuple, n: int, kw: dict) -> np.ndarray:
    k, stride, pad, dilation, out = pool_geometry(shape, kw, n)
    share = g / divisors(shape, n, kw, (k, stride, pad, dilation, out)).astype(g.dtype)
    need = [max(shape[-n + i] + 2 * pad[i], (out[i] - 1) * stride[i] + k[i]) for i in range(n)]
    padded = np.zeros((*shape[:-n], *need), g.dtype)
    # the offsets last to first: each input element then gets its outputs' shares in the
    # outputs' order, as ATen's backward loop adds them
    for offset in reversed(list(np.ndindex(*k))):
        where = tuple(slice(offset[i], offset[i] + stride[i] * (out[i] - 1) + 1, stride[i])
                      for i in range(n))
        padded[(Ellipsis, *where)] += share
    inner = tuple(slice(pad[i], pad[i] + shape[-n + i]) for i in range(n))
    return np.ascontiguousarray(padded[(Ellipsis, *inner)])


def avg_pool_vjp(g, o, x, **kw):
    shape, n = np.shape(x), _n(kw)
    return on_parts(lambda gg: _avg_back(gg, shape, n, kw), g)


def avg_pool_jvp(ts, o, x, **kw):
    return avg_pool(np.broadcast_to(ts[0], np.shape(x)), **kw)
