"""Jacobians and Hessians as labelled grids: a row per output (or first input) element, a column
per input element, as many columns as the width holds (the middle ones give way to '…')."""

from __future__ import annotations

import itertools

import numpy as np
from rich import box
from rich.cells import cell_len
from rich.console import Group
from rich.table import Table
from rich.text import Text

from .. import fmt
from ..textsafe import safe_text
from . import numbers
from .fit import ELLIPSIS, STYLE_BAD, Fitted, table_width

MAX_GRID_ROWS = 24


def element_labels(name: str, shape: tuple) -> list[str]:
    """``x`` for a scalar, ``x[0] x[1]`` for a vector, ``A[0,1]`` for a matrix."""
    if not shape:
        return [safe_text(name)]
    return [f"{safe_text(name)}[{','.join(map(str, idx))}]"
            for idx in itertools.product(*(range(n) for n in shape))]


def _cell(v, precision: int) -> Text:
    text = Text(numbers.scalar(v, precision), justify="right")
    if isinstance(v, float) and not np.isfinite(v):
        text.stylize(STYLE_BAD)
    return text


def _pick(n: int, keep: int) -> list[int | None]:
    """Indices 0..n-1, or the first and last of them around a None when more than ``keep``."""
    if n <= keep:
        return list(range(n))
    head = (keep + 1) // 2
    return list(range(head)) + [None] + list(range(n - (keep - head), n))


def grid(corner: str, rows: list[str], cols: list[str], matrix: np.ndarray, width: int,
         precision: int) -> Table:
    """A labelled grid that fits ``width``: middle columns (and rows past MAX_GRID_ROWS) give
    way to an ellipsis."""
    m = np.asarray(matrix, dtype=np.float64).reshape(len(rows), len(cols))
    shown_rows = _pick(len(rows), MAX_GRID_ROWS)
    real_rows = [i for i in shown_rows if i is not None]
    texts = {i: [numbers.scalar(v, precision) for v in m[i].tolist()] for i in real_rows}
    row_w = max(cell_len(corner), *(cell_len(rows[i]) for i in real_rows))
    col_w = [max(cell_len(c), *(len(texts[i][j]) for i in real_rows))
             for j, c in enumerate(cols)]
    keep = len(cols)
    while keep > 1:
        picked = _pick(len(cols), keep)
        widths = [row_w] + [col_w[j] if j is not None else 1 for j in picked]
        if table_width(widths) <= width:
            break
        keep -= 1
    picked = _pick(len(cols), keep)
    table = Table(box=box.SIMPLE_HEAD, expand=False, show_edge=True)
    table.add_column(Text(corner, style="dim"), no_wrap=True)
    for j in picked:
        table.add_column(Text(ELLIPSIS if j is None else cols[j]), justify="right", no_wrap=True,
                         overflow="ellipsis")
    for i in shown_rows:
        if i is None:
            table.add_row(ELLIPSIS, *[ELLIPSIS] * len(picked))
            continue
        table.add_row(Text(rows[i], style="bold"),
                      *[Text(ELLIPSIS) if j is None else _cell(m[i, j], precision) for j in picked])
    return table


def jacobian_grids(out_name: str, out_shape: tuple, jac: dict, leaves: dict, precision: int):
    """The Jacobian: one grid for scalar inputs together, else one grid per input."""
    rows = element_labels(out_name, out_shape)
    n_out = len(rows)

    def build(width: int) -> Group:
        parts = []
        scalars = all(np.ndim(leaves[name]) == 0 for name in jac)
        if scalars:
            matrix = np.column_stack([np.asarray(j, dtype=float).reshape(n_out) for j in
                                      jac.values()]) if jac else np.zeros((n_out, 0))
            cols = [safe_text(n) for n in jac]
            parts.append(grid(f"d{out_name}/d·", rows, cols, matrix, width, precision))
            return Group(*parts)
        for name, block in jac.items():
            shape = np.shape(leaves[name])
            cols = element_labels(name, shape)
            parts.append(Text(f"d{safe_text(out_name)}/d{safe_text(name)}  (shape "
                              f"{fmt.shape(block)})", style="bold blue"))
            parts.append(grid(f"{out_name} \\ {name}", rows, cols,
                              np.asarray(block).reshape(n_out, len(cols)), width, precision))
        return Group(*parts)
    return Fitted(build)


def hessian_grids(out_name: str, hess: dict, leaves: dict, precision: int):
    """The Hessian: one symmetric grid when every input is a scalar, else one per input pair."""
    def build(width: int) -> Group:
        names = list(hess)
        if all(np.ndim(leaves[n]) == 0 for n in names):
            matrix = np.array([[float(np.asarray(hess[a][b])) for b in names] for a in names])
            labels = [safe_text(n) for n in names]
            return Group(grid(f"d²{out_name}", labels, labels, matrix, width, precision))
        parts = []
        for a in names:
            for b, block in hess[a].items():
                ra = element_labels(a, np.shape(leaves[a]))
                cb = element_labels(b, np.shape(leaves[b]))
                parts.append(Text(f"d²{safe_text(out_name)}/d{safe_text(a)}d{safe_text(b)}",
                                  style="bold blue"))
                parts.append(grid(f"{a} \\ {b}", ra, cb,
                                  np.asarray(block).reshape(len(ra), len(cb)), width, precision))
        return Group(*parts)
    return Fitted(build)
