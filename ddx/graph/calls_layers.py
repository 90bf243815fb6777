"""Callers for the layer functions: torch.addmm and torch.nn.functional.linear, recording what
PyTorch records (F.linear of a 2-D input with a bias is AddmmBackward0 over TBackward0 of the
weight; a contiguous input of other ranks is viewed to 2-D first and back after; without a
bias, or for other inputs, a matmul)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxRuntimeError
from ..lang.tree import Ast
from .args import Evaluating, as_tensor, bind
from .create_args import torch_type


def _addmm_checked(ev: Evaluating, node: Ast, bias, a, b):
    if a.value.dtype != b.value.dtype:  # (no promotion in a product: PyTorch's words)
        ta, tb = (torch_type(t.value.dtype) for t in (a, b))
        raise DdxRuntimeError(f"mat1 and mat2 must have the same dtype, but got {ta} and {tb}",
                              start=node.pos, end=node.end)
    if a.value.ndim != 2 or b.value.ndim != 2:
        raise DdxRuntimeError(f"mat1 must be a matrix, got {a.value.ndim}-D tensor" if
                              a.value.ndim != 2 else
                              f"mat2 must be a matrix, got {b.value.ndim}-D tensor",
                              start=node.pos, end=node.end)
    if a.value.shape[1] != b.value.shape[0]:
        raise DdxRuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                              f"({a.value.shape[0]}x{a.value.shape[1]} and "
                              f"{b.value.shape[0]}x{b.value.shape[1]})",
                              start=node.pos, end=node.end)
    target = (a.value.shape[0], b.value.shape[1])
    have = bias.value.shape
    padded = (1,) * (2 - len(have)) + have if len(have) <= 2 else have
    for i, (want, got) in enumerate(zip(target, padded)):
        if got not in (1, want) or len(have) > 2:
            raise DdxRuntimeError(f"The expanded size of the tensor ({want}) must match the "
                                  f"existing size ({got}) at non-singleton dimension {i}.  "
                                  f"Target sizes: [{target[0]}, {target[1]}].  Tensor sizes: "
                                  f"[{', '.join(map(str, have))}]", start=node.pos,
                                  end=node.end)
    return ev.op("addmm", node, [bias, a, b])


def addmm(name: str):
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
        given = bind(node, args, kw, ("input", "mat1", "mat2"), required=3)
        bias, a, b = (as_tensor(ev, node, given[k]) for k in ("input", "mat1", "mat2"))
        return _addmm_checked(ev, node, bias, a, b)
    return call


def linear(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
    """at::linear: a 2-d input with a bias is addmm(bias, x, w.t()); a contiguous input of
    another rank with a 1-d bias (or any bias, 3-d) is flattened to 2-d, addmm'd and viewed
    back (_flatten_nd_linear); anything else is matmul(x, w.t()), plus the bias in place."""
    given = bind(node, args, kw, ("input", "weight", "bias"), required=2)
    x, w = as_tensor(ev, node, given["input"]), as_tensor(ev, node, given["weight"])
    bias = given.get("bias")
    wt = ev.functions["t"](ev, node, [w], {})
    if bias is None:
        return ev.functions["matmul"](ev, node, [x, wt], {})
    bias = as_tensor(ev, node, bias)
    nd = x.value.ndim
    if nd == 2:
        return _addmm_checked(ev, node, bias, x, wt)
    if nd and x.value.flags.c_contiguous and (nd == 3 or bias.value.ndim == 1):
        shape = x.value.shape
        flat = ev.op("view", node, [x], {"shape": (int(np.prod(shape[:-1])), shape[-1])})
        out = _addmm_checked(ev, node, bias, flat, wt)
        return ev.op("view", node, [out], {"shape": shape[:-1] + (w.value.shape[0],)})
    out = ev.functions["matmul"](ev, node, [x, wt], {})
    return ev.op("add", node, [out, bias])


KINDS = {"addmm": addmm}
NAMED = {"linear": linear}
NAMED_SPACES = {"linear": ("F",)}
