"""Callers for the comparison and selection rows (ddx/ops/rows_compare.py): gt/lt/..., where,
clamp (plain-number or tensor bounds), lerp (number or tensor weight)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError
from ..lang.tree import Ast
from .args import Evaluating, as_tensor, bind
from .tensor import Tensor
from .values import weak


def _operand(ev: Evaluating, node: Ast, value: Any) -> Tensor:
    if value is None:
        return None
    return as_tensor(ev, node, value)


def compare(name: str):
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
        given = bind(node, args, kw, ("input", "other"), required=2)
        a, b = as_tensor(ev, node, given["input"]), as_tensor(ev, node, given["other"])
        return ev.compare(node, name, a, b)
    return call


def where(name: str):
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
        if len(args) + len(kw) == 1 and (args or "condition" in kw):  # where(c): nonzero's
            cond = args[0] if args else kw["condition"][0]
            return ev.functions["nonzero"](ev, node, [cond], {"as_tuple": (True, node.pos)})
        given = bind(node, args, kw, ("condition", "input", "other"), required=3)
        cond = as_tensor(ev, node, given["condition"])
        if cond.value.dtype != np.bool_:
            raise DdxRuntimeError(f"where expected condition to be a boolean tensor, but got a "
                                  f"tensor with dtype {_torch_dtype(cond.value.dtype)}",
                                  start=node.pos, end=node.end)
        a, b = as_tensor(ev, node, given["input"]), as_tensor(ev, node, given["other"])
        if a.weak and b.weak:  # where(c, 1., 0.): the default float dtype
            a = Tensor(np.asarray(a.value, dtype=ev.dtype), weak=True)
        for x, y in ((cond, a), (cond, b), (a, b)):
            ev.check_broadcast(node, x, y)
        return ev.op(name, node, [cond, a, b])
    return call


def _torch_dtype(dtype: np.dtype) -> str:
    return {"float64": "Double", "float32": "Float", "int64": "Long", "bool": "Bool"}.get(
        np.dtype(dtype).name, np.dtype(dtype).name)


def _bound(ev: Evaluating, node: Ast, key: str, value: Any):
    """A clamp bound: None, a plain number (a keyword of the row) or a tensor (an input)."""
    if value is None:
        return None
    if isinstance(value, Tensor) and value.weak:  # (an int bound keeps an int tensor int)
        got = value.value.item()
        return got if isinstance(got, int) and not isinstance(got, bool) else float(got)
    if isinstance(value, Tensor):
        return value
    raise DdxTypeError(f"{node.value}(): argument '{key}' must be Number or Tensor, not "
                       f"{type(value).__name__}", start=node.pos, end=node.end)


def clamp(name: str):
    keys = {"clamp": ("input", "min", "max"), "clamp_min": ("input", "min"),
            "clamp_max": ("input", "max")}[name]

    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
        given = bind(node, args, kw, keys, required=len(keys) if name != "clamp" else 1)
        a = as_tensor(ev, node, given["input"])
        if a.weak:
            a = Tensor(np.asarray(a.value, dtype=ev.dtype if a.value.dtype.kind != "f"
                                  else a.value.dtype))
        lo = _bound(ev, node, "min", given.get("min"))
        hi = _bound(ev, node, "max", given.get("max"))
        if lo is None and hi is None:
            raise DdxRuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None",
                                  start=node.pos, end=node.end)
        if isinstance(lo, Tensor) or isinstance(hi, Tensor):
            if name != "clamp":
                row = f"{name}_tensor"
                bound = lo if lo is not None else hi
                ev.check_broadcast(node, a, bound)
                return ev.op(row, node, [a, bound])
            lo = weak(-np.inf) if lo is None else lo if isinstance(lo, Tensor) else weak(lo)
            hi = weak(np.inf) if hi is None else hi if isinstance(hi, Tensor) else weak(hi)
            for b in (lo, hi):
                ev.check_broadcast(node, a, b)
            return ev.op("clamp_tensor", node, [a, lo, hi])
        kwargs = {k: v for k, v in (("min", lo), ("max", hi)) if v is not None}
        return ev.op(name, node, [a], kwargs)
    return call


def lerp(name: str):
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
        given = bind(node, args, kw, ("input", "end", "weight"), required=3)
        a, b = as_tensor(ev, node, given["input"]), as_tensor(ev, node, given["end"])
        w = as_tensor(ev, node, given["weight"])
        ev.check_broadcast(node, a, b)
        if w.weak:
            return ev.op("lerp", node, [a, b], {"weight": float(w.value.item())})
        ev.check_broadcast(node, a, w)
        return ev.op("lerp_tensor", node, [a, b, w])
    return call


KINDS = {"compare": compare, "where": where, "clamp": clamp, "lerp": lerp}
