"""The terminal plot: f and its derivatives in braille dots (Rich Text), axes, legend, marks."""

from __future__ import annotations

import math

import numpy as np
from rich.text import Text

from ..fmt import short
from ..textsafe import safe_text
from .plotdata import PlotData, y_range


class Plot(PlotData):
    """A sampled plot that draws itself in a terminal or notebook and saves itself to a file."""

    def __rich_console__(self, console, options):
        color = console.color_system is not None and not console.no_color
        yield render(self, width=options.max_width, color=color)

    def save(self, path: str) -> None:
        """Write the plot to a .png, .svg or .pdf file (matplotlib)."""
        from .plotfile import write_plot

        write_plot(self, path)

    def __repr__(self) -> str:
        found = [f"{len(v)} {k}" + ("s" if len(v) > 1 else "")
                 for k, v in (("kink", self.kinks), ("jump", self.jumps)) if v]
        return (f"<ddx.Plot {self.expr!r}: {', '.join(s.label for s in self.series)} for "
                f"{self.var} in [{short(float(self.xs[0]))}, {short(float(self.xs[-1]))}], "
                f"{len(self.xs)} points" + (", " + ", ".join(found) if found else "") + ">")

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """In a notebook: the picture (SVG, when matplotlib is there) and the text plot."""
        from rich.console import Console

        console = Console(record=True, width=100, color_system=None, file=_Null())
        console.print(render(self, width=100, color=False))
        bundle = {"text/plain": console.export_text()}
        try:
            from .plotfile import figure_bytes

            bundle["image/svg+xml"] = figure_bytes(self, "svg").decode("utf-8")
        except Exception:  # noqa: BLE001 - no matplotlib: the text plot alone
            pass
        return bundle


class _Null:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

STYLE = {"f": "bold blue", "f′": "red", "f″": "green", "tangent": "yellow"}
GLYPH = {"f′": "+", "f″": "x"}  # without colour, the derivatives are told apart by glyph
MARK = {"kink": "▲", "jump": "◆", "nonfinite": "×"}
_DOTS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))  # braille bit of (row, col)


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """About ``count`` round numbers between lo and hi (1, 2 or 5 times a power of ten apart)."""
    if not hi > lo:
        return [lo]
    raw = (hi - lo) / max(count - 1, 1)
    mag = 10 ** math.floor(math.log10(raw))
    best: list[float] = []
    for m in (0.5, 1, 2, 2.5, 5, 10):
        step = m * mag
        first = math.ceil(lo / step - 1e-9)
        ticks = [0.0 if k == 0 else round(k * step, 12)
                 for k in range(first, math.floor(hi / step + 1e-9) + 1)]
        if len(ticks) >= 2 and (not best or abs(len(ticks) - count) < abs(len(best) - count)):
            best = ticks
    return best or [lo, hi]


class Canvas:
    """A grid of cells, each 2 x 4 braille dots, or one glyph; each cell has one owner style."""

    def __init__(self, cols: int, rows: int) -> None:
        self.cols, self.rows = cols, rows
        self.mask = [[0] * cols for _ in range(rows)]
        self.glyph: list[list[str | None]] = [[None] * cols for _ in range(rows)]
        self.owner: list[list[str | None]] = [[None] * cols for _ in range(rows)]

    def dot(self, dc: int, dr: int, key: str, glyph: str | None = None) -> None:
        c, r = dc // 2, dr // 4
        if not (0 <= c < self.cols and 0 <= r < self.rows):
            return
        if self.owner[r][c] != key:
            self.mask[r][c] = 0
            self.glyph[r][c] = None
        self.owner[r][c] = key
        if glyph is not None:
            self.glyph[r][c] = glyph
        else:
            self.mask[r][c] |= _DOTS[dr % 4][dc % 2]

    def line(self, a: tuple[float, float], b: tuple[float, float], key: str,
             glyph: str | None = None) -> None:
        (c0, r0), (c1, r1) = a, b
        steps = int(max(abs(c1 - c0), abs(r1 - r0))) + 1
        if steps > 4 * (self.cols * 2 + self.rows * 4):  # (clipped far outside: skip)
            return
        for k in range(steps + 1):
            t = k / steps
            self.dot(round(c0 + (c1 - c0) * t), round(r0 + (r1 - r0) * t), key, glyph)

    def cell(self, r: int, c: int) -> tuple[str, str | None]:
        g = self.glyph[r][c]
        if g is not None:
            return g, self.owner[r][c]
        m = self.mask[r][c]
        return (chr(0x2800 + m), self.owner[r][c]) if m else (" ", None)


def _breaks(data: PlotData, key: str) -> list[float]:
    if key == "f′":
        return [x for x, _ in data.kinks]
    if key == "f":
        return [x for x, _ in data.jumps]
    return [x for x, _ in data.kinks] + [x for x, _ in data.jumps]


def render(data: PlotData, *, width: int = 80, height: int = 16, color: bool = True):
    """The plot, ``width`` columns wide (at least 40), with its findings in words below."""
    import textwrap

    from rich.console import Group

    width = max(40, int(width))
    notes = Text("\n".join(textwrap.fill(safe_text(n), width, subsequent_indent="  ")
                           for n in data.notes()))
    return Group(canvas_text(data, width=width, height=height, color=color), notes) \
        if notes.plain else canvas_text(data, width=width, height=height, color=color)


