"""Round 7's names that are not one function of the graph layer (issue 15: PyTorch's
_torch_docs.py and _tensor_docs.py examples): the in-place methods of round 7's rows
(x.index_fill_, x.index_copy_, x.masked_scatter_, x.put_, x.scatter_add_: the row computed,
then written or recorded, as pyinplace.in_place does for every in-place method), and
torch.broadcast_shapes (a torch.Size) and torch.range (kept off the bare name range, which
is Python's)."""

from __future__ import annotations

import numpy as np

from ..errors import DdxRuntimeError
from ..graph.calls_m2 import call_range
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
    TENSOR_METHODS.setdefault("fill_diagonal_", m_fill_diagonal_)
    TENSOR_METHODS.setdefault("resize_", m_resize_)
    EXTRA["torch"].setdefault("range", Native("range", call_range))
    EXTRA["torch"].setdefault("broadcast_shapes",
                              Native("broadcast_shapes", fn_broadcast_shapes))




def m_fill_diagonal_(ev, node, t, args: list, kw: dict):
    """x.fill_diagonal_(value, wrap=False) on a tensor autograd does not record: ATen's
    fill_diagonal_ (all dims equal past 2-d; a tall matrix's diagonal restarts after a blank
    row with wrap=True)."""
    from ..errors import DdxTypeError
    from ..graph import record
    from ..graph.args import bind
    from ..graph.tensor import Tensor
    from .pyinplace import write

    given = bind(node, args, {k: v for k, v in kw.items()}, ("fill_value", "wrap"), 1)
    value = given["fill_value"]
    value = value.value.item() if isinstance(value, Tensor) else value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DdxTypeError("fill_diagonal_(): argument 'fill_value' must be Number",
                           start=node.pos, end=node.end)
    wrap = given.get("wrap", False)
    wrap = bool(wrap.value) if isinstance(wrap, Tensor) else bool(wrap)
    a = t.value
    if a.ndim < 2:
        raise DdxRuntimeError("dimensions must larger than 1", start=node.pos, end=node.end)
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise DdxRuntimeError("all dimensions of input must be of equal length",
                              start=node.pos, end=node.end)
    if record.GRAD_MODE.enabled and t.requires_grad:
        raise DdxRuntimeError("fill_diagonal_ of a tensor that requires grad is not supported "
                              "by ddx (it is under torch.no_grad())", start=node.pos, end=node.end)
    out = np.array(a, copy=True)
    flat = out.reshape(-1)
    step = sum(int(np.prod(a.shape[i + 1:])) for i in range(a.ndim))
    n = min(a.shape) if a.ndim > 2 or not wrap else None
    if n is not None:
        flat[np.arange(min(a.shape)) * step] = value
    else:  # (numpy's fill_diagonal with wrap: every step elements down the flat matrix)
        flat[::a.shape[1] + 1] = value
    write(ev, t, out)
    return t


def m_resize_(ev, node, t, args: list, kw: dict):
    """x.resize_(*sizes) to as many elements or fewer (the first ones, in order), on a tensor
    that does not require grad; growing it (memory PyTorch leaves uninitialized) is refused."""
    from ..graph.calls_shape import int_list

    sizes = int_list(ev, node, list(args))
    n = int(np.prod(sizes)) if sizes else 1
    if t.requires_grad:
        raise DdxRuntimeError("cannot resize variables that require grad", start=node.pos,
                              end=node.end)
    if n > t.value.size:
        raise DdxRuntimeError(f"resize_ to more elements ({n}) than the tensor has "
                              f"({t.value.size}) is not supported by ddx (PyTorch leaves the "
                              "new ones uninitialized)", start=node.pos, end=node.end)
    new = np.ascontiguousarray(t.value).reshape(-1)[:n].reshape(sizes).copy()
    if ev.journal is not None:
        ev.journal.set(t, "value", new)
    else:
        t.value = new
    return t


__all__ = ["IN_PLACE", "fn_broadcast_shapes", "m_fill_diagonal_", "m_resize_"]


register()
