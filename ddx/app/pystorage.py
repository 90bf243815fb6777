"""x.storage_offset(): how many elements into its storage a tensor starts (``x[3:]`` of a
fresh tensor: 3), read from the numpy view's distance to the array it views."""

from __future__ import annotations

import numpy as np

from ..graph.tensor import Tensor
from .methods import check_kw


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


def register() -> None:
    from .methods import TENSOR_METHODS

    TENSOR_METHODS.setdefault("storage_offset", m_storage_offset)


register()

__all__ = ["m_storage_offset"]