def canvas_text(data: PlotData, *, width: int = 80, height: int = 16, color: bool = True) -> Text:
    """The plot itself as Rich Text: title, canvas, axes, legend."""
    width = max(40, int(width))
    lo, hi = float(data.xs[0]), float(data.xs[-1])
    ylo, yhi = y_range(data)
    yticks = [t for t in nice_ticks(ylo, yhi, max(3, height // 4)) if ylo <= t <= yhi]
    labels = [short(t) for t in yticks]
    lw = max([len(s) for s in labels] + [1])
    cols = width - lw - 3
    canvas = Canvas(cols, height)
    X, Y = 2 * cols - 1, 4 * height - 1

    def to_dot(x: float, y: float) -> tuple[float, float]:
        return ((x - lo) / (hi - lo) * X, (yhi - y) / (yhi - ylo) * Y)

    if ylo < 0 < yhi:  # the x axis (y = 0), faint, under everything
        r = round(to_dot(lo, 0.0)[1])
        for c in range(0, 2 * cols, 2):
            canvas.dot(c, r, "zero", "·")
    if data.tangent is not None and all(map(math.isfinite, data.tangent)):
        x0, y0, d0 = data.tangent
        pts = [to_dot(x, y0 + d0 * (x - x0)) for x in (lo, hi)]
        glyph = None if color else ("-" if abs(d0) * (hi - lo) < 0.15 * (yhi - ylo) else
                                    ("/" if d0 > 0 else "\\"))
        canvas.line(pts[0], pts[1], "tangent", glyph)
    xs = data.xs
    for s in reversed(data.series):
        glyph = None if color else GLYPH.get(s.key)
        breaks = _breaks(data, s.key)
        ys = s.ys
        ok = np.isfinite(ys)
        for i in range(len(xs) - 1):
            if not (ok[i] and ok[i + 1]):
                if ok[i]:
                    canvas.dot(*map(round, to_dot(xs[i], ys[i])), s.key, glyph)
                continue
            if any(xs[i] <= b <= xs[i + 1] for b in breaks):
                canvas.dot(*map(round, to_dot(xs[i], ys[i])), s.key, glyph)
                continue
            canvas.line(to_dot(xs[i], ys[i]), to_dot(xs[i + 1], ys[i + 1]), s.key, glyph)
        if ok[-1]:
            canvas.dot(*map(round, to_dot(xs[-1], ys[-1])), s.key, glyph)
    if data.tangent is not None and all(map(math.isfinite, data.tangent)):
        c, r = to_dot(data.tangent[0], data.tangent[1])
        canvas.dot(round(c), round(r), "tangent", "●")

    out = Text(no_wrap=True, overflow="crop")
    title = f"f({data.var}) = {safe_text(data.expr)}"
    out.append(title[: width] + "\n", style="bold")
    tick_rows = {round(to_dot(lo, t)[1]) // 4: lab for t, lab in zip(yticks, labels)}
    for r in range(height):
        lab = tick_rows.get(r)
        out.append((lab or "").rjust(lw) + (" ┤ " if lab else " │ "), style="dim")
        for c in range(cols):
            ch, owner = canvas.cell(r, c)
            out.append(ch, style=STYLE.get(owner, "dim") if color and owner else None)
        out.append("\n")
    # the x axis, with the kinks, jumps and nan/inf runs marked on it
    axis = ["─"] * cols
    xticks = [t for t in nice_ticks(lo, hi, max(3, cols // 14)) if lo <= t <= hi]
    for t in xticks:
        axis[min(cols - 1, round(to_dot(t, 0)[0]) // 2)] = "┬"
    marks: dict[int, str] = {}
    for a, b, _ in data.nonfinite:
        for c in range(round(to_dot(a, 0)[0]) // 2, round(to_dot(b, 0)[0]) // 2 + 1):
            marks[min(cols - 1, c)] = "nonfinite"
    for kind, items in (("jump", data.jumps), ("kink", data.kinks)):
        for x, _ in items:
            marks[min(cols - 1, round(to_dot(x, 0)[0]) // 2)] = kind
    out.append(" " * lw + " └─", style="dim")
    for c in range(cols):
        if c in marks:
            out.append(MARK[marks[c]], style="bold magenta" if color else None)
        else:
            out.append(axis[c], style="dim")
    out.append("\n")
    row = [" "] * (cols + 2)
    for t in xticks:
        lab = short(t)
        c = min(cols - 1, round(to_dot(t, 0)[0]) // 2)
        start = max(0, min(cols + 2 - len(lab), c - len(lab) // 2))
        if all(ch == " " for ch in row[max(0, start - 1): start + len(lab) + 1]):
            row[start: start + len(lab)] = list(lab)
    out.append(" " * (lw + 2) + "".join(row).rstrip() + "\n")
    out.append(" " * (lw + 2) + safe_text(data.var).center(cols).rstrip() + "\n", style="italic")
    out.append_text(legend(data, color))
    return out


def legend(data: PlotData, color: bool) -> Text:
    t = Text()
    for s in data.series:
        sample = "⣿⣿" if color or s.key not in GLYPH else GLYPH[s.key] * 2
        t.append(sample, style=STYLE[s.key] if color else None)
        t.append(f" {safe_text(s.label)}   ")
    if data.tangent is not None:
        t.append("⣿⣿" if color else "/●", style=STYLE["tangent"] if color else None)
        t.append(" tangent   ")
    for kind, label, present in (("kink", "kink", data.kinks), ("jump", "jump", data.jumps),
                                 ("nonfinite", "f′ nan/inf", data.nonfinite)):
        if present:
            t.append(MARK[kind], style="bold magenta" if color else None)
            t.append(f" {label}   ")
    t.rstrip()
    return t
