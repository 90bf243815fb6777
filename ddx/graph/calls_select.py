"""Callers for the shape rows that pick, order or mask elements: flip, roll, gather,
index_select, masked_fill, tril, triu (their tables join ddx/graph/calls_shape.py's)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxShapeError, DdxTypeError
from ..lang.tree import Ast
from .args import Evaluating, bind, number
from .calls_shape import dim_of, dims_of, fail, int_list, int_of, tensor_arg
from .tensor import Tensor

TORCH_DTYPE = {"float32": "float", "float64": "double", "float16": "half", "int64": "long",
               "int32": "int", "int16": "short", "int8": "signed char", "uint8": "unsigned char"}


def call_flip(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    a = tensor_arg(ev, node, args[0])
    rest = list(args[1:]) + ([kw["dims"][0]] if "dims" in kw else [])
    if not rest:
        raise fail(node, "flip() missing required argument 'dims'", DdxTypeError)
    items = rest[0] if len(rest) == 1 and isinstance(rest[0], (tuple, list)) else rest
    return ev.op("flip", node, [a], {"dims": dims_of(ev, node, tuple(items), a.value.ndim)})


def call_roll(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("input", "shifts", "dims"), required=2)
    a = tensor_arg(ev, node, given["input"])
    shifts = int_list(ev, node, [given["shifts"]])
    dims = given.get("dims")
    if dims is None:
        if len(shifts) != 1:
            raise fail(node, f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return ev.op("roll", node, [a], {"shifts": shifts, "dims": ()})
    items = dims if isinstance(dims, (tuple, list)) else (dims,)
    dims = tuple(dim_of(ev, node, d, a.value.ndim) for d in items)
    if len(dims) != len(shifts):
        raise fail(node, f"shifts and dimensions must align. shifts: {len(shifts)}, "
                         f"dims:{len(dims)}")
    return ev.op("roll", node, [a], {"shifts": shifts, "dims": dims})


def _index(ev: Evaluating, node: Ast, value: Any, what: str) -> np.ndarray:
    """An index tensor: integers (in one-liners, whose literals are floats, whole numbers)."""
    if isinstance(value, Tensor):
        v = value.value
        if v.dtype.kind in "iu" or (not ev.repl and v.dtype.kind == "f"
                                     and np.all(np.mod(v, 1) == 0)):
            return v.astype(np.int64)
    if isinstance(value, (list, tuple)):
        return np.asarray([int_of(ev, node, x) for x in value], dtype=np.int64)
    raise fail(node, f"{what}(): Expected dtype int64 for index", DdxTypeError)


def _nested(a: np.ndarray):
    return a.tolist() if a.ndim == 0 else tuple(_nested(x) for x in a)


def call_gather(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("input", "dim", "index", "sparse_grad"), required=3)
    a = tensor_arg(ev, node, given["input"])
    nd = a.value.ndim
    dim = dim_of(ev, node, given["dim"], nd)
    idx = _index(ev, node, given["index"], "gather")
    if idx.ndim != max(nd, 1) and not (nd == 0 and idx.ndim <= 1):
        raise fail(node, "Index tensor must have the same number of dimensions as input tensor")
    for d in range(idx.ndim):
        if d != dim and nd and idx.shape[d] > a.shape[d]:
            raise fail(node, f"Size does not match at dimension {d} expected index "
                             f"{list(idx.shape)} to be no larger than self {list(a.shape)} "
                             f"apart from dimension {dim}")
    size = a.shape[dim] if nd else 1
    bad = idx[(idx < -size) | (idx >= size)] if idx.size else idx
    if bad.size or (idx < 0).any():
        v = int(bad.flat[0]) if bad.size else int(idx[idx < 0].flat[0])
        raise fail(node, f"index {v} is out of bounds for dimension {dim} with size {size}",
                   DdxShapeError)
    return ev.op("gather", node, [a], {"dim": dim, "index": _nested(idx)})


def call_index_select(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("input", "dim", "index"), required=3)
    a = tensor_arg(ev, node, given["input"])
    dim = dim_of(ev, node, given["dim"], a.value.ndim)
    idx = _index(ev, node, given["index"], "index_select")
    if idx.ndim > 1:
        raise fail(node, "index_select(): Index is supposed to be a vector")
    idx = idx.reshape(-1)
    size = a.shape[dim] if a.value.ndim else 1
    for i in idx.tolist():
        if not 0 <= i < size:
            raise fail(node, f"INDICES element is out of DATA bounds, id={i} axis_dim={size}",
                       DdxShapeError)
    return ev.op("index_select", node, [a], {"dim": dim, "index": tuple(idx.tolist())})


def call_masked_fill(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("input", "mask", "value"), required=3)
    a = tensor_arg(ev, node, given["input"])
    mask = given["mask"]
    if not isinstance(mask, Tensor) or mask.value.dtype != np.bool_:
        what = TORCH_DTYPE.get(str(mask.value.dtype), str(mask.value.dtype)) \
            if isinstance(mask, Tensor) else type(mask).__name__
        raise fail(node, f"masked_fill_ only supports boolean masks, but got mask with dtype "
                         f"{what}")
    ev.check_broadcast(node, mask, a)
    value = given["value"]
    kw = {"mask": _nested(np.asarray(mask.value))}
    if isinstance(value, Tensor) and not value.weak:
        if value.value.ndim:
            raise fail(node, "masked_fill_ only supports a 0-dimensional value tensor, but got "
                             f"tensor with {value.value.ndim} dimension(s).")
        return ev.op("masked_fill_tensor", node, [a, value], kw)
    return ev.op("masked_fill", node, [a], {**kw, "value": number(node, "value", value)})


def call_unbind(ev: Evaluating, node: Ast, args: list, kw: dict) -> tuple:
    given = bind(node, args, kw, ("input", "dim"))
    a = tensor_arg(ev, node, given["input"])
    if a.value.ndim == 0:
        raise fail(node, "Dimension specified as 0 but tensor has no dimensions", DdxShapeError)
    dim = dim_of(ev, node, given.get("dim", 0), a.value.ndim)
    return tuple(ev.op("unbind_part", node, [a], {"dim": dim, "index": i})
                 for i in range(a.shape[dim]))


def call_narrow(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("input", "dim", "start", "length"), required=4)
    a = tensor_arg(ev, node, given["input"])
    if a.value.ndim == 0:
        raise fail(node, "narrow() cannot be applied to a 0-dim tensor.")
    dim = dim_of(ev, node, given["dim"], a.value.ndim)
    size = a.shape[dim]
    start, length = int_of(ev, node, given["start"]), int_of(ev, node, given["length"])
    if not -size <= start <= size:
        raise fail(node, f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})", DdxShapeError)
    start %= size if size else 1
    if length < 0:
        raise fail(node, "narrow(): length must be non-negative.")
    if start + length > size:
        raise fail(node, f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    key = (slice(None),) * dim + (slice(start, start + length),)
    return ev.op("slice", node, [a], {"key": key})


def call_movedim(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("input", "source", "destination"), required=3)
    a = tensor_arg(ev, node, given["input"])
    nd = a.value.ndim
    src = dims_of(ev, node, given["source"], nd)
    dst = dims_of(ev, node, given["destination"], nd)
    if len(src) != len(dst):
        raise fail(node, f"movedim: Invalid source or destination dims: source ({list(src)} "
                         f"dims) should contain the same number of dims as destination "
                         f"({list(dst)} dims)")
    order = [d for d in range(nd) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return ev.op("permute", node, [a], {"dims": tuple(order)})


def _as(name: str):
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        given = bind(node, args, kw, ("input", "other"), required=2)
        other = tensor_arg(ev, node, given["other"])
        return ev.functions[name](ev, node, [given["input"], *other.shape], {})
    return call


def _tri(name: str):
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        given = bind(node, args, kw, ("input", "diagonal"))
        a = tensor_arg(ev, node, given["input"])
        if a.value.ndim < 2:
            raise fail(node, f"{name}: input tensor must have at least 2 dimensions",
                       DdxShapeError)
        k = int_of(ev, node, given.get("diagonal", 0))
        return ev.op(name, node, [a], {"diagonal": k})
    return call


CALLERS: dict = {"flip": call_flip, "roll": call_roll, "gather": call_gather,
                 "index_select": call_index_select, "masked_fill": call_masked_fill,
                 "tril": _tri("tril"), "triu": _tri("triu")}
NAMED: dict = {"unbind": call_unbind, "narrow": call_narrow, "movedim": call_movedim,
               "moveaxis": call_movedim, "view_as": _as("view"), "reshape_as": _as("reshape")}
NAMED_SPACES: dict = {"unbind": ("torch", "Tensor"), "narrow": ("torch", "Tensor"),
                      "movedim": ("torch", "Tensor"), "moveaxis": ("torch", "Tensor"),
                      "view_as": ("Tensor",), "reshape_as": ("Tensor",)}
