"""torch.functional's helpers written, as PyTorch writes them, with other ops:
broadcast_tensors (an ExpandBackward0 per tensor whose shape grows; the others returned as
they are), atleast_1d/2d/3d (a 0-d tensor reshaped, ViewBackward0; a 1-d or 2-d one
unsqueezed, UnsqueezeBackward0; a tensor with dimensions enough returned itself) and meshgrid
(each input viewed along its axis, then expanded; ``indexing='xy'`` swaps the first two
inputs, and then their grids)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError
from ..lang.tree import Ast
from .args import Evaluating, as_tensor, check_keywords
from .tensor import Tensor


def _tensors(ev: Evaluating, node: Ast, args: list, what: str) -> tuple[list, bool]:
    """The tensors given one by one or as one list/tuple, and whether it was a sequence."""
    items = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
    for t in items:
        if not isinstance(t, Tensor) or t.weak:
            raise DdxTypeError(f"{what}(): expected Tensor as element 0 in argument 0, but got "
                               f"{type(t).__name__}", start=node.pos, end=node.end)
    return [as_tensor(ev, node, t) for t in items], len(args) == 1 and \
        isinstance(args[0], (list, tuple))


def broadcast_tensors(ev: Evaluating, node: Ast, args: list, kw: dict) -> tuple:
    check_keywords(node, kw, ())
    items, _ = _tensors(ev, node, args, "broadcast_tensors")
    try:
        shape = np.broadcast_shapes(*(t.value.shape for t in items))
    except ValueError:
        raise DdxRuntimeError("shape mismatch: objects cannot be broadcast to a single shape",
                              start=node.pos, end=node.end) from None
    return tuple(t if t.value.shape == shape else ev.op("expand", node, [t], {"shape": shape})
                 for t in items)


def _atleast(n: int):
    def grow(ev: Evaluating, node: Ast, t: Tensor) -> Tensor:
        nd = t.value.ndim
        if nd >= n:
            return t
        if nd == 0:
            return ev.op("view", node, [t], {"shape": (1,) * n})
        if n == 2 or (n == 3 and nd == 1):
            t = ev.op("unsqueeze", node, [t], {"dim": 0})
        return t if n == 2 else ev.op("unsqueeze", node, [t], {"dim": t.value.ndim})

    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
        check_keywords(node, kw, ())
        items, seq = _tensors(ev, node, args, f"atleast_{n}d")
        got = tuple(grow(ev, node, t) for t in items)
        return got if seq or len(got) != 1 else got[0]
    return call


def meshgrid(ev: Evaluating, node: Ast, args: list, kw: dict) -> tuple:
    check_keywords(node, kw, ("indexing",))
    indexing = kw["indexing"][0] if "indexing" in kw else "ij"
    indexing = str(indexing) if indexing is not None else "ij"
    if indexing not in ("ij", "xy"):
        raise DdxRuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                              f"received: {indexing}", start=node.pos, end=node.end)
    items, _ = _tensors(ev, node, args, "meshgrid")
    for t in items:
        if t.value.ndim > 1:
            raise DdxRuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                                  f"but got: {t.value.ndim}D", start=node.pos, end=node.end)
    swap = indexing == "xy" and len(items) >= 2
    order = [items[1], items[0], *items[2:]] if swap else items
    shape = tuple(t.value.size for t in order)
    grids = []
    for i, t in enumerate(order):
        view = tuple(-1 if k == i else 1 for k in range(len(order)))
        viewed = ev.op("view", node, [t], {"shape": tuple(shape[i] if s == -1 else s
                                                         for s in view)})
        grids.append(ev.op("expand", node, [viewed], {"shape": shape}))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


NAMED = {"broadcast_tensors": broadcast_tensors, "atleast_1d": _atleast(1),
         "atleast_2d": _atleast(2), "atleast_3d": _atleast(3), "meshgrid": meshgrid}
NAMED_SPACES = {name: ("torch",) for name in NAMED}
# torch.flip(x, [0, 1]): its [..] is a list of dims, not a vector literal
LISTS = {"flip"}
