"""``torch.X(..., out=t)`` for every function of the torch namespace: the result is computed
as without ``out``, then written into ``t`` (its dtype kept, its memory too where the shape
matches, so a numpy array sharing it sees the values), and ``t`` is returned. PyTorch's rules:
no out= where autograd would record (its RuntimeError), no cast from float into an integer
tensor (and none into bool but from bool), a resized non-empty ``t`` warned about."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError
from ..lang.tree import Ast
from . import record
from .create_args import torch_type
from .tensor import Tensor
from .values import type_name

_RESIZED = ("An output with one or more elements was resized since it had shape {old}, which "
            "does not match the required output shape {new}. This behavior is deprecated, and "
            "in a future PyTorch release outputs will not be resized unless they have zero "
            "elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
            "elements with t.resize_(0).")


def _short(dtype) -> str:
    """PyTorch's scalar-type name: Float, Double, Long, Bool."""
    return torch_type(dtype).split(".")[-1].capitalize()


def call_with_out(ev, node: Ast, fn, args: list, kw: dict) -> Any:
    out = kw["out"][0]
    rest = {k: v for k, v in kw.items() if k != "out"}
    if out is None:
        return fn(ev, node, args, rest)
    if not isinstance(out, Tensor) or out.weak:
        raise DdxTypeError(f"{node.value}(): argument 'out' must be Tensor, not "
                           f"{type_name(out)}", start=node.pos, end=node.end)
    given = [*args, *(v for v, _ in rest.values()), out]
    if record.GRAD_MODE.enabled and any(isinstance(a, Tensor) and a.requires_grad
                                        for a in given):
        raise DdxRuntimeError(f"{node.value}(): functions with out=... arguments don't support "
                              "automatic differentiation, but one of the arguments requires "
                              "grad.", start=node.pos, end=node.end)
    result = fn(ev, node, args, rest)
    if not isinstance(result, Tensor):
        raise DdxTypeError(f"{node.value}(): out= of a result that is not one tensor is not "
                           "supported by ddx", start=node.pos, end=node.end)
    value = np.asarray(result.value)
    if not np.can_cast(value.dtype, out.value.dtype, "same_kind"):
        raise DdxRuntimeError(f"result type {_short(value.dtype)} can't be cast to the desired "
                              f"output type {_short(out.value.dtype)}", start=node.pos,
                              end=node.end)
    if ev.journal is not None:
        ev.journal.overwrite(out.value)
    if out.value.shape != value.shape:
        if out.value.size:
            ev.warnings.append(_RESIZED.format(old=list(out.value.shape),
                                               new=list(value.shape)))
        out.value = value.astype(out.value.dtype)
    else:
        if not out.value.flags.writeable:
            out.value = np.array(out.value)
        out.value[...] = value
    return out
