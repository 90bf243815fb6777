"""A sampled plot (f, its derivatives, kinks, nan/inf runs, a tangent): what the renderers draw."""

from __future__ import annotations

import math
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
    undefined: list[tuple[float, float, str]] = field(default_factory=list)  # f nan/inf runs
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
        for key, runs in (("f", self.undefined), ("f′", self.nonfinite)):
            for a, b, what in runs:
                where = (f"at {v} = {short(a)}" if a == b else
                         f"for {v} in [{short(a)}, {short(b)}]")
                lines.append(f"{key} is {what} {where}")
        if self.tangent is not None:
            x0, y0, d0 = self.tangent
            lines.append(f"tangent at {v} = {short(x0)}: f = {short(y0)}, slope f′ = {short(d0)}"
                         f"  (y = {short(y0)} + {short(d0)}·({v} - {short(x0)}))")
        return lines

    def table(self) -> dict[str, list[float]]:
        """The samples as columns (x, f, f′, ...)."""
        out = {self.var: self.xs.tolist()}
        for s in self.series:
            out[s.key] = np.asarray(s.ys, dtype=float).tolist()
        return out


def y_range(data: PlotData) -> tuple[float, float]:
    """A y range showing every series, unless a few huge values (a pole) would flatten it."""
    finite = [s.ys[np.isfinite(s.ys)] for s in data.series]
    vals = np.concatenate(finite) if finite else np.zeros(0)
    if data.tangent is not None and math.isfinite(data.tangent[1]):
        vals = np.append(vals, data.tangent[1])
    if vals.size == 0:
        return -1.0, 1.0
    lo, hi = float(vals.min()), float(vals.max())
    q1, q3 = (float(v) for v in np.percentile(vals, [10, 90]))
    if hi - lo > 20 * max(q3 - q1, 1e-300):  # a pole: keep the body of the curves in view
        lo, hi = max(lo, q1 - 2 * (q3 - q1)), min(hi, q3 + 2 * (q3 - q1))
    if hi - lo < 1e-12 * max(1.0, abs(hi)):
        lo, hi = lo - 1, hi + 1
    pad = 0.04 * (hi - lo)
    return lo - pad, hi + pad
