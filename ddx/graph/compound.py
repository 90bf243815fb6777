"""Compound expressions: calls, attributes, methods, indexing and vector literals."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..errors import DdxError, DdxNameError, DdxShapeError, DdxTypeError, DdxValueError, suggest
from ..lang.tree import Ast
from ..limits import MAX_DIMS, check_elements
from ..ops import stack_op
from . import indexing, namespaces
from .functions import LISTS
from .tensor import Tensor
from .values import Starred, type_name, weak

_PYTHON = frozenset(("lambda", "ifexp", "boolop", "not", "fstr", "comp", "dict", "set", "star",
                     "dstar", "walrus"))

# Python's builtins ddx does not provide (input, open, ...): named as unknown, with no
# look-alike suggested (input is not a misspelt put)
_PYTHON_BUILTINS = frozenset(dir(builtins))


def _spread(node: Ast, pos: list, kw: dict) -> tuple[list, dict]:
    """f(*xs, **opts): the starred values spread into the arguments."""
    out: list = []
    kw = dict(kw)
    for v in pos:
        if type(v) is not Starred:
            out.append(v)
        elif v.double:
            if not isinstance(v.value, dict):
                raise DdxTypeError("argument after ** must be a mapping", start=node.pos,
                                   end=node.end)
            kw.update({str(k): (val, node.pos) for k, val in v.value.items()})
        else:
            if isinstance(v.value, str):  # (print(*"ab"): its characters)
                out.extend(type(v.value)(c) for c in v.value)
                continue
            if not isinstance(v.value, (list, tuple, range, dict)):
                raise DdxTypeError("argument after * must be an iterable", start=node.pos,
                                   end=node.end)
            out.extend(v.value)
    return out, kw


def spread_items(ev, node: Ast, values: list) -> list:
    """A list or tuple display's starred items spread into it (a tensor as its rows)."""
    out: list = []
    for v in values:
        if type(v) is not Starred:
            out.append(v)
        elif isinstance(v.value, Tensor) and not v.value.weak and v.value.value.ndim:
            t = v.value
            out.extend(ev.op("select", node, [t], {"key": (i,)}, grad_fn="UnbindBackward0")
                       for i in range(t.value.shape[0]))
        elif v.double or not isinstance(v.value, (list, tuple, range, dict, str)):
            raise DdxTypeError(f"Value after * must be an iterable, not {type_name(v.value)}",
                               start=node.start, end=node.end)
        else:
            out.extend(v.value)
    return out


class Literal(list):
    """A ``[..]`` literal in the REPL: a Python list, made a tensor where a tensor is taken
    (an assignment of numbers, ``x = [1., 2.]``, is a leaf, as in the expression language)."""

    __slots__ = ("node",)


def numeric(items: list) -> bool:
    """Numbers only, nested lists included (explicit stack)."""
    stack = [items]
    while stack:
        for item in stack.pop():
            if type(item) is Literal:
                stack.append(item)
            elif not (isinstance(item, bool) or isinstance(item, Tensor) and item.const):
                return False
    return True


