"""Tensor methods about memory that tutorials print: element_size() (bytes per element, as
torch's dtypes have them) and data_ptr() (the address of the first element: equal for views
that start at the same element, a clone's differs, a row's is the base plus its offset)."""

from __future__ import annotations

from ..graph.tensor import Tensor
from .methods import check_kw


def m_element_size(ev, node, t: Tensor, args, kw):
    check_kw(node, kw, ())
    return int(t.value.itemsize)


def m_data_ptr(ev, node, t: Tensor, args, kw):
    check_kw(node, kw, ())
    if t.value.size == 0:
        return 0
    return int(t.value.__array_interface__["data"][0])


METHODS = {"element_size": m_element_size, "data_ptr": m_data_ptr}

__all__ = ["METHODS"]


def register() -> None:
    from .methods import TENSOR_METHODS

    for name, fn in METHODS.items():
        TENSOR_METHODS.setdefault(name, fn)


register()
