"""Indexing as PyTorch records it: ints (SelectBackward0), slices (SliceBackward0), None
(UnsqueezeBackward0), ``...``, and then in one step the integer lists, integer tensors and
boolean masks (IndexBackward0); the basic parts left to right, the advanced ones last."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxShapeError, DdxTypeError, DdxValueError
from ..lang.tree import Ast
from ..limits import short_int
from .tensor import Function, Tensor
from .values import py_type, type_name


def index(ev, node: Ast, values: list) -> Any:
    base = values[0]
    if isinstance(base, (tuple, list, str, dict)) and len(node.value) == 1:
        return _python_index(ev, node, base, values[1:])
    if len(node.value) == 1 and hasattr(base, "py_getitem"):  # (nn.Sequential's seq[0])
        sub = node.value[0]
        return base.py_getitem(_slice(ev, node, sub, values[1:]) if isinstance(sub, tuple)
                               else values[1])
    hook = getattr(ev.surface, "user_getitem", None) if ev.surface is not None else None
    if hook is not None and len(node.value) == 1 and not isinstance(node.value[0], tuple):
        got = hook(ev, node, base, values[1])  # (a user's class with __getitem__)
        if got is not NotImplemented:
            return got
    if not isinstance(base, Tensor) or base.weak:
        kind = base.name if isinstance(base, Function) else py_type(base)  # Python's words
        raise DdxTypeError(f"'{kind}' object is not subscriptable", start=node.pos,
                           end=node.pos + 1)
    items = _resolve(ev, node, values[1:])
    ndim = base.value.ndim
    used = sum(_width(item) for item in items)
    if used > ndim:
        first = items[0][0]
        text = ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"
                if ndim == 0 and first == "int" else "slice() cannot be applied to a 0-dim "
                "tensor." if ndim == 0 and first == "slice" else
                f"too many indices for tensor of dimension {ndim}")
        exc = DdxShapeError(text, start=node.pos, end=node.end)
        exc.python_kind = "IndexError"
        raise exc
    expanded = []
    for item in items:  # ``...``: as many full slices as the dimensions not indexed
        if item[0] == "ellipsis":
            expanded.extend([("slice", slice(None))] * (ndim - used))
            used = ndim
        else:
            expanded.append(item)
    cur, dim, advanced = base, 0, []
    single = len(node.value) == 1 and isinstance(node.value[0], tuple)  # (x[a:b] alone)
    for item in expanded:
        kind = item[0]
        if kind == "none":
            cur = ev.op("unsqueeze", node, [cur], {"dim": dim})
            dim += 1
        elif kind == "int":
            size = cur.value.shape[dim]
            i = item[1]
            if not -size <= i < size:
                raise DdxShapeError(f"index {short_int(i)} is out of bounds for dimension {dim} "
                                    f"with size {size}", start=node.pos, end=node.end)
            cur = ev.op("select", node, [cur], {"key": (slice(None),) * dim + (i,)})
        elif kind == "slice":
            # a lone slice is always recorded (x[:] is SliceBackward0, as in PyTorch); among
            # several, a whole dimension is skipped
            if single or item[1].indices(cur.value.shape[dim]) != (0, cur.value.shape[dim], 1):
                cur = ev.op("slice", node, [cur], {"key": (slice(None),) * dim + (item[1],)})
            dim += 1
        else:  # an integer array or a mask, taken after the basic indexing
            advanced.append((dim, item))
            dim += _width(item)
    if advanced:
        cur = ev.op("index", node, [cur], {"key": _advanced_key(node, cur, advanced)})
    if cur is base:  # x[:, :], x[...]: nothing taken, and PyTorch records an alias
        cur = ev.op("alias", node, [cur])
    return cur


def _slice(ev, node: Ast, sub: tuple, values: list) -> slice:
    parts = iter(values)
    return slice(*[ev.int_arg(next(parts), node) if p is not None else None for p in sub[1:]])


def _python_index(ev, node: Ast, base: Any, values: list) -> Any:
    """A list's, tuple's or string's item or slice, a dict's value: as Python gives them."""
    sub = node.value[0]
    kind = "list" if isinstance(base, list) else type(base).__name__
    if isinstance(base, dict):
        key = values[0]
        key = key.value.item() if isinstance(key, Tensor) and key.weak else key
        if key not in base:
            exc = DdxShapeError(f"KeyError: {key!r}", start=node.pos, end=node.end)
            exc.python_kind = "KeyError"
            raise exc
        return base[key]
    if isinstance(sub, tuple):
        got = base[_slice(ev, node, sub, values)]
        if isinstance(base, list) and type(base) is not list or \
                getattr(base, "sliced_keeps_kind", False):  # (x.shape[1:] is a torch.Size)
            return type(base)(got)
        return got
    i = ev.int_arg(values[0], node)
    if not -len(base) <= i < len(base):
        exc = DdxShapeError(f"{'string' if kind == 'str' else kind} index out of range",
                            start=node.pos, end=node.end)
        exc.python_kind = "IndexError"
        raise exc
    return base[i]


def _width(item: tuple) -> int:
    """How many of the tensor's dimensions an index item consumes."""
    kind = item[0]
    if kind in ("none", "ellipsis"):
        return 0
    if kind == "mask":
        return max(item[1].ndim, 1)
    return 1


