"""Kernels of the softmax and loss rows: softmax/log_softmax along a dim, the pointwise losses
(mse, smooth_l1, huber, binary cross-entropy with and without logits) with PyTorch's
``reduction``, nll_loss over class indices, and the norm clamped without a gradient
of cosine_similarity. Rules use numpy functions that dual numbers (engine/hessian.py) run."""

from __future__ import annotations

import numpy as np

from . import kernels_softmax, kernels_softmax_inner
from .kernels_sum import torch_mean, torch_sum
from .kernels_sumloop import cascade_total

LOG_FLOOR = -100.0  # PyTorch's binary_cross_entropy clamps its logs here
EPSILON = float(np.float32(1e-12))  # and its gradient's denominator here (a C++ float)


def _same_float(g, out) -> bool:
    return type(g) is np.ndarray and g.dtype == out.dtype


def _inner(a, dim) -> bool:
    """Whether a float32/float64 array's softmax along ``dim`` (not its last) takes ATen's
    loops over the dims after it (kernels_softmax_inner.py)."""
    return type(a) is np.ndarray and a.dtype.kind == "f" and a.dtype.itemsize in (4, 8) \
        and a.ndim >= 2 and isinstance(dim, int) and dim % a.ndim != a.ndim - 1 and a.size > 0


def _inner_float(g, out, dim) -> bool:
    return _inner(out, dim) and type(g) is np.ndarray and g.dtype == out.dtype


def _axis(a, dim):
    return dim if np.ndim(a) else None


# --- softmax, log_softmax ---------------------------------------------------------------------
def softmax(a, dim=0):
    if kernels_softmax.exact(a, dim):
        return kernels_softmax.softmax(a)
    if _inner(a, dim):
        return kernels_softmax_inner.softmax(a, dim % a.ndim)
    ax = _axis(a, dim)
    m = np.max(a, axis=ax, keepdims=True, initial=-np.inf)  # (initial: empty is fine)
    e = np.exp(a - np.where(np.isfinite(m), m, 0.0))
    return e / np.sum(e, axis=ax, keepdims=True)


def softmax_vjp(g, out, a, dim=0):
    if kernels_softmax.exact(out, dim) and _same_float(g, out):
        return kernels_softmax.softmax_vjp(g, out)
    if _inner_float(g, out, dim):
        return kernels_softmax_inner.softmax_vjp(g, out, dim % out.ndim)
    return out * (g - np.sum(g * out, axis=_axis(a, dim), keepdims=True))


def softmax_jvp(ts, out, a, dim=0):
    t = np.broadcast_to(ts[0], np.shape(a))
    return softmax_vjp(t, out, a, dim)


def log_softmax(a, dim=0):
    if kernels_softmax.exact(a, dim):
        return kernels_softmax.log_softmax(a)
    if _inner(a, dim):
        return kernels_softmax_inner.log_softmax(a, dim % a.ndim)
    ax = _axis(a, dim)
    m = np.max(a, axis=ax, keepdims=True, initial=-np.inf)  # (initial: empty is fine)
    s = a - np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return s - np.log(np.sum(np.exp(s), axis=ax, keepdims=True))


def log_softmax_vjp(g, out, a, dim=0):
    if kernels_softmax.exact(out, dim) and _same_float(g, out):
        return kernels_softmax.log_softmax_vjp(g, out)
    if _inner_float(g, out, dim):  # (a dim with positions after it: ATen's other loop)
        return kernels_softmax_inner.log_softmax_vjp(g, out, dim % out.ndim)
    return g - np.exp(out) * np.sum(g, axis=_axis(a, dim), keepdims=True)


def log_softmax_jvp(ts, out, a, dim=0):
    t = np.broadcast_to(ts[0], np.shape(a))
    return t - np.sum(np.exp(out) * t, axis=_axis(a, dim), keepdims=True)


# --- pointwise losses: the loss per element, its two partials, and the reduction -----------------
def reduce_loss(r, reduction: str):
    if reduction == "mean":  # (ATen's apply_loss_reduction: the loss tensor's mean or sum)
        return torch_mean(r)
    if reduction == "sum":
        return torch_sum(r)
    return r


