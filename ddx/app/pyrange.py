"""range(): the numbers as a list (so that every place iterating, indexing or measuring a list
takes it as it is), which prints as Python prints a range: `range(0, 3)`, `range(1, 5, 2)`."""

from __future__ import annotations


class RangeList(list):
    """A list of a range's numbers that keeps the range's own text for print and repr."""

    __slots__ = ("range_text",)

    def __init__(self, numbers=(), r: range | None = None):
        super().__init__(numbers)
        self.range_text = None if r is None else repr(r)  # (a copy made as type(x)(x): a list)


__all__ = ["RangeList"]
