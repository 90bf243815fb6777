"""torch.div / x.div / torch.divide with ``rounding_mode``: the div_rounding row
(DivBackward2, ops/rows_div.py); without it, div's own binary call."""

from __future__ import annotations

import numpy as np

from ..errors import DdxRuntimeError
from ..lang.tree import Ast
from ..ops import OPS
from .args import Evaluating, as_tensor, bind, called_in_torch, check_arity, numbers_in_torch
from .tensor import Tensor
from .values import weak

MODES = (None, "trunc", "floor")


def _plain(v):
    return None if v is None else str(v) if isinstance(v, str) else v


def _true_div(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    """div without rounding_mode: a binary row's call (functions._binary_fn's)."""
    check_arity(node, args, 2, kw)
    a, b = (as_tensor(ev, node, x) for x in args)
    if a.weak and b.weak:
        if called_in_torch(node):  # torch.div(1, 2): tensor(0.5000)
            return numbers_in_torch(ev, OPS["div"].fn, a, b)
        return weak(float(OPS["div"].fn(a.value, b.value)))
    ev.check_broadcast(Ast("bin", "div", (), (), start=node.start, end=node.end, pos=node.pos),
                       a, b)
    return ev.op("div", node, [a, b])


def div(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    if "rounding_mode" not in kw:
        return _true_div(ev, node, args, kw)
    given = bind(node, args, kw, ("input", "other", "rounding_mode"), 2)
    mode = _plain(given["rounding_mode"])
    if mode not in MODES:
        raise DdxRuntimeError("div expected rounding_mode to be one of None, 'trunc', or "
                              f"'floor' but found '{mode}'", start=node.pos, end=node.end)
    a, b = as_tensor(ev, node, given["input"]), as_tensor(ev, node, given["other"])
    if a.weak and b.weak:  # torch.div(7, 2, rounding_mode='floor'): a 0-d tensor
        kind = "i" if a.value.dtype.kind in "iub" and b.value.dtype.kind in "iub" else "f"
        dtype = np.int64 if kind == "i" and mode is not None else ev.dtype
        a, b = (Tensor(np.asarray(t.value, dtype=dtype)) for t in (a, b))
    fake = Ast("bin", "div", (), (), start=node.start, end=node.end, pos=node.pos)
    ev.check_broadcast(fake, a, b)
    return ev.op("div_rounding", node, [a, b], {"rounding_mode": mode})


CALLERS = {"div": div}