def _back(g, shape, reduction: str):
    """The upstream gradient over the elements: the mean's share, the sum's, or as it is."""
    if reduction == "mean":
        return np.broadcast_to(g / int(np.prod(shape)), shape)
    if reduction == "sum":
        return np.broadcast_to(g, shape)
    return g


def pointwise(loss, d_input, d_target, *d_rest):
    """(forward, VJP for input, VJP for target, JVP, the VJPs of the extra inputs) of a loss
    made element by element; ``d_rest`` the partials for the extra inputs (weights)."""
    def fn(a, b, *rest, reduction="mean", **kw):
        return reduce_loss(loss(a, b, *rest, **kw), reduction)

    def rule(partial):
        def vjp(g, out, a, b, *rest, reduction="mean", **kw):
            d = partial(a, b, *rest, **kw)
            return _back(g, np.shape(d), reduction) * d
        return vjp

    def jvp(ts, out, a, b, *rest, reduction="mean", **kw):
        total = None
        for t, partial in zip(ts, (d_input, d_target, *d_rest)):
            if t is not None:
                part = partial(a, b, *rest, **kw) * t
                total = part if total is None else total + part
        shape = np.broadcast_shapes(np.shape(a), np.shape(b), *[np.shape(r) for r in rest])
        return reduce_loss(np.broadcast_to(0.0 if total is None else total, shape), reduction)

    return fn, rule(d_input), rule(d_target), jvp, tuple(rule(d) for d in d_rest)


def _sq(a, b):
    d = a - b
    return d * d


MSE = pointwise(_sq, lambda a, b: 2 * (a - b), lambda a, b: -2 * (a - b))


def _smooth(a, b, beta=1.0):
    d = a - b
    m = np.abs(d)
    return np.where(m < beta, 0.5 * d * d / beta, m - 0.5 * beta)


def _smooth_d(a, b, beta=1.0):
    d = a - b
    return np.where(d < -beta, -1.0, np.where(d > beta, 1.0, d / beta))


SMOOTH_L1 = pointwise(_smooth, _smooth_d, lambda a, b, beta=1.0: -_smooth_d(a, b, beta))


def _huber(a, b, delta=1.0):
    d = a - b
    m = np.abs(d)
    return np.where(m < delta, 0.5 * d * d, delta * (m - 0.5 * delta))


def _huber_d(a, b, delta=1.0):
    d = a - b
    return np.where(d < -delta, -delta, np.where(d > delta, delta, d))


HUBER = pointwise(_huber, _huber_d, lambda a, b, delta=1.0: -_huber_d(a, b, delta))


# binary cross-entropy on probabilities (weight: an optional third input)
def _w(rest):
    return rest[0] if rest else 1.0


def _bce(x, t, *rest):
    with np.errstate(divide="ignore"):
        lx = np.maximum(np.log(x), LOG_FLOOR)
        l1x = np.maximum(np.log(1 - x), LOG_FLOOR)
    return -_w(rest) * (t * lx + (1 - t) * l1x)


def _bce_dx(x, t, *rest):
    return _w(rest) * (x - t) / np.maximum((1 - x) * x, EPSILON)


def _bce_dt(x, t, *rest):
    # PyTorch's binary_cross_entropy_target_backward: -logit(x), not clamped (inf at 0 and 1)
    with np.errstate(divide="ignore"):
        return _w(rest) * -np.log(x / (1 - x))


def _bce_dw(x, t, w):  # (PyTorch never lets a weight require grad: the loss is linear in it)
    return _bce(x, t)


BCE = pointwise(_bce, _bce_dx, _bce_dt, _bce_dw)


# --- nll_loss: class indices (the class dim is 1, or 0 for one sample) --------------------------
def _picked(t, ignore_index, class_dim):
    t = np.rint(np.asarray(t)).astype(np.int64)
    keep = t != ignore_index
    idx = np.expand_dims(np.where(keep, t, 0), class_dim)
    return idx, keep


def _weights(w, idx, keep, class_dim, dtype):
    wi = np.ones(keep.shape, dtype=dtype) if w is None else np.take(w, np.squeeze(idx, class_dim))
    return np.where(keep, wi, 0.0)