class Compound:
    """The Evaluator's calls, attributes, methods, indexing and literals (a mixin: the Evaluator
    gives op, record, functions, surface, dtype and the program)."""

    def unknown_function(self, node: Ast) -> DdxNameError:
        if namespaces.pytorch_has("torch", node.value) or namespaces.pytorch_has("F", node.value):
            return DdxNameError(f"'{node.value}' is not supported by ddx", start=node.pos,
                                end=node.pos + len(node.value))
        close = None if node.value in _PYTHON_BUILTINS else \
            namespaces.close_name(node.value, self.functions, suggest)
        return DdxNameError(f"unknown function '{node.value}'" + (
            f"; did you mean '{close}'?" if close else ""), start=node.pos,
            end=node.pos + len(node.value))

    def callee(self, node: Ast) -> None:
        """A REPL call's function looked up before its arguments, as Python does: an unknown
        name is the error even where an argument is unknown too."""
        name = node.value
        if name in self.env or name in self.functions or \
                self.surface.builtin(name, self.functions) is not None:
            return
        raise self.unknown_function(node)

    def compound(self, node: Ast, values: list) -> Any:
        try:
            return self._compound(node, values)
        except DdxError as exc:
            raise exc.at(node.start, node.end, self.program.source)

    def _compound(self, node: Ast, values: list) -> Any:
        kind = node.kind
        if kind in ("vec", "tuple") and self.repl and any(type(v) is Starred for v in values):
            values = spread_items(self, node, values)  # [*xs, 1], (*xs, 1)
        if kind == "vec":
            return self.vector(node, values)
        if kind == "index":
            return self.index(node, values)
        if kind in _PYTHON:  # the REPL's Python: lambdas, f-strings, comprehensions, ...
            if not self.repl:
                raise DdxTypeError("this belongs to the REPL language (ddx repl, ddx run)",
                                   start=node.start, end=node.end)
            return self.surface.compound(self, node, values)
        npos = len(node.kids)
        pos, kwv = values[:npos], values[npos:]
        kw = {name: (v, p) for (name, _, p), v in zip(node.kw, kwv)}
        if self.repl and any(type(v) is Starred for v in pos):
            pos, kw = _spread(node, pos, kw)
        if kind == "call" and self.repl:
            value = self.env.get(node.value)
            if value is not None and not isinstance(value, Tensor):  # the user's function
                return self.surface.call_value(self, node, value, pos, kw)
            got = self.surface.builtin(node.value, self.functions)  # len, range, print, ...
            if got is not None:
                return self.surface.call_value(self, node, got, pos, kw)
            pos = self.tensors_for(node.value, pos)
        if kind == "call_value":
            if not self.repl:
                raise DdxTypeError("calling a value belongs to the REPL language (ddx repl, "
                                   "ddx run)", start=node.start, end=node.end)
            return self.surface.call_value(self, node, pos[0], pos[1:], kw)
        if kind == "call":
            fn = self.functions.get(node.value)
            if fn is None:
                raise self.unknown_function(node)
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
            args = pos[1:]
            if isinstance(pos[0], (Tensor, namespaces.Namespace)):  # ddx's functions
                args = self.tensors_for(node.value, args)
            return surface.call_method(self, node, pos[0], args, kw)
        raise DdxValueError(f"cannot evaluate {kind}")  # pragma: no cover

    def vector(self, node: Ast, items: list) -> Tensor:
        if self.repl:  # the REPL's Python: a list (a tensor where ddx's functions take one)
            lit = Literal(weak(i) if type(i) in (int, float) or isinstance(i, float) and
                          not isinstance(i, bool) else i for i in items)
            lit.node = node
            return lit
        return self.tensor_literal(node, items)

    def literal_tensor(self, lit: Literal) -> Tensor:
        """A list literal of numbers as ddx's vector (its nested lists first)."""
        items = [self.literal_tensor(i) if type(i) is Literal else i for i in lit]
        return self.tensor_literal(lit.node, items)

    def tensors_for(self, name: str, args: list) -> list:
        """The arguments of one of ddx's functions: list literals of numbers become tensors,
        except for the functions that take lists (cat([a, b]), ones([2, 3])); an empty list
        stays a list (nn.ModuleList([]))."""
        if name in LISTS:
            return args
        return [self.literal_tensor(a) if type(a) is Literal and a and numeric(a) else a
                for a in args]

    def tensor_literal(self, node: Ast, items: list) -> Tensor:
        if not items:
            t = Tensor(np.zeros((0,), dtype=self.dtype))
            t.const = True
            return self.record(t, node)
        tensors = []
        for item in items:
            if not isinstance(item, Tensor):
                if isinstance(item, (bool, int, float)):  # (an .item(): a Python number)
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
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return int(value)  # (a Python int a method returned: w[:out.numel()])
        if isinstance(value, Tensor) and value.value.size == 1:
            v = value.value.item()
            if float(v).is_integer():
                return int(v)
        raise DdxTypeError("indices must be integers", start=node.pos, end=node.end)
