"""range(): the numbers as a list (so that every place iterating, indexing or measuring a list
takes it as it is), which prints as Python prints a range: `range(0, 3)`, `range(1, 5, 2)`."""

from __future__ import annotations


class RangeList(list):
    """A list of a range's numbers that keeps the range's own text for print and repr."""

    __slots__ = ("range_text",)

    def __init__(self, numbers, r: range):
        super().__init__(numbers)
        self.range_text = repr(r)


__all__ = ["RangeList"]