def _kept_weights(x, t, w, ignore_index, cd) -> tuple:
    """(flat indexes of the kept targets, their class weights or None)."""
    idx, keep = _picked(t, ignore_index, cd)
    flat_keep = keep.reshape(-1)
    wv = None if w is None else \
        np.take(w, np.squeeze(idx, cd)).reshape(-1)[flat_keep].astype(x.dtype)
    return idx, flat_keep, np.flatnonzero(flat_keep), wv


def _nll_totals(x, t, w, ignore_index, cd):
    """(the loss's sum, the total weight) as ATen's forward adds them."""
    idx, flat_keep, index, wv = _kept_weights(x, t, w, ignore_index, cd)
    data = np.squeeze(np.take_along_axis(x, idx, axis=cd), cd).reshape(-1)[flat_keep]
    if wv is None:
        return -cascade_total(data, index), x.dtype.type(index.size)
    return -cascade_total((data * wv).astype(x.dtype), index), cascade_total(wv, index)


def nll(x, t, *rest, ignore_index=-100, reduction="mean"):
    cd = 1 if np.ndim(x) > 1 else 0
    idx, keep = _picked(t, ignore_index, cd)
    w = rest[0] if rest else None
    wi = _weights(w, idx, keep, cd, x.dtype)
    per = -wi * np.squeeze(np.take_along_axis(x, idx, axis=cd), cd)
    if reduction == "none":
        return per
    if type(x) is not np.ndarray or x.dtype.kind != "f":  # (dual numbers, formulas)
        total = np.sum(per)
        if reduction == "sum":
            return total
        with np.errstate(invalid="ignore", divide="ignore"):
            return total / np.sum(wi)
    total, weight = _nll_totals(x, t, None if w is None else np.asarray(w), ignore_index, cd)
    if reduction == "sum":
        return np.asarray(total, x.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(x.dtype.type(total / weight), x.dtype)


def _total_weight(x, t, w, ignore_index, cd, wi):
    if type(x) is np.ndarray and x.dtype.kind == "f":  # (the forward's total, not the loss)
        _, _, index, wv = _kept_weights(x, t, None if w is None else np.asarray(w),
                                        ignore_index, cd)
        return x.dtype.type(index.size) if wv is None else cascade_total(wv, index)
    return np.sum(wi)


def nll_vjp(g, out, x, t, *rest, ignore_index=-100, reduction="mean"):
    cd = 1 if np.ndim(x) > 1 else 0
    idx, keep = _picked(t, ignore_index, cd)
    wi = _weights(rest[0] if rest else None, idx, keep, cd, x.dtype)
    if reduction == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):
            g = g / _total_weight(x, t, rest[0] if rest else None, ignore_index, cd, wi)
    share = np.broadcast_to(g, keep.shape) * -wi
    grad = np.zeros_like(x, shape=np.shape(x))
    np.put_along_axis(grad, idx, np.expand_dims(share, cd), axis=cd)
    return grad


def nll_weight_vjp(g, out, x, t, w, ignore_index=-100, reduction="mean"):
    """A class weight's rule (PyTorch never lets it require grad)."""
    cd = 1 if np.ndim(x) > 1 else 0
    idx, keep = _picked(t, ignore_index, cd)
    wi = _weights(w, idx, keep, cd, x.dtype)
    picked = np.squeeze(np.take_along_axis(x, idx, axis=cd), cd)
    gg = np.broadcast_to(g, keep.shape)
    if reduction == "mean":
        total = np.sum(wi)
        with np.errstate(invalid="ignore", divide="ignore"):
            contrib = gg * (-picked - nll(x, t, w, ignore_index=ignore_index)) / total
    else:
        contrib = -gg * picked
    grad = np.zeros(np.shape(w))
    np.add.at(grad, np.squeeze(idx, cd)[keep], np.asarray(contrib)[keep])
    return grad


