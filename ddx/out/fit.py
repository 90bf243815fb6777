"""Laying views out at the width they are printed at: tables drop or fold their least important
columns first and say so; numbers are never cut (an array wraps between its elements).

A view is a ``Fitted`` renderable: Rich asks it to render at the console's width (a terminal's,
80 in a pipe, a notebook's), and it builds its table or tree for exactly that width."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from rich import box
from rich.cells import cell_len
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from .. import fmt
from . import numbers

ELLIPSIS = "…"
STYLE_BAD = "bold red"


class Fitted:
    """A renderable made for the width it is rendered at: ``build(width) -> renderable``."""

    def __init__(self, build: Callable[[int], object]) -> None:
        self.build = build

    def __rich_console__(self, console, options):
        yield self.build(max(options.max_width, 10))

    def __rich_measure__(self, console, options) -> Measurement:
        return Measurement(1, options.max_width)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        from .notebook import mimebundle, text

        return mimebundle(self, text(self), include, exclude)


@dataclass
class Column:
    """One column of a fitted table.

    ``kind``: ``"number"`` cells are values (arrays, numbers, None) or a ready ``Text``;
    ``"name"`` cells fold onto more lines; ``"word"`` cells are cut with an ellipsis.
    ``least``: the narrowest the column may become. ``styles``: a style per cell."""

    header: str
    cells: list = field(default_factory=list)
    kind: str = "word"
    least: int = 4
    styles: list = field(default_factory=list)
    justify: str = "left"


def _natural(col: Column, precision: int) -> int:
    widest = cell_len(col.header)
    for cell in col.cells:
        if col.kind == "number" and not isinstance(cell, Text):
            got = numbers.lines(cell, precision, 60)
            widest = max(widest, max(map(cell_len, got)))
        else:
            text = cell.plain if isinstance(cell, Text) else str(cell)
            widest = max([widest, *map(cell_len, text.split("\n"))])
    return widest


def _least_number(col: Column, precision: int) -> int:
    """A number column is never narrower than its longest scalar (or a short array line)."""
    least = col.least
    for cell in col.cells:
        if not isinstance(cell, Text):
            least = max(least, numbers.narrowest(cell, precision))
    return least


def table_width(widths: list[int]) -> int:
    """What a ``box.SIMPLE_HEAD`` table with these column widths takes: a space of padding on
    each side of every column, and an edge or divider between and around them."""
    return sum(widths) + 3 * len(widths) + 1


def fit_table(title, columns: list[Column], width: int, precision: int,
              plan: list[tuple] = ()) -> list:
    """The table (and a note naming what was left out) for ``width`` cells.

    ``plan`` lists, in order, what may give way: ``("drop", i)`` leaves column i out,
    ``("shrink", i, n)`` narrows it toward n cells (its least width if n is left out), only
    as far as needed. Whatever is left over after the plan,
    every column shrinks toward its least width, the widest first."""
    widths = [_natural(c, precision) for c in columns]
    least = [(_least_number(c, precision) if c.kind == "number" else c.least) for c in columns]
    active = list(range(len(columns)))
    dropped: list[str] = []

    def total() -> int:
        return table_width([widths[i] for i in active])

    for action, i, *floor in plan:
        if total() <= width:
            break
        if action == "drop" and i in active:
            active.remove(i)
            dropped.append(columns[i].header)
        elif action == "shrink":
            lowest = max([least[i], *floor])
            widths[i] = max(lowest, min(widths[i], widths[i] - (total() - width)))
    for floor in (least, [w if c.kind == "number" else min(w, 4) for c, w in zip(columns, least)]):
        while total() > width:  # the widest column that can still give a cell
            can = [i for i in active if widths[i] > floor[i]]
            if not can:
                break
            i = max(can, key=lambda k: widths[k] - floor[k])
            widths[i] -= 1
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", expand=False)
    rendered = []
    for i in active:
        col = columns[i]
        cells = []
        for k, cell in enumerate(col.cells):
            style = col.styles[k] if k < len(col.styles) else ""
            if col.kind == "number" and not isinstance(cell, Text):
                t = Text("\n".join(numbers.fitted(cell, precision, widths[i])), style=style)
                if cell is not None and fmt.nonfinite(cell):
                    t.stylize(STYLE_BAD)
            else:
                t = cell.copy() if isinstance(cell, Text) else Text(str(cell), style=style)
            cells.append(t)
        table.add_column(Text(_cut(col.header, widths[i])), width=widths[i], justify=col.justify,
                         no_wrap=col.kind != "name",
                         overflow="fold" if col.kind == "name" else "ellipsis")
        rendered.append(cells)
    for row in zip(*rendered):
        table.add_row(*row)
    parts: list = [table]
    if dropped:
        parts.append(Text(f"{ELLIPSIS} not shown: " + ", ".join(dropped),
                          style="dim"))
    return parts


def _cut(text: str, width: int) -> str:
    return text if cell_len(text) <= width else text[: max(width - 1, 0)] + ELLIPSIS


def cut(text: Text, width: int) -> Text:
    """A one-line text cut to ``width`` cells, an ellipsis marking the cut."""
    if text.cell_len <= width:
        return text
    out = text.copy()
    out.truncate(max(width, 1), overflow="ellipsis")
    return out
