"""The operators on tensors and numbers: broadcasting checked, numbers folded, '@' by shape."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxShapeError, DdxTypeError, DdxValueError
from ..fmt import number as fmt_number
from ..lang.lowering import BINARY, COMPARE
from ..lang.tree import Ast
from ..limits import check_elements
from ..ops import OPS
from .calls_linalg import matmul
from .tensor import Tensor
from .values import DType, PyBuiltinType, fold_numbers, type_name, weak

_PYTHON_OPS = frozenset(("is", "is not", "in", "not in"))
_BITWISE = {"&": "bitwise_and", "|": "bitwise_or"}


def _python_op(sym: str, a: Any, b: Any) -> bool:
    """``is`` is identity (a plain number is its value); ``in`` is membership, by value for
    numbers, as Python's ``==`` decides it for them."""
    if sym in ("is", "is not"):
        same = a is b or (isinstance(a, Tensor) and isinstance(b, Tensor) and a.weak and
                          b.weak and a.value.item() == b.value.item()) or (
            isinstance(a, DType) and a == b) or (  # (torch's dtypes are one object each)
            isinstance(b, PyBuiltinType) and b == a)  # (type(3) is int)
        return same if sym == "is" else not same
    if isinstance(b, Tensor) and not b.weak:
        found = bool((b.value == (a.value if isinstance(a, Tensor) else a)).any())
    elif isinstance(b, (list, tuple, set, dict, str)):
        if isinstance(b, str):
            found = isinstance(a, str) and a in b
        else:
            key = a.value.item() if isinstance(a, Tensor) and a.weak else a
            found = any(key is item or (isinstance(item, Tensor) and item.weak and
                                        item.value.item() == key) or
                        (not isinstance(item, Tensor) and item == key and
                         type(item) is not bool) for item in b)
    elif hasattr(b, "py_contains"):  # (key in an nn.ModuleDict)
        found = bool(b.py_contains(a))
    else:
        raise DdxTypeError(f"argument of type '{type_name(b)}' is not iterable")
    return found if sym == "in" else not found


def zero_division(sym: str, x, y, node: Ast) -> DdxValueError:
    """Python's ZeroDivisionError for ``x sym 0`` on two Python numbers, in its words."""
    both_int = type(x) is int and type(y) is int
    text = ("0.0 cannot be raised to a negative power" if sym == "^" else
            ("division by zero" if both_int else "float division by zero") if sym == "/" else
            ("integer division or modulo by zero" if both_int else
             "float floor division by zero") if sym == "//" else
            "integer modulo by zero" if both_int else "float modulo")
    exc = DdxValueError(text, start=node.pos, end=node.pos + len(node.value))
    exc.python_kind = "ZeroDivisionError"
    return exc


