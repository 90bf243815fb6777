"""The row of torch.round(x, decimals=d) (RoundBackward1): ATen's round_decimals_kernel, in
the input's precision: nearbyint(x * 10^d) / 10^d, or nearbyint(x / 10^-d) * 10^-d for a
negative d, 10^|d| made in double and rounded to the input's dtype once. Slope 0."""

from __future__ import annotations

import numpy as np

from .table import op


def round_decimals(a, decimals=0):
    d = int(decimals)
    ten = 10.0 ** abs(d)
    if isinstance(a, np.ndarray) and a.dtype.kind == "f":
        ten = a.dtype.type(ten)
    out = np.rint(a / ten) * ten if d < 0 else np.rint(a * ten) / ten
    if isinstance(a, np.ndarray) and a.dtype.kind == "f":
        return np.asarray(out).astype(a.dtype, copy=False)
    return out


op("round_decimals", "RoundBackward1", round_decimals, lambda g, o, a, decimals=0: g * 0,
   saves=False, reads="", call="unary", method=False, params={"decimals": 0}, spaces=(),
   shown="round", domain=(0.11, 0.14),
   emit={"torch": "torch.round({0}, decimals=int({decimals!r}))",
         "jax": "jnp.round({0}, int({decimals!r}))"},
   example=("round_decimals(x, decimals=1)", {}))
