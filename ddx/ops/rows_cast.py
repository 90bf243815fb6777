"""The row of a widening dtype conversion of a tensor autograd tracks: x.double() and
x.to(torch.float64) of a float32 tensor record ToCopyBackward0, whose gradient is the incoming
one converted back to the input's dtype (PyTorch's _to_copy). (Narrowing to float32 has no
row: the table's finite differences in float64 cannot check a function that rounds.)"""

from __future__ import annotations

import numpy as np

from .table import op


def _back(g, o, a):
    if isinstance(g, np.ndarray) and g.dtype.kind == "f" and isinstance(a, np.ndarray) and \
            a.dtype.kind == "f":
        return g.astype(a.dtype)
    return g


def _to(dtype: str):
    def fn(a):
        if isinstance(a, np.ndarray) and a.dtype.kind in "biuf":
            return a.astype(dtype)
        return a
    return fn


op("to_float64", "ToCopyBackward0", _to("float64"), _back, reads="i", call="unary",
   method=False, dtype="float64", spaces=(), shown="to",
   emit={"torch": "{0}.to(torch.float64, copy=True)", "jax": "{0}.astype(jnp.float64)"})
