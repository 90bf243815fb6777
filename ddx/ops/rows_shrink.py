"""The rows of the shrink activations and threshold: F.hardshrink (x outside
[-lambd, lambd], else 0), F.softshrink (x moved lambd towards 0, ``x * 0`` inside: -0 for
negatives, as ATen) and F.threshold
(``value`` where x <= threshold, else x), each with ATen's mask for its gradient (0 inside
the interval, at its ends too)."""

from __future__ import annotations

import numpy as np

from .kernels import at
from .kernels_unary import kept
from .table import op

_F = "torch.nn.functional."


def _outside(a, lambd):
    return (a < -lambd) | (a > lambd)


def hardshrink(a, lambd=0.5):
    return np.where(_outside(a, lambd), a, 0.0)


def softshrink(a, lambd=0.5):
    return np.where(a > lambd, a - lambd, np.where(a < -lambd, a + lambd, a * 0))


def threshold(a, threshold=0.0, value=0.0):
    out = np.where(a <= threshold, value, a)
    if isinstance(a, np.ndarray) and a.dtype != object:  # (value in the input's dtype)
        return out.astype(a.dtype)
    return out


def _ends(a, *rest, lambd=0.5, **params):
    return np.isin(np.asarray(a), (-lambd, lambd))


op("hardshrink", "HardshrinkBackward0", hardshrink,
   lambda g, o, a, lambd=0.5: g * _outside(a, lambd), reads="i", call="unary",
   params={"lambd": 0.5}, kink=(_ends, "at -lambd and lambd it jumps; PyTorch takes the slope 0"),
   domain=(0.6, 1.9), emit={"torch": _F + "hardshrink({0}, {lambd!r})",
                            "jax": "jnp.where(jnp.abs({0}) > {lambd!r}, {0}, 0.0)"},
   example=("hardshrink(x, lambd=0.5)", {}), spaces=("torch", "Tensor", "F"))
op("softshrink", "SoftshrinkBackward0", softshrink,
   lambda g, o, a, lambd=0.5: g * _outside(a, lambd), reads="i", call="unary", method=False,
   params={"lambd": 0.5}, kink=(_ends, "at -lambd and lambd PyTorch takes the slope 0"),
   domain=(0.6, 1.9), emit={"torch": _F + "softshrink({0}, {lambd!r})",
                            "jax": "jnp.sign({0}) * jnp.maximum(jnp.abs({0}) - {lambd!r}, 0.0)"},
   example=("softshrink(x, lambd=0.5)", {}), spaces=("F",))
op("threshold", "ThresholdBackward0", threshold,
   lambda g, o, a, threshold=0.0, value=0.0: kept(g, a > threshold), reads="i",
   call="unary",
   method=False, params={"threshold": 0.0, "value": 0.0},
   kink=(at(0.0), "at the threshold it jumps to value; PyTorch takes the slope 0"),
   domain=(0.6, 1.9), emit={"torch": _F + "threshold({0}, {threshold!r}, {value!r})",
                            "jax": "jnp.where({0} <= {threshold!r}, {value!r}, {0})"},
   example=("threshold(x, 0.5, -1.0)", {}), spaces=("torch", "F"))
