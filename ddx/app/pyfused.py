"""Ops PyTorch runs as one CPU kernel, with that kernel's arithmetic (so the bits are
ATen's): a node of one grad_fn whose forward value and VJPs are numpy code following the
kernel's loops (as a custom autograd.Function's node is made, pycustom.py). Here:
multi_margin_loss and multilabel_margin_loss (ATen's LossMultiMargin.cpp and
LossMultiLabelMargin.cpp: float sums per sample, a double sum over the batch) and glu's
backward (glu_backward_cpu_template: ``(1 - s) * s * a * g`` and ``s * g``)."""

from __future__ import annotations

import numpy as np

from ..graph import dual, record
from ..graph.tensor import Function, Tensor
from ..ops.table import Op


def fused(ev, node, grad_fn: str, value: np.ndarray, inputs: list, vjps: tuple) -> Tensor:
    """A node ``grad_fn`` over ``inputs`` (each with its VJP ``vjp(g)``), holding ``value``."""
    dual.refuse(inputs, grad_fn)
    if not (record.GRAD_MODE.enabled and any(t.requires_grad for t in inputs)):
        return Tensor(value)
    row = Op(f"fused_{grad_fn}", grad_fn, lambda *xs: value,
             tuple((lambda g, o, *xs, _f=f, **kw: _f(np.asarray(g))) for f in vjps),
             elementwise=False)
    result = Tensor(value, True)
    result.op = row.name
    result.inputs = tuple(inputs)
    result.kw = {}
    result.grad_fn = Function(row, row.grad_fn, result.inputs, {}, result)
    result.label = ev.label(node)
    ev.nodes.append(result)
    return result


def _frames(x: np.ndarray) -> np.ndarray:
    return x.reshape(1, -1) if x.ndim < 2 else x


def _outer(per: np.ndarray, reduction: str, nframe: int, dtype) -> np.ndarray:
    """The kernel's double accumulator over the samples (mean: divided by nframe)."""
    total = 0.0
    for v in per:
        total += float(v)
    if reduction == "mean":
        total /= nframe
    return np.asarray(total, dtype=dtype)


def multi_margin(x: np.ndarray, t: np.ndarray, p: int, margin: float, w, reduction: str,
                 scalar_out: bool):
    """multi_margin_loss_cpu_kernel's value, and its backward as a function of g."""
    dt = x.dtype.type
    xs = _frames(x)
    nframe, dim = xs.shape
    m = dt(margin)
    target = xs[np.arange(nframe), t]
    z = ((m - target)[:, None] + xs).astype(x.dtype)  # (margin - input_target + input[d])
    live = (z > 0) & (np.arange(dim)[None, :] != t[:, None])
    h = z if p == 1 else (z * z).astype(x.dtype)
    if w is not None:
        h = (h * w[t][:, None]).astype(x.dtype)
    inner = np.zeros(nframe, dtype=x.dtype)
    for d in range(dim):
        inner = np.where(live[:, d], (inner + h[:, d]).astype(x.dtype), inner)
    inner = (inner / dt(dim)).astype(x.dtype)
    if reduction == "none" and not scalar_out:
        value = inner
    else:
        value = _outer(inner, reduction, nframe, x.dtype)

    def vjp(g: np.ndarray) -> np.ndarray:
        gs = dt(1.0 / (nframe * dim)) if reduction == "mean" else dt(1.0 / dim)
        hh = np.full(z.shape, gs, dtype=x.dtype) if p == 1 else (dt(2) * gs * z).astype(x.dtype)
        if w is not None:
            hh = (hh * w[t][:, None]).astype(x.dtype)
        grad = np.where(live, hh, dt(0)).astype(x.dtype)
        acc = np.zeros(nframe, dtype=x.dtype)
        for d in range(dim):
            acc = np.where(live[:, d], (acc - grad[:, d]).astype(x.dtype), acc)
        grad[np.arange(nframe), t] = acc
        scale = np.asarray(g, dtype=x.dtype)
        grad = (grad * (scale.reshape(-1, 1) if scale.ndim else scale)).astype(x.dtype)
        return grad.reshape(x.shape)

    return value, vjp


