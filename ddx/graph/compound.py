"""Compound expressions: calls, attributes, methods, indexing and vector literals."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxError, DdxNameError, DdxShapeError, DdxTypeError, DdxValueError, suggest
from ..lang.tree import Ast
from ..limits import MAX_DIMS, check_elements
from ..ops import stack_op
from . import indexing, namespaces
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
        return indexing.index(self, node, values)

    def int_arg(self, value: Any, node: Ast) -> int:
        if isinstance(value, Tensor) and value.value.size == 1:
            v = value.value.item()
            if float(v).is_integer():
                return int(v)
        raise DdxTypeError("indices must be integers", start=node.pos, end=node.end)
