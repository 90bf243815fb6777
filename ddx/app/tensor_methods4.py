"""Tensor.unfold(dimension, size, step) and torch.quantile / Tensor.quantile (and the names of
torch.multinomial / Tensor.multinomial, ddx/graph/create_random2.py), as PyTorch computes
them: unfold's windows (one UnfoldBackward0 node whose gradient adds the windows back in their
order, as unfold_backward's kernel does), quantile's sort and ATen's lerp between the two
nearest ranks (linear; lower, higher, nearest, midpoint), its gradient scattered back through
the sort (one node, named as PyTorch's last, SqueezeBackward4)."""

from __future__ import annotations

import numpy as np

from ..errors import DdxRuntimeError
from ..graph.tensor import Tensor
from .methods import check_kw
from .pyfused import fused
from .pyvalues import number_of


def _int(v, what: str) -> int:
    n = number_of(v)
    if isinstance(n, bool) or not isinstance(n, int):
        raise DdxRuntimeError(f"unfold(): argument '{what}' must be int")
    return n


def m_unfold(ev, node, t, args, kw):
    names = ("dimension", "size", "step")
    given = dict(zip(names, args))
    given.update({k: v for k, (v, _) in kw.items()})
    check_kw(node, kw, names)
    x = t.value
    nd = max(x.ndim, 1)
    dim = _int(given.get("dimension"), "dimension")
    if not -nd <= dim < nd:
        raise DdxRuntimeError(f"Dimension out of range (expected to be in range of [{-nd}, "
                              f"{nd - 1}], but got {dim})")
    dim %= nd
    size, step = _int(given.get("size"), "size"), _int(given.get("step"), "step")
    length = x.shape[dim] if x.ndim else 1
    if size > length:
        raise DdxRuntimeError(f"maximum size for tensor at dimension {dim} is {length} but "
                              f"size is {size}")
    if step <= 0:
        raise DdxRuntimeError(f"step is {step} but must be > 0")
    count = (length - size) // step + 1
    base = x.reshape(1) if x.ndim == 0 else x
    windows = [np.moveaxis(np.take(base, np.arange(i * step, i * step + size), axis=dim), dim,
                           -1) for i in range(count)]
    value = np.stack(windows, axis=dim)
    if x.ndim == 0:
        value = value.reshape(count, size)

    def vjp(g: np.ndarray) -> np.ndarray:
        g = np.broadcast_to(g, value.shape)
        grad = np.zeros(base.shape, x.dtype)
        for i in range(count):  # (window after window, as unfold_backward adds them)
            piece = np.moveaxis(np.take(g, i, axis=dim), -1, dim)
            index = [slice(None)] * base.ndim
            index[dim] = slice(i * step, i * step + size)
            grad[tuple(index)] += piece
        return grad.reshape(x.shape)

    return fused(ev, node, "UnfoldBackward0", np.ascontiguousarray(value), [t], (vjp,))


_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _lerp(lo, hi, w):
    """ATen's lerp: lo + w * (hi - lo) where |w| < 0.5, else hi - (hi - lo) * (1 - w)."""
    dt = lo.dtype.type
    w = np.asarray(w, lo.dtype)
    diff = (hi - lo).astype(lo.dtype)
    return np.where(np.abs(w) < dt(0.5), (lo + w * diff).astype(lo.dtype),
                    (hi - (diff * (dt(1) - w)).astype(lo.dtype)).astype(lo.dtype))


