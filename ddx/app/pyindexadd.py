"""x.index_add_(dim, index, source, alpha=1) and its out-of-place x.index_add / torch.index_add,
on tensors autograd does not record (a custom Function's backward builds its gradient so:
``grad_input.index_add_(0, idx, g1)``): source's slices added one after the other, in the
index's order, as ATen's CPU loop adds them. Recorded, it is one clear error. Also x.scatter_
(the scatter row, in place)."""

from __future__ import annotations

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError
from ..graph import record
from ..graph.args import bind
from ..graph.create_args import int_arg
from ..graph.tensor import Tensor
from .pyinplace import in_place, write
from .pyvalues import torch_type_name


def _added(node, t: Tensor, args: list, kw: dict) -> np.ndarray:
    given = bind(node, args, {k: v for k, v in kw.items() if k != "alpha"},
                 ("dim", "index", "source"), 3)
    alpha = kw["alpha"][0] if "alpha" in kw else None
    dim = int_arg(node, "dim", given["dim"], 1)
    index, source = given["index"], given["source"]
    if not isinstance(index, Tensor) or index.value.dtype.kind not in "iu":
        raise DdxTypeError("index_add_(): Expected dtype int32/int64 for index",
                           start=node.pos, end=node.end)
    if not isinstance(source, Tensor):
        raise DdxTypeError("index_add_(): argument 'source' must be Tensor",
                           start=node.pos, end=node.end)
    if record.GRAD_MODE.enabled and (t.requires_grad or source.requires_grad):
        raise DdxRuntimeError("index_add_ of tensors that autograd records is not supported by "
                              "ddx (it is, under torch.no_grad() or in a custom Function's "
                              "backward)", start=node.pos, end=node.end)
    if source.value.dtype != t.value.dtype:
        raise DdxRuntimeError(f"index_add_(): self ({torch_type_name(t.value.dtype)}) and "
                              f"source ({torch_type_name(source.value.dtype)}) must have "
                              "the same scalar type", start=node.pos, end=node.end)
    ndim = max(t.value.ndim, 1)
    d = dim + ndim if dim < 0 else dim
    idx = np.asarray(index.value).reshape(-1)
    out = np.array(t.value, copy=True).reshape(t.value.shape or (1,))
    src = np.asarray(source.value).reshape(source.value.shape or (1,))
    if not 0 <= d < ndim or src.shape[d] != idx.size:
        raise DdxRuntimeError("index_add_(): Number of indices should be equal to "
                              "source.size(dim)", start=node.pos, end=node.end)
    if alpha is not None:
        a = alpha.value.item() if isinstance(alpha, Tensor) else alpha
        src = (src * np.asarray(a, dtype=src.dtype)).astype(src.dtype)
    moved, moved_src = np.moveaxis(out, d, 0), np.moveaxis(src, d, 0)
    for i, k in enumerate(idx.tolist()):
        moved[k] += moved_src[i]
    return out.reshape(t.value.shape)


def m_index_add_(ev, node, t: Tensor, args: list, kw: dict) -> Tensor:
    write(ev, t, _added(node, t, args, kw))
    return t


def m_index_add(ev, node, t: Tensor, args: list, kw: dict) -> Tensor:
    return Tensor(_added(node, t, args, kw))


def fn_index_add(ev, node, args: list, kw: dict) -> Tensor:
    if not args or not isinstance(args[0], Tensor):
        raise DdxTypeError("index_add(): argument 'input' must be Tensor",
                           start=node.pos, end=node.end)
    return m_index_add(ev, node, args[0], list(args[1:]), kw)


def register() -> None:
    from .methods import TENSOR_METHODS
    from .pymodules import EXTRA, Native

    TENSOR_METHODS.setdefault("index_add_", m_index_add_)
    TENSOR_METHODS.setdefault("index_add", m_index_add)
    EXTRA["torch"].setdefault("index_add", Native("index_add", fn_index_add))
    TENSOR_METHODS.setdefault("scatter_", in_place("scatter"))  # (the scatter row, in place)


register()

__all__ = ["m_index_add", "m_index_add_"]
