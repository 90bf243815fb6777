"""Binary cross-entropy on logits (the rows of binary_cross_entropy_with_logits with and without
weight and pos_weight): the loss and its partials as ATen writes them for float arrays, the
plain formulas for dual numbers and formulas (engine/hessian.py, engine/symbolic.py)."""

from __future__ import annotations

import numpy as np

from .kernels_loss import pointwise
from .kernels_pow import exact_float


# binary cross-entropy on logits; extra inputs: weight and/or pos_weight, as the row says
def _softplus_neg(x):
    """log(1 + exp(-x)), stably: max(-x, 0) + log1p(exp(-|x|))."""
    return np.maximum(-x, 0) + np.log1p(np.exp(-np.abs(x)))


def _sig(x):
    return 1 / (1 + np.exp(-x))


def bce_logits(weighted: bool, positive: bool):
    def split(rest):
        w = rest[0] if weighted else 1.0
        pw = rest[-1] if positive else None
        return w, pw

    def loss(x, t, *rest):
        """binary_cross_entropy_with_logits: (1 - t) * x - log_sigmoid(x) (times
        (pw - 1) * t + 1 first), times weight."""
        w, pw = split(rest)
        if not exact_float(x):
            scale = 1.0 if pw is None else 1 + (pw - 1) * t
            return w * ((1 - t) * x + scale * _softplus_neg(x))
        from .kernels_act import logsigmoid

        ls = logsigmoid(x)
        if pw is not None:
            ls = ls * ((pw - 1) * t + 1)
        r = (1 - t) * x - ls
        return r * w if weighted else r

    def dx(x, t, *rest):
        w, pw = split(rest)
        if pw is None:
            return w * (_sig(x) - t)
        return w * ((1 + (pw - 1) * t) * _sig(x) - pw * t)

    def dt(x, t, *rest):
        w, pw = split(rest)
        if pw is None:
            return -w * x
        return w * ((pw - 1) * _softplus_neg(x) - x)

    def dpw(x, t, *rest):  # d loss / d pos_weight
        w, _ = split(rest)
        return w * t * _softplus_neg(x)

    def dw(x, t, *rest):  # d loss / d weight
        _, pw = split(rest)
        scale = 1.0 if pw is None else 1 + (pw - 1) * t
        return (1 - t) * x + scale * _softplus_neg(x)

    rows = pointwise(loss, dx, dt, *((dw,) if weighted else ()), *((dpw,) if positive else ()))

    def input_vjp(g, out, x, t, *rest, reduction="mean"):
        """binary_cross_entropy_with_logits_backward, in its order: (sigmoid(x) - t) * grad
        (with pos_weight: ((pw*t + 1 - t) * sigmoid(x) - pw*t) * grad), times weight, then
        divided by the count for the mean."""
        w, pw = split(rest)
        if not exact_float(x):  # (dual numbers, formulas: the rule as a product)
            return rows[1](g, out, x, t, *rest, reduction=reduction)
        shape = np.broadcast_shapes(np.shape(x), np.shape(t), *[np.shape(r) for r in rest])
        sig = _exact_sigmoid(x)
        if pw is None:
            gi = (sig - t) * np.broadcast_to(g, shape)
        else:
            tt = pw * t
            gi = ((tt + 1) - t) * sig - tt
            gi = gi * np.broadcast_to(g, shape)
        if weighted:
            gi = gi * w
        return gi / int(np.prod(shape)) if reduction == "mean" else gi

    return (rows[0], input_vjp, *rows[2:])


def _exact_sigmoid(x):
    from .kernels_act import sigmoid

    return sigmoid(x)
