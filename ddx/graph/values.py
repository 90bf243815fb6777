"""The plain values the evaluator passes around: numbers, dtypes, ``torch``, ``no_grad``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import DdxTypeError
from .tensor import AccumulateGrad, Function, Tensor

DTYPES = {"float64": np.float64, "float32": np.float32, "int64": np.int64, "double": np.float64,
          "float": np.float32, "long": np.int64, "bool": np.bool_}
CONSTANTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan}


class NoGrad:
    """The ``no_grad`` context: ``with no_grad: ...`` records no graph."""

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


NO_GRAD = NoGrad()


def weak(value: float | int | bool) -> Tensor:
    """A Python-number constant (PyTorch's wrapped scalar)."""
    t = Tensor(np.asarray(value), False, weak=True)
    t.const = True
    return t


def fold_numbers(sym: str, x, y) -> float | None:
    """``x sym y`` for two plain numbers, as Python (and so PyTorch) computes it; None for '@'."""
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