class Arithmetic:
    """The Evaluator's binary and unary operators (a mixin: the Evaluator gives op, label and
    warnings)."""

    def tensor_operand(self, value: Any, node: Ast, side: str) -> Tensor:
        if isinstance(value, Tensor):
            return value
        if self.repl and isinstance(value, list) and value and hasattr(value, "node"):
            from .compound import numeric  # (a REPL list literal of numbers: ddx's vector)

            if numeric(value):
                return self.literal_tensor(value)
        if isinstance(value, bool):
            return weak(value)
        if isinstance(value, (int, float)):  # a Python number: .item(), .numel(), len(...)
            return weak(getattr(value, "raw", value))
        raise DdxTypeError(f"'{node.value}' needs numbers or tensors, got {type_name(value)} "
                           f"on the {side}", start=node.pos, end=node.pos + 1)

    def check_broadcast(self, node: Ast, a: Tensor, b: Tensor) -> None:
        sa, sb = a.value.shape, b.value.shape
        if sa == sb or not sa or not sb:
            return
        n = max(len(sa), len(sb))
        pa = (1,) * (n - len(sa)) + sa
        pb = (1,) * (n - len(sb)) + sb
        for i in range(n - 1, -1, -1):
            if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
                raise DdxShapeError(
                    f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) at "
                    f"non-singleton dimension {i}",
                    start=node.pos, end=node.pos + len(node.value),
                    hint=f"'{node.value}' got shapes {list(sa)} and {list(sb)}")
        size = 1
        for x, y in zip(pa, pb):  # a broadcast can make more than either input holds
            size *= max(x, y)
        if size > a.value.size and size > b.value.size:
            check_elements(size, f"'{node.value}' of shapes {list(sa)} and {list(sb)}")

    def binary(self, node: Ast, a: Any, b: Any) -> Tensor:
        sym = node.value
        if sym in _PYTHON_OPS:
            return _python_op(sym, a, b)
        if self.repl and not (isinstance(a, Tensor) and isinstance(b, Tensor)):
            got = self.surface.python_binary(self, node, sym, a, b)  # strings, lists
            if got is not NotImplemented:
                return got
        a = self.tensor_operand(a, node, "left")
        b = self.tensor_operand(b, node, "right")
        if sym in _BITWISE:
            return self.bitwise(node, sym, a, b)
        if sym in COMPARE:
            name, swapped = COMPARE[sym]
            if a.weak and not b.weak:
                return self.compare(node, swapped, b, a)
            return self.compare(node, name, a, b)
        if a.weak and b.weak:
            return self.fold(node, sym, a.value.item(), b.value.item())
        if sym == "@":
            return self.matmul(node, a, b)
        if sym == "//":  # floor division: values only (PyTorch records no usable derivative)
            if not (a.weak or b.weak):
                self.check_broadcast(node, a, b)
            if a.value.dtype.kind in "iub" and b.value.dtype.kind in "iub" and \
                    not np.all(b.value):
                raise DdxRuntimeError("ZeroDivisionError", start=node.pos, end=node.end)
            return self.op("floor_divide", node, [a, b])
        if sym == "-" and a.value.dtype == np.bool_ and b.value.dtype == np.bool_ and \
                not (a.weak and b.weak):
            raise DdxRuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                                  "supported. Use the `^` or `logical_xor()` operator instead.",
                                  start=node.pos, end=node.end)
        if not (a.weak or b.weak):
            self.check_broadcast(node, a, b)
        plan = BINARY.get((sym, a.weak, b.weak))
        if plan is None:
            raise DdxValueError(f"unknown operator {sym!r}")  # pragma: no cover - grammar forbids
        first = a if plan.first == "a" else b
        if plan.first == "1/b":
            first = self.op("reciprocal", node, [b])
            first.label = f"1/{self.label(node.kids[1])}"
        if plan.key is not None:  # the plain number is a keyword argument: rsub, pow_scalar
            number = a if b is first else b
            if number.value.dtype.kind == "f" and first.value.dtype.kind in "biu":
                first = Tensor(first.value.astype(self.dtype))  # (arange(5) ** 2.0 is float)
            return self.op(plan.op, node, [first], {plan.key: number.value.item()})
        return self.op(plan.op, node, [first, a if plan.second == "a" else b])

    def compare(self, node: Ast, name: str, a: Tensor, b: Tensor) -> Any:
        """A comparison: two plain numbers give a Python bool; tensors a bool tensor that does
        not require grad (the row is not differentiable)."""
        if a.weak and b.weak:
            return bool(OPS[name].fn(a.value.item(), b.value.item()))
        if not (a.weak or b.weak):
            self.check_broadcast(node, a, b)
        return self.op(name, node, [a, b])

    def fold(self, node: Ast, sym: str, x, y) -> Tensor:
        """Both operands are plain numbers: Python arithmetic, as PyTorch would see it (in the
        REPL's Python a division by zero is Python's ZeroDivisionError)."""
        if self.repl and (y == 0 and sym in ("/", "//", "%") or sym == "^" and x == 0 and y < 0):
            raise zero_division(sym, x, y, node)
        r = fold_numbers(sym, x, y)
        if r is None:
            raise DdxTypeError("'@' needs tensors, got two numbers",
                               start=node.pos, end=node.pos + 1)
        if not math.isfinite(r) and math.isfinite(x) and math.isfinite(y):
            self.warnings.append(f"{self.label(node)} gives {fmt_number(r)}")
        return weak(r)

    def matmul(self, node: Ast, a: Tensor, b: Tensor) -> Tensor:
        return matmul(self, node, a, b)  # (PyTorch's matmul: ddx/graph/calls_linalg.py)

    def bitwise(self, node: Ast, sym: str, a: Tensor, b: Tensor) -> Any:
        """``a & b``, ``a | b``: Python's on two plain ints or bools, else torch.bitwise_and /
        bitwise_or (a bool tensor's is logical; a float tensor's PyTorch's error)."""
        if a.weak and b.weak:
            x, y = a.value.item(), b.value.item()
            if not (isinstance(x, int) and isinstance(y, int)):
                raise DdxTypeError(f"unsupported operand type(s) for {sym}: "
                                   f"'{type(x).__name__}' and '{type(y).__name__}'",
                                   start=node.pos, end=node.end)
            got = x & y if sym == "&" else x | y
            return got if type(got) is bool else weak(got)
        return self.functions[_BITWISE[sym]](self, node, [a, b], {})

    def unary(self, node: Ast, a: Any) -> Any:
        own = getattr(a, "py_unary", None)  # (a value with its own meaning of -x: an array)
        if own is not None:
            return own(node.value)
        a = self.tensor_operand(a, node, "right")
        if node.value == "+":
            return a
        if node.value == "~":  # (Python's on a plain int or bool; else torch.bitwise_not)
            if not a.weak:
                if a.value.dtype.kind == "f":
                    raise DdxTypeError("~ (operator.invert) is only implemented on integer and "
                                       "Boolean-type tensors", start=node.pos, end=node.end)
                return self.functions["bitwise_not"](self, node, [a], {})
            x = a.value.item()
            if not isinstance(x, int):
                raise DdxTypeError(f"bad operand type for unary ~: '{type(x).__name__}'",
                                   start=node.pos, end=node.end)
            return weak(~x)
        if a.weak:
            return weak(-a.value.item())
        if a.value.dtype == np.bool_:
            raise DdxRuntimeError("Negation, the `-` operator, on a bool tensor is not "
                                  "supported. If you are trying to invert a mask, use the `~` "
                                  "or `logical_not()` operator instead.",
                                  start=node.pos, end=node.end)
        return self.op("neg", node, [a])
