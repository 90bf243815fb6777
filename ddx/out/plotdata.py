"""A sampled plot (f, its derivatives, kinks, nan/inf runs, a tangent): what the renderers draw."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Series:
    key: str  # "f", "f′", "f″"
    label: str  # "f(x)", "f′(x)"
    ys: np.ndarray


@dataclass
class PlotData:
    expr: str
    var: str
    xs: np.ndarray
    series: list[Series]
    kinks: list[tuple[float, str]] = field(default_factory=list)  # f′ jumps: (x, note)
    jumps: list[tuple[float, str]] = field(default_factory=list)  # f jumps
    nonfinite: list[tuple[float, float, str]] = field(default_factory=list)  # f′ nan/inf runs
    tangent: tuple[float, float, float] | None = None  # (x0, f(x0), f′(x0))
    vectorised: bool = True

    def series_by_key(self, key: str) -> Series | None:
        return next((s for s in self.series if s.key == key), None)

    def notes(self) -> list[str]:
        """The findings in words, one line each (shown under the terminal plot)."""
        from ..fmt import short

        v = self.var
        lines = [f"kink at {v} = {short(x)}: {why}" for x, why in self.kinks]
        lines += [f"jump at {v} = {short(x)}: {why}" for x, why in self.jumps]
        for a, b, what in self.nonfinite:
            where = f"at {v} = {short(a)}" if a == b else f"for {v} in [{short(a)}, {short(b)}]"
            lines.append(f"f′ is {what} {where}")
        if self.tangent is not None:
            x0, y0, d0 = self.tangent
            lines.append(f"tangent at {v} = {short(x0)}: f = {short(y0)}, slope f′ = {short(d0)}"
                         f"  (y = {short(y0)} + {short(d0)}·({v} - {short(x0)}))")
        return lines

    def __rich_console__(self, console, options):
        from .plot import render

        color = console.color_system is not None and not console.no_color
        yield render(self, width=options.max_width, color=color)

    def save(self, path: str) -> None:
        """Write the plot to a .png, .svg or .pdf file (matplotlib)."""
        from .plotfile import write_plot

        write_plot(self, path)

    def table(self) -> dict[str, list[float]]:
        """The samples as columns (x, f, f′, ...)."""
        out = {self.var: self.xs.tolist()}
        for s in self.series:
            out[s.key] = np.asarray(s.ys, dtype=float).tolist()
        return out