def multilabel_margin(x: np.ndarray, y: np.ndarray, reduction: str, scalar_out: bool):
    """multilabel_margin_loss's CPU kernel: for each listed target j and each k not a
    target, ``1 - x[j] + x[k]`` where positive, summed in a double per sample."""
    dt = x.dtype.type
    xs = _frames(x)
    ys = y.reshape(xs.shape)
    nframe, dim = xs.shape
    per = np.zeros(nframe)
    rows = []
    for i in range(nframe):
        listed = []
        for c in ys[i]:
            if c < 0:
                break
            listed.append(int(c))
        is_target = np.zeros(dim, dtype=bool)
        is_target[listed] = True
        total = 0.0
        for j in listed:
            z = (dt(1) - xs[i, j] + xs[i]).astype(x.dtype)
            for k in np.flatnonzero(~is_target & (z > 0)):
                total += float(z[k])
        per[i] = total
        rows.append((listed, is_target))
    if reduction == "none" and not scalar_out:
        value = (per / dim).astype(x.dtype)
    else:
        total = 0.0
        for v in per:
            total += v
        total /= dim
        if reduction == "mean":
            total /= nframe
        value = np.asarray(total, dtype=x.dtype)

    def vjp(g: np.ndarray) -> np.ndarray:
        gs = dt(1.0 / (nframe * dim)) if reduction == "mean" else dt(1.0 / dim)
        grad = np.zeros(xs.shape, dtype=x.dtype)
        for i, (listed, is_target) in enumerate(rows):
            for j in listed:
                z = (dt(1) - xs[i, j] + xs[i]).astype(x.dtype)
                for k in np.flatnonzero(~is_target & (z > 0)):
                    grad[i, j] = dt(grad[i, j] - gs)
                    grad[i, k] = dt(grad[i, k] + gs)
        scale = np.asarray(g, dtype=x.dtype)
        grad = (grad * (scale.reshape(-1, 1) if scale.ndim else scale)).astype(x.dtype)
        return grad.reshape(x.shape)

    return value, vjp


def glu_value(x: np.ndarray, dim: int) -> np.ndarray:
    """glu_kernel's a * (1 / (1 + exp(-b))): per inner loop (the half along dim and the dims
    after it), whole pairs of vectors by Sleef's exp, the rest by the C library's."""
    from ..ops.kernels_softmax import exp_sleef
    from ..ops.libm import function

    a, b = np.split(x, 2, axis=dim)
    dt = x.dtype
    one = dt.type(1)
    n = int(np.prod(b.shape[dim:], dtype=np.int64))
    ar, br = np.ascontiguousarray(a).reshape(-1, n), np.ascontiguousarray(b).reshape(-1, n)
    cut = n - n % (2 * (64 // dt.itemsize))
    out = np.empty_like(br)
    with np.errstate(all="ignore"):
        if cut:
            out[:, :cut] = ar[:, :cut] * (one / (one + exp_sleef(np.ascontiguousarray(
                -br[:, :cut]))))
        if cut < n:
            cexp = function("expf" if dt == np.float32 else "exp", dt == np.float32)
            e = np.array([cexp(float(v)) for v in (-br[:, cut:]).reshape(-1)], dt)
            out[:, cut:] = ar[:, cut:] * (one / (one + e.reshape(br[:, cut:].shape)))
    return out.reshape(b.shape)


def glu_vjp(a: np.ndarray, s: np.ndarray, dim: int):
    """glu_backward_cpu_template: the first half's gradient s * g, the second's
    (1 - s) * s * a * g, evaluated left to right in the input's dtype."""
    def vjp(g: np.ndarray) -> np.ndarray:
        d = a.dtype.type
        g = np.asarray(g, dtype=a.dtype)
        second = ((((d(1) - s).astype(a.dtype) * s).astype(a.dtype) * a).astype(a.dtype) * g)
        return np.concatenate([(s * g).astype(a.dtype), second.astype(a.dtype)], axis=dim)
    return vjp


__all__ = ["fused", "glu_value", "glu_vjp", "multi_margin", "multilabel_margin"]
