"""The op table's layer rows: addmm (bias + a @ b, what F.linear and nn.Linear record for a
2-D input with a bias: AddmmBackward0)."""

from __future__ import annotations

import numpy as np

from . import kernels_gemm as gemm
from .table import op


def _addmm_bias_vjp(g, o, bias, a, b, **kw):
    return g  # (the engine sums a broadcast bias back to its shape)


def _addmm_jvp(ts, o, bias, a, b, **kw):
    parts = [t for t in (ts[0],
                         None if ts[1] is None else np.matmul(ts[1], b),
                         None if ts[2] is None else np.matmul(a, ts[2])) if t is not None]
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return np.broadcast_to(total, np.shape(o)) if np.shape(total) != np.shape(o) else total


op("addmm", "AddmmBackward0", gemm.addmm, _addmm_bias_vjp,
   lambda g, o, bias, a, b: gemm.or_else(gemm.mm_grad_a(g, b, a), g, np.transpose(b)),
   lambda g, o, bias, a, b: gemm.or_else(gemm.mm_grad_b(g, a, b), np.transpose(a), g),
   jvp=_addmm_jvp, elementwise=False,
   reads="i", call="addmm", shown="addmm", symbol="addmm",
   emit={"torch": "torch.addmm({0}, {1}, {2})", "jax": "({0} + {1} @ {2})"},
   example=("addmm(x, y, t(y))", {"x": (2,), "y": (2, 3)}))
