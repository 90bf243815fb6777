"""What PyTorch's vmap computes batched and ddx's per-sample run would round otherwise: its
batching rule for ``F.linear`` (also nn.Linear's forward) of a mapped input and unmapped
weight and bias folds the batch into the rows of one matrix product (addmm), and a row of a
matrix product can differ in the last bits from the product of that row alone (gemm against
gemv). So under vmap, ``F.linear`` of a sample that is the mapped input itself (or the fresh
leaf a transform made of it: ``vmap(jacrev(f))``) is recorded per sample as always (its
graph and gradients are that sample's), and its value is that sample's row of the whole
batch's linear, computed once per vmap."""

from __future__ import annotations

from typing import Any

from ..graph import record
from ..graph.functions import FUNCTIONS
from ..graph.tensor import Tensor
from .pyvmapstate import FRAMES, mapped, source_of


def linear(ev, node, args: list, kw: dict) -> Any:
    out = FUNCTIONS["linear"](ev, node, args, kw)
    if FRAMES and isinstance(out, Tensor) and out.value.flags.writeable:
        _batched_rows(ev, node, out, args, kw)
    return out


def _batched_rows(ev, node, out: Tensor, args: list, kw: dict) -> None:
    names = ("input", "weight", "bias")
    given = dict(zip(names, args))
    given.update({k: v[0] for k, v in kw.items() if k in names})
    x, w, b = given.get("input"), given.get("weight"), given.get("bias")
    frame = FRAMES[-1]
    k = source_of(frame, x)
    if k is None or frame.dims[k] % frame.flat[k].value.ndim != 0 or mapped(w) or mapped(b):
        return
    key = ("linear", k, id(w), id(b))
    if key not in frame.rules:
        plain = [Tensor(frame.flat[k].value), Tensor(w.value)] + \
            ([Tensor(b.value)] if isinstance(b, Tensor) else [])
        before = record.GRAD_MODE.enabled
        record.GRAD_MODE.enabled = False
        try:
            frame.rules[key] = (w, b, FUNCTIONS["linear"](ev, node, plain, {}).value)
        finally:
            record.GRAD_MODE.enabled = before
    row = frame.rules[key][2][frame.index]
    if row.shape == out.value.shape and row.dtype == out.value.dtype:
        out.value[...] = row


def register(functions: dict) -> None:
    functions["linear"] = linear


__all__ = ["linear", "register"]
