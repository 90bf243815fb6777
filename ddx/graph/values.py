"""The plain values the evaluator passes around: numbers, dtypes, ``torch``, ``no_grad``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import DdxTypeError
from .tensor import AccumulateGrad, Function, Tensor

DTYPES = {"float64": np.float64, "float32": np.float32, "int64": np.int64, "double": np.float64,
          "float": np.float32, "long": np.int64, "bool": np.bool_, "int32": np.int32,
          "int16": np.int16, "short": np.int16, "int8": np.int8, "uint8": np.uint8,
          "int": np.int32}
CONSTANTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan}


class NoGrad:
    """The ``no_grad`` context: ``with no_grad: ...`` records no graph."""

    grad_enabled = False

    def __repr__(self) -> str:
        return "<torch.autograd.grad_mode.no_grad object>"


class DType:
    __slots__ = ("np",)

    def __init__(self, np_dtype) -> None:
        self.np = np.dtype(np_dtype)

    def __repr__(self) -> str:
        return f"torch.{self.np.name}"

    def __eq__(self, other) -> bool:
        return isinstance(other, DType) and other.np == self.np

    def __hash__(self) -> int:
        return hash(self.np)


class PyBuiltinType(DType):
    """Python's float, int and bool as REPL values: as a dtype= PyTorch reads them as
    float64, int64 and bool (torch.float and torch.int are float32 and int32), and they print
    as Python's classes."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        super().__init__({"float": np.float64, "int": np.int64, "bool": np.bool_}[name])
        self.name = name

    def __repr__(self) -> str:
        return f"<class '{self.name}'>"

    def __eq__(self, other) -> bool:  # (type(x) == float: the REPL's type() of a float)
        return isinstance(other, PyBuiltinType) and other.name == self.name or \
            getattr(other, "short", None) == self.name

    def __hash__(self) -> int:
        return hash(self.name)


NO_GRAD = NoGrad()


class ReturnTypes(tuple):
    """A named result, as ``torch.return_types.max(values=..., indices=...)``: a tuple whose
    items are also attributes."""

    def __new__(cls, name: str, fields: tuple[str, ...], items) -> ReturnTypes:
        obj = super().__new__(cls, items)
        obj.name = name
        obj.fields = fields
        return obj

    def field(self, name: str) -> Any:
        return self[self.fields.index(name)]


class NamedTuple(ReturnTypes):
    """A Python namedtuple of PyTorch's (forward_ad's UnpackedDualTensor), shown on one line as
    Python shows one: ``UnpackedDualTensor(primal=..., tangent=...)``."""


class Starred:
    """``*xs`` (``**kw`` when ``double``) in a call's arguments, before it is spread out."""

    __slots__ = ("value", "double")

    def __init__(self, value: Any, double: bool) -> None:
        self.value, self.double = value, double


class ControlFlow(Exception):  # noqa: N818 - Python's own names for these are statements
    """break, continue and return, on their way to the loop or call that takes them."""


class Break(ControlFlow):
    pass


class Continue(ControlFlow):
    pass


class Return(ControlFlow):
    def __init__(self, value: Any = None) -> None:
        super().__init__()
        self.value = value


def weak(value: float | int | bool) -> Tensor:
    """A Python-number constant (PyTorch's wrapped scalar)."""
    t = Tensor(np.asarray(value), False, weak=True)
    t.const = True
    return t


def fold_numbers(sym: str, x, y) -> float | int | None:
    """``x sym y`` for two plain numbers, as Python (and so PyTorch) computes it: ints stay
    ints where Python keeps them (+ - * // %, and ** to a non-negative int); None for '@'."""
    x = int(x) if type(x) is bool else x  # (True + True is 2, as Python's)
    y = int(y) if type(y) is bool else y
    if type(x) is int and type(y) is int and sym in ("+", "-", "*", "//", "%") or (
            sym == "^" and type(x) is int and type(y) is int and 0 <= y <= 64):
        try:
            r = (x + y if sym == "+" else x - y if sym == "-" else x * y if sym == "*" else
                 x // y if sym == "//" else x % y if sym == "%" else x ** y)
        except ZeroDivisionError:
            r = None
        if r is not None and -2**63 <= r < 2**63:
            return r
    x, y = float(x), float(y)
    with np.errstate(all="ignore"):
        if sym == "+":
            return x + y
        if sym == "-":
            return x - y
        if sym == "*":
            return x * y
        if sym == "/":
            return float(np.float64(x) / np.float64(y))
        if sym == "//":
            return float(np.floor_divide(np.float64(x), np.float64(y)))
        if sym == "%":
            return float(np.remainder(np.float64(x), np.float64(y)))
        if sym == "^":
            try:
                r = x ** y
            except (OverflowError, ZeroDivisionError):
                r = float(np.power(np.float64(x), np.float64(y)))
            return math.nan if isinstance(r, complex) else r
    return None


def truth(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, Tensor) and value.value.size == 1:
        return bool(value.value.item())
    raise DdxTypeError(f"expected true or false, got {type_name(value)}")


def py_type(value: Any) -> str:
    """Python's name for a value's type, as PyTorch's messages show it."""
    if isinstance(value, Tensor):
        return "int" if value.value.dtype.kind in "iu" else (
            "bool" if value.value.dtype.kind == "b" else "float")
    return "NoneType" if value is None else type(value).__name__


def type_name(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, Tensor):
        return "a number" if value.weak else f"a tensor of shape {list(value.shape)}"
    if isinstance(value, (Function, AccumulateGrad)):
        return f"<{value.name}>"
    if isinstance(value, tuple):
        return "a tuple"
    return type(value).__name__
