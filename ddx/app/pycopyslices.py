"""``y[key] = value`` recorded for autograd, as PyTorch records it: on a tensor that is not a
leaf requiring grad, with grad mode on and the tensor or the value requiring grad, the
assignment is a node of the graph, CopySlices for a key of ints and slices and
IndexPutBackward0 for a key with tensors or lists (masks, index lists). The tensor's names
then hold the new node (as in-place methods do, pyinplace.rebind); its gradient is the
incoming one with the written elements zeroed, the value's is the incoming one at them
(summed down to the value's shape by the engine)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..graph import record
from ..graph.tensor import Tensor
from ..ops import Op
from .pyinplace import rebind


def _forward(base, src, key=None):
    out = np.array(base, copy=True)
    out[key] = src
    return out


def _vjp_base(g, out, base, src, key=None):
    grad = np.array(g, copy=True)
    grad[key] = 0
    return grad


def _vjp_src(g, out, base, src, key=None):
    return np.asarray(g)[key]


def node_name(key: tuple) -> str:
    """PyTorch's node for a key: IndexPutBackward0 with a tensor or list in it, else
    CopySlices."""
    return "IndexPutBackward0" if any(isinstance(k, np.ndarray) for k in key) else "CopySlices"


def record_item(ev, target, t: Tensor, key: tuple, value: Any, src: np.ndarray) -> Tensor:
    """``t[key] = value`` as a recorded node; ``src`` is the value's array. Numpy's
    IndexError/ValueError (a key out of range, shapes that do not broadcast) propagate to
    the caller, which words them as PyTorch does."""
    name = node_name(key)
    op = Op("setitem", name, _forward, (_vjp_base, _vjp_src), saves=False, elementwise=False,
            reads="")
    op.dtype = t.value.dtype.name
    op.shown = op.symbol = "setitem"
    if isinstance(value, Tensor) and not value.weak:
        source = value
    else:
        source = Tensor(np.asarray(src, dtype=t.value.dtype))
        source.const = True
    _forward(t.value, source.value, key)  # (the numpy errors before anything is recorded)
    result = record.apply(op, [t, source], {"key": key}, span=(target.start, target.end))
    result.label = t.label
    return rebind(ev, "__setitem__", t, result)


__all__ = ["node_name", "record_item"]
