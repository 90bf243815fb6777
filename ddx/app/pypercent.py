"""``"..." % values`` as Python formats it when the values are tensors: a one-element tensor
is a number to ``%f``/``%e``/``%g`` (Tensor.__float__), ``%d``/``%i``/``%x`` (__int__ and, of
an integer tensor, __index__) and its str/repr to ``%s``/``%r``; other values as they are
(numbers as numbers, anything else as its str)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..graph.tensor import Tensor

MANY = "only one element tensors can be converted to Python scalars"


class _Arg:
    """One value of a % format, with the conversions Python asks a tensor for."""

    def __init__(self, text: str, number: Any) -> None:
        self.text, self.number = text, number

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__

    def __float__(self) -> float:
        if self.number is None:
            raise ValueError(MANY)
        return float(self.number)

    def __int__(self) -> int:
        if self.number is None:
            raise ValueError(MANY)
        return int(self.number)

    def __index__(self) -> int:
        if not isinstance(self.number, int) or isinstance(self.number, bool):
            return self.__int__()
        return self.number


def arg(value: Any, number: Any, text: Callable[[Any], str]) -> Any:
    """What Python's % sees for ``value`` (``number``: its number_of, or None)."""
    if number is not None and not isinstance(value, Tensor):
        return number
    if isinstance(value, Tensor):
        one = value.value.size == 1
        return _Arg(text(value), value.value.reshape(-1)[0].item() if one else None)
    return text(value)


__all__ = ["arg"]
