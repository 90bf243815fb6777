"""Round 7's names that are not one function of the graph layer (issue 15: PyTorch's
_torch_docs.py and _tensor_docs.py examples): the in-place methods of round 7's rows
(x.index_fill_, x.index_copy_, x.masked_scatter_, x.put_, x.scatter_add_: the row computed,
then written or recorded, as pyinplace.in_place does for every in-place method), and
torch.broadcast_shapes (a torch.Size)."""

from __future__ import annotations

import numpy as np

from ..errors import DdxRuntimeError
from ..graph.calls_shape import int_of
from .pyinplace import in_place
from .values import Size


def fn_broadcast_shapes(ev, node, args: list, kw: dict) -> Size:
    shapes = []
    for s in args:
        items = s if isinstance(s, (tuple, list)) else (s,)
        shapes.append(tuple(int_of(ev, node, n) for n in items))
    try:
        return Size(np.broadcast_shapes(*shapes))
    except ValueError:
        raise DdxRuntimeError("shape mismatch: objects cannot be broadcast to a single shape",
                              start=node.pos, end=node.end) from None


IN_PLACE = ("index_fill", "index_copy", "masked_scatter", "put", "scatter_add")


def register() -> None:
    from .methods import TENSOR_METHODS
    from .pymodules import EXTRA, Native

    for name in IN_PLACE:
        TENSOR_METHODS.setdefault(f"{name}_", in_place(name))
    EXTRA["torch"].setdefault("broadcast_shapes",
                              Native("broadcast_shapes", fn_broadcast_shapes))


register()

__all__ = ["IN_PLACE", "fn_broadcast_shapes"]