def quantile(ev, node, t, args, kw):
    names = ("q", "dim", "keepdim", "interpolation")
    given = dict(zip(names, args))
    given.update({k: v for k, (v, _) in kw.items()})
    check_kw(node, kw, names + ("out",))
    x = t.value
    if x.dtype.kind != "f":
        raise DdxRuntimeError("quantile() input tensor must be either float or double dtype")
    q = given.get("q")
    scalar_q = not (isinstance(q, Tensor) and not q.weak and q.value.ndim > 0)
    qs = np.atleast_1d(np.asarray(q.value if isinstance(q, Tensor) else q, np.float64))
    if ((qs < 0) | (qs > 1)).any():
        raise DdxRuntimeError("quantile() q values must be in the range [0, 1]")
    mode = given.get("interpolation", "linear")
    if mode not in _MODES:
        raise DdxRuntimeError("quantile() interpolation must be one of linear, lower, higher, "
                              f"midpoint or nearest. Got {mode}")
    dim = given.get("dim")
    keepdim = bool(number_of(given.get("keepdim", False)))
    d = None if dim is None else number_of(dim) % max(x.ndim, 1)
    moved = x.reshape(1, -1) if d is None else np.moveaxis(x, d, -1)
    order = np.argsort(moved, axis=-1, kind="stable")
    data = np.take_along_axis(moved, order, axis=-1)
    n = data.shape[-1]
    ranks = (qs.astype(x.dtype) * x.dtype.type(n - 1)).astype(x.dtype)
    below = np.floor(ranks).astype(np.int64)
    if mode in ("lower", "higher", "nearest"):
        pick = below if mode == "lower" else np.ceil(ranks).astype(np.int64) \
            if mode == "higher" else np.round(ranks).astype(np.int64)
        lo_i = hi_i = pick
        w = np.zeros(ranks.shape, x.dtype)
    else:
        lo_i, hi_i = below, np.minimum(below + 1, n - 1)
        w = (ranks - below.astype(x.dtype)).astype(x.dtype) if mode == "linear" else \
            np.full(ranks.shape, 0.5, x.dtype)
    lo, hi = np.take(data, lo_i, axis=-1), np.take(data, hi_i, axis=-1)
    out = lo if mode in ("lower", "higher", "nearest") else \
        _lerp(lo, hi, np.broadcast_to(w, lo.shape))
    out = np.where(np.isnan(data).any(axis=-1)[..., None], np.nan, out).astype(x.dtype)

    def arrange(v: np.ndarray) -> np.ndarray:
        """(rows..., q) -> PyTorch's layout: q first, the reduced dim kept or not."""
        v = np.moveaxis(v, -1, 0)
        if d is None:
            v = v.reshape(qs.shape[0], *((1,) * x.ndim if keepdim else ()))
        elif keepdim:
            v = np.expand_dims(v, 1 + d)
        return v[0] if scalar_q else v

    def vjp(g: np.ndarray) -> np.ndarray:
        g = np.broadcast_to(g, arrange(out).shape)
        gg = np.asarray(g if not scalar_q else g[None], x.dtype)
        if d is None:
            gg = gg.reshape(qs.shape[0], 1)
        elif keepdim:
            gg = np.squeeze(gg, 1 + d)
        gg = np.moveaxis(gg, 0, -1)  # (rows..., q)
        grad = np.zeros(moved.shape, x.dtype)
        one = x.dtype.type(1)
        for k in range(qs.shape[0]):
            parts = [(lo_i[k], (gg[..., k] * (one - w[k])).astype(x.dtype))]
            if mode not in ("lower", "higher", "nearest"):
                parts.append((hi_i[k], (gg[..., k] * w[k]).astype(x.dtype)))
            else:
                parts = [(lo_i[k], gg[..., k])]
            for rank, share in parts:
                src = np.take(order, rank, axis=-1)[..., None]
                cur = np.take_along_axis(grad, src, axis=-1)
                np.put_along_axis(grad, src, cur + share[..., None], axis=-1)
        return (grad.reshape(x.shape) if d is None else np.moveaxis(grad, -1, d))

    # (PyTorch's quantile ends with a squeeze of its sorted dim: SqueezeBackward4)
    return fused(ev, node, "SqueezeBackward4", np.array(arrange(out), x.dtype), [t], (vjp,))


def fn_quantile(ev, node, args, kw):
    return quantile(ev, node, args[0], list(args[1:]), kw)


def register() -> None:
    from ..graph.create_random2 import fn_multinomial, m_multinomial
    from .methods import TENSOR_METHODS
    from .pymodules import EXTRA, Native

    TENSOR_METHODS.setdefault("unfold", m_unfold)
    TENSOR_METHODS.setdefault("quantile", quantile)
    TENSOR_METHODS.setdefault("multinomial", m_multinomial)
    EXTRA["torch"].setdefault("quantile", Native("quantile", fn_quantile))
    EXTRA["torch"].setdefault("multinomial", Native("multinomial", fn_multinomial))


register()
