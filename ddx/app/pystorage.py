"""x.storage_offset(): how many elements into its storage a tensor starts (``x[3:]`` of a
fresh tensor: 3), read from the numpy view's distance to the array it views; x.view(dtype):
the same bytes read as another dtype (the last dimension scaled by the sizes' ratio), which
autograd does not track."""

from __future__ import annotations

import numpy as np

from ..errors import DdxRuntimeError
from ..graph.tensor import Tensor
from ..graph.values import DType
from .methods import check_kw
from .pyvalues import torch_type_name


def m_storage_offset(ev, node, t: Tensor, args, kw):
    check_kw(node, kw, ())
    value = t.value
    root = value
    while isinstance(root.base, np.ndarray):
        root = root.base
    if value.size == 0 or root is value:
        return 0
    start = value.__array_interface__["data"][0]
    return int((start - root.__array_interface__["data"][0]) // value.itemsize)


def _view_as_dtype(view):
    def method(ev, node, t: Tensor, args, kw):
        if len(args) != 1 or kw or not isinstance(args[0], DType):
            return view(ev, node, [t, *args], kw)
        want, have = args[0].np, t.value.dtype
        last = t.value.shape[-1] if t.value.ndim else 1
        if want.itemsize != have.itemsize and (
                t.value.ndim == 0 or (last * have.itemsize) % want.itemsize):
            ratio = max(want.itemsize, have.itemsize) // min(want.itemsize, have.itemsize)
            raise DdxRuntimeError(
                f"self.size(-1) must be divisible by {ratio} to view {torch_type_name(have)} "
                f"as {torch_type_name(want)} (different element sizes), but got {last}",
                start=node.pos, end=node.end)
        return Tensor(np.ascontiguousarray(t.value).view(want))
    return method


def register() -> None:
    from .methods import TENSOR_METHODS

    TENSOR_METHODS.setdefault("storage_offset", m_storage_offset)
    TENSOR_METHODS["view"] = _view_as_dtype(_op_view)


def _op_view(ev, node, args, kw):
    return ev.functions["view"](ev, node, args, kw)


register()

__all__ = ["m_storage_offset"]