def nll_jvp(ts, out, x, t, *rest, ignore_index=-100, reduction="mean"):
    """Linear in x (the mean's denominator is the weights'); a weight's tangent moves both
    the sum and the denominator."""
    kw = {"ignore_index": ignore_index, "reduction": reduction}
    total = np.zeros(np.shape(out))
    if ts[0] is not None:
        total = total + nll(np.broadcast_to(ts[0], np.shape(x)), t, *rest, **kw)
    if len(ts) > 2 and ts[2] is not None:
        cd = 1 if np.ndim(x) > 1 else 0
        idx, keep = _picked(t, ignore_index, cd)
        tw = _weights(ts[2], idx, keep, cd, x.dtype)
        d = -tw * np.squeeze(np.take_along_axis(x, idx, axis=cd), cd)
        if reduction == "none":
            total = total + d
        elif reduction == "sum":
            total = total + np.sum(d)
        else:
            wi = _weights(rest[0], idx, keep, cd, x.dtype)
            with np.errstate(invalid="ignore", divide="ignore"):
                total = total + (np.sum(d) - out * np.sum(tw)) / np.sum(wi)
    return total


def no_grad(k: int):
    """The rule of input k that never requires grad (class indices, weights): never run."""
    return lambda g, out, *inputs, **kw: np.zeros(np.shape(inputs[k]))


# --- cosine_similarity's norm clamped under no_grad (xlogy: kernels_cpu.py) --------------------
def clamped(a, *, eps):
    return np.maximum(a, eps)


# --- emitted code ---------------------------------------------------------------------------------
F = "torch.nn.functional."


def emit_softmax(name: str, jax_name: str):
    def emit(args, t, lib):
        dim = t.kw.get("dim", 0)
        if lib == "torch":
            return f"torch.{name}({args[0]}, dim={dim})"
        return f"jax.nn.{jax_name}({args[0]}, axis={dim if t.value.ndim else None})"
    return emit


def _jax_reduce(expr: str, reduction: str) -> str:
    return {"mean": f"jnp.mean({expr})", "sum": f"jnp.sum({expr})"}.get(reduction, expr)


def emit_pointwise(name: str, jax_form: str, params: tuple = (), extra: tuple = ()):
    """F.name(x, y, [extra tensors by keyword], params..., reduction=...); JAX: the formula."""
    def emit(args, t, lib):
        reduction = t.kw.get("reduction", "mean")
        if lib == "torch":
            more = "".join(f", {k}={v}" for k, v in zip(extra, args[2:]))
            opts = "".join(f", {k}={t.kw[k]!r}" for k in params if k in t.kw)
            return f"{F}{name}({args[0]}, {args[1]}{more}{opts}, reduction={reduction!r})"
        fields = {k: repr(t.kw[k]) for k in params if k in t.kw}
        fields.update(zip(extra, args[2:]))
        return _jax_reduce(jax_form.format(*args[:2], **fields), reduction)
    return emit


def emit_nll(args, t, lib):
    reduction = t.kw.get("reduction", "mean")
    ignore = t.kw.get("ignore_index", -100)
    x, tg = args[0], args[1]
    if lib == "torch":
        w = f", weight={args[2]}" if len(args) > 2 else ""
        return (f"{F}nll_loss({x}, {tg}.long(){w}, ignore_index={ignore}, "
                f"reduction={reduction!r})")
    cd = 1 if t.inputs[0].value.ndim > 1 else 0
    ti = f"{tg}.astype(jnp.int32)"
    keep = f"({ti} != {ignore})"
    safe = f"jnp.where({keep}, {ti}, 0)"
    wi = (f"jnp.where({keep}, {args[2]}[{safe}], 0.0)" if len(args) > 2
          else f"{keep}.astype({x}.dtype)")
    picked = f"jnp.squeeze(jnp.take_along_axis({x}, jnp.expand_dims({safe}, {cd}), {cd}), {cd})"
    per = f"(-{wi} * {picked})"
    if reduction == "none":
        return per
    if reduction == "sum":
        return f"jnp.sum({per})"
    return f"(jnp.sum({per}) / jnp.sum({wi}))"


def emit_clamped(args, t, lib):
    eps = t.kw["eps"]
    if lib == "torch":  # (a clone whose value is clamped under no_grad, as PyTorch does)
        return f"(lambda c: (c.data.clamp_min_({eps!r}), c)[1])({args[0]}.clone())"
    return f"({args[0]} + jax.lax.stop_gradient(jnp.maximum({args[0]}, {eps!r}) - {args[0]}))"
