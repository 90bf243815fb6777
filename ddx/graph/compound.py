"""Compound expressions: calls, attributes, methods, indexing and vector literals."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxError, DdxNameError, DdxShapeError, DdxTypeError, DdxValueError, suggest
from ..lang.tree import Ast
from ..limits import MAX_DIMS, check_elements, short_int
from ..ops import stack_op
from . import namespaces
from .tensor import Tensor
from .values import type_name, weak


class Compound:
    """The Evaluator's calls, attributes, methods, indexing and literals (a mixin: the Evaluator
    gives op, record, functions, surface, dtype and the program)."""

    def compound(self, node: Ast, values: list) -> Any:
        try:
            return self._compound(node, values)
        except DdxError as exc:
            raise exc.at(node.start, node.end, self.program.source)

    def _compound(self, node: Ast, values: list) -> Any:
        kind = node.kind
        if kind == "vec":
            return self.vector(node, values)
        if kind == "index":
            return self.index(node, values)
        npos = len(node.kids)
        pos, kwv = values[:npos], values[npos:]
        kw = {name: (v, p) for (name, _, p), v in zip(node.kw, kwv)}
        if kind == "call":
            fn = self.functions.get(node.value)
            if fn is None:
                if namespaces.pytorch_has("torch", node.value) or \
                        namespaces.pytorch_has("F", node.value):
                    raise DdxNameError(f"'{node.value}' is not supported by ddx",
                                       start=node.pos, end=node.pos + len(node.value))
                close = namespaces.close_name(node.value, self.functions, suggest)
                raise DdxNameError(
                    f"unknown function '{node.value}'" + (f"; did you mean '{close}'?" if close
                                                          else ""),
                    start=node.pos, end=node.pos + len(node.value))
            return fn(self, node, pos, kw)
        if kind == "str":
            return node.value
        if kind == "tuple":
            return tuple(values)
        if kind == "list":
            return list(values)
        if kind == "ellipsis":
            return Ellipsis
        if kind in ("attr", "method"):
            if not self.repl:
                got = (namespaces.get_attr(self, node, pos[0]) if kind == "attr" else
                       namespaces.call_method(self, node, pos[0], pos[1:], kw))
                if got is not NotImplemented:
                    return got
                what = f".{node.value}" + ("()" if kind == "method" else "")
                raise DdxTypeError(f"{what} belongs to the REPL language (ddx repl, ddx run)",
                                   start=node.pos, end=node.end)
            surface = self.surface
            if kind == "attr":
                return surface.get_attr(self, node, pos[0])
            return surface.call_method(self, node, pos[0], pos[1:], kw)
        raise DdxValueError(f"cannot evaluate {kind}")  # pragma: no cover

    def vector(self, node: Ast, items: list) -> Tensor:
        if not items:
            t = Tensor(np.zeros((0,), dtype=self.dtype))
            t.const = True
            return self.record(t, node)
        tensors = []
        for item in items:
            if not isinstance(item, Tensor):
                if isinstance(item, bool):
                    item = weak(item)
                else:
                    raise DdxTypeError(f"a vector holds numbers, not {type_name(item)}",
                                       start=node.start, end=node.end)
            tensors.append(item)
        shapes = {t.value.shape for t in tensors}
        if len(shapes) > 1:
            first, other = sorted(shapes, key=len)[:2]
            raise DdxShapeError(f"ragged literal: items have shapes {list(first)} and "
                                f"{list(other)}", start=node.start, end=node.end)
        item = tensors[0].value
        if item.ndim >= MAX_DIMS:
            raise DdxShapeError(f"a literal nests at most {MAX_DIMS} brackets deep (a tensor has "
                                f"at most {MAX_DIMS} dimensions)", start=node.start,
                                end=node.start + 1)
        if len(tensors) * item.size > 100_000:  # (the one check a small literal pays)
            check_elements(len(tensors) * item.size, "a [..] literal")
        if all(t.const for t in tensors):
            values = [t.value for t in tensors]
            arr = np.stack(values)
            if arr.dtype.kind == "f" or not self.repl:
                arr = arr.astype(self.dtype if arr.dtype.kind != "f" or arr.dtype == np.float64
                                 else arr.dtype)
            t = Tensor(arr)
            t.const = True
            t.op = "const"
            return self.record(t, node)
        tensors = [Tensor(np.asarray(t.value, dtype=self.dtype)) if t.weak else t for t in tensors]
        return self.op(stack_op(len(tensors)).name, node, tensors)

    def index(self, node: Ast, values: list) -> Tensor:
        base = values[0]
        if isinstance(base, tuple) and len(node.value) == 1 and not isinstance(node.value[0],
                                                                                tuple):
            i = self.int_arg(values[1], node)
            if not -len(base) <= i < len(base):
                raise DdxShapeError("tuple index out of range", start=node.pos, end=node.end)
            return base[i]
        if not isinstance(base, Tensor) or base.weak:
            raise DdxTypeError(f"cannot index {type_name(base)}", start=node.pos,
                               end=node.pos + 1)
        rest = iter(values[1:])
        cur = base
        dim = 0
        for sub in node.value:
            if dim >= cur.value.ndim:
                raise DdxShapeError(f"too many indices for tensor of dimension {base.value.ndim}",
                                    start=node.pos, end=node.end)
            size = cur.value.shape[dim]
            if isinstance(sub, tuple):
                parts = [self.int_arg(next(rest), node) if p is not None else None
                         for p in sub[1:]]
                if parts[2] is not None and parts[2] <= 0:
                    raise DdxValueError("step must be greater than zero", start=node.pos)
                sl = slice(*parts)
                if sl.indices(size) == (0, size, 1):
                    dim += 1
                    continue
                key = (slice(None),) * dim + (sl,)
                cur = self.op("slice", node, [cur], {"key": key})
                dim += 1
            else:
                i = self.int_arg(next(rest), node)
                if not -size <= i < size:
                    raise DdxShapeError(f"index {short_int(i)} is out of bounds for dimension "
                                        f"{dim} with size {size}", start=node.pos, end=node.end)
                key = (slice(None),) * dim + (i,)
                cur = self.op("select", node, [cur], {"key": key})
        return cur

    def int_arg(self, value: Any, node: Ast) -> int:
        if isinstance(value, Tensor) and value.value.size == 1:
            v = value.value.item()
            if float(v).is_integer():
                return int(v)
        raise DdxTypeError("indices must be integers", start=node.pos, end=node.end)