def _resolve(ev, node: Ast, values: list) -> list[tuple]:
    subs = node.value
    if len(subs) == 1 and not isinstance(subs[0], tuple) and type(values[0]) is tuple:
        subs, values = subs * len(values[0]), list(values[0])  # (idx = (1, 2); x[idx])
    rest = iter(values)
    items: list = []
    for sub in subs:
        if isinstance(sub, tuple):
            parts = [ev.int_arg(next(rest), node) if p is not None else None for p in sub[1:]]
            if parts[2] is not None and parts[2] <= 0:
                raise DdxValueError("step must be greater than zero", start=node.pos)
            items.append(("slice", slice(*parts)))
            continue
        v = next(rest)
        if v is None:
            items.append(("none",))
        elif v is Ellipsis:
            if any(item[0] == "ellipsis" for item in items):
                raise DdxShapeError("an index can only have a single ellipsis ('...')",
                                    start=node.pos, end=node.end)
            items.append(("ellipsis",))
        elif isinstance(v, slice):  # (a slice(...) in a tuple of indexes)
            items.append(("slice", slice(*(None if p is None else ev.int_arg(p, node)
                                           for p in (v.start, v.stop, v.step)))))
        elif isinstance(v, Tensor) and (v.weak or v.value.ndim == 0 and
                                        v.value.dtype.kind in "iu"):
            items.append(("int", ev.int_arg(v, node)))
        else:
            items.append(_array_item(node, sub, v))
    return items


def _array_item(node: Ast, sub: Ast, v: Any) -> tuple:
    if isinstance(v, (list, tuple)):
        v = np.asarray([x.value.item() if isinstance(x, Tensor) else x for x in v])
    elif isinstance(v, Tensor):
        v = v.value
    else:
        raise DdxTypeError(f"indices must be integers, slices, None, ..., lists or tensors, not "
                           f"{type_name(v)}", start=node.pos, end=node.end)
    if v.dtype == np.bool_:
        return ("mask", v)
    if v.dtype.kind == "f" and sub.kind in ("vec", "list") and np.all(np.mod(v, 1) == 0):
        v = v.astype(np.int64)  # x[[0, 2]] in a one-liner, whose literals are floats
    if v.dtype.kind not in "iu":
        raise DdxTypeError("tensors used as indices must be long, int, byte or bool tensors",
                           start=node.pos, end=node.end)
    return ("ints", v)


def _advanced_key(node: Ast, cur: Tensor, advanced: list) -> tuple:
    """The index row's key: per dimension None, or (shape, flat indices); masks as the
    positions they select (their nonzero), bounds checked as PyTorch checks them."""
    shape = cur.value.shape
    key: list = [None] * len(shape)
    for dim, (kind, arr) in advanced:
        if kind == "mask":
            want = shape[dim:dim + max(arr.ndim, 1)]
            if arr.shape != want:
                raise DdxShapeError(f"The shape of the mask {list(arr.shape)} at index {dim} does "
                                    f"not match the shape of the indexed tensor {list(shape)} at "
                                    f"index {dim}", start=node.pos, end=node.end)
            for k, pos in enumerate(np.nonzero(arr)):
                key[dim + k] = (pos.shape, tuple(pos.tolist()))
            continue
        size = shape[dim]
        bad = arr[(arr < -size) | (arr >= size)]
        if bad.size:
            raise DdxShapeError(f"index {short_int(int(bad.flat[0]))} is out of bounds for "
                                f"dimension {dim} with size {size}", start=node.pos, end=node.end)
        arr = np.where(arr < 0, arr + size, arr)
        key[dim] = (arr.shape, tuple(arr.reshape(-1).tolist()))
    shapes = [k[0] for k in key if k is not None]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        exc = DdxShapeError("shape mismatch: indexing tensors could not be broadcast together "
                            "with shapes " + ", ".join(str(list(s)) for s in shapes),
                            start=node.pos, end=node.end)
        exc.python_kind = "IndexError"
        raise exc from None
    while key and key[-1] is None:
        key.pop()
    return tuple(key)
