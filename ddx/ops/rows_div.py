"""torch.div(a, b, rounding_mode=...): PyTorch's DivBackward2, one row whatever the mode.
``'trunc'`` rounds a / b toward zero, ``'floor'`` down as Python's // does (numpy's
floor_divide: from the remainder, 1 // 0.1 is 9, a zero signed as a / b); both have slope 0
(PyTorch's derivative is zeros). None, given explicitly, is a true division with div's
slopes. Integers stay integers under 'trunc' and 'floor' (C's truncating division; Python's
floor division)."""

from __future__ import annotations

import numpy as np

from .table import op


def divided(a, b, *, rounding_mode=None):
    if rounding_mode is None:
        return a / b
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "iub" and b.dtype.kind in "iub":
        q = np.floor_divide(a, b)
        if rounding_mode == "trunc":
            q = q + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0)))
        return q
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.trunc(a / b) if rounding_mode == "trunc" else np.floor_divide(a, b)


def _slope_a(g, o, a, b, *, rounding_mode=None):
    return g / b if rounding_mode is None else g * 0


def _slope_b(g, o, a, b, *, rounding_mode=None):
    return -g * ((a / b) / b) if rounding_mode is None else g * 0


def _at_jump(a, b, *, rounding_mode=None):
    if rounding_mode is None:
        return np.zeros(np.broadcast_shapes(np.shape(a), np.shape(b)), dtype=bool)
    with np.errstate(all="ignore"):
        r = np.asarray(a) / np.asarray(b)
    return r == np.floor(r)


def _jax(args, t, lib) -> str:
    mode = t.kw.get("rounding_mode")
    a, b = args
    if mode is None:
        return f"({a} / {b})"
    return f"jnp.trunc({a} / {b})" if mode == "trunc" else f"jnp.floor_divide({a}, {b})"


op("div_rounding", "DivBackward2", divided, _slope_a, _slope_b, reads="i", elementwise=False,
   emit={"torch": "torch.div({0}, {1}, rounding_mode={rounding_mode!r})", "jax": _jax},
   hint="a division by zero: add an epsilon to the denominator",
   kink=(_at_jump, "trunc and floor jump where a / b is an integer (slope 0 elsewhere)"),
   domain=(0.5, 2.0),
   example=("div(x, y, rounding_mode='trunc')", {}))
