"""The plot as a .png, .svg or .pdf file, drawn by matplotlib (the optional extra ``plot``)."""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np

from ..errors import DdxError, DdxUsageError
from ..fmt import short
from .plotdata import PlotData, y_range

FORMATS = ("png", "svg", "pdf")
COLORS = {"f": "#1c64f2", "f′": "#e03131", "f″": "#2b8a3e", "tangent": "#e0a800",
          "mark": "#ae3ec9"}


def _matplotlib():
    try:
        import matplotlib
    except ImportError:
        raise DdxError("writing a plot file needs matplotlib, which is not installed",
                       hint="pip install 'ddx[plot]' (or pip install matplotlib); the terminal "
                            "plot needs nothing") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def figure_bytes(data: PlotData, fmt: str) -> bytes:
    """The picture's bytes (reproducible: no dates or random ids in the file)."""
    plt = _matplotlib()
    import matplotlib

    matplotlib.rcParams["svg.hashsalt"] = "ddx"
    fig, ax = plt.subplots(figsize=(8, 5), dpi=120)
    try:
        xs = data.xs
        breaks = {"f": [x for x, _ in data.jumps], "f′": [x for x, _ in data.kinks]}
        for s in data.series:
            ys = np.array(s.ys, dtype=float)
            ys[~np.isfinite(ys)] = np.nan
            cut = [b for b in breaks.get(s.key, ()) if xs[0] < b <= xs[-1]]
            idx = np.searchsorted(xs, cut)  # no line is drawn across a jump
            ax.plot(np.insert(xs, idx, cut), np.insert(ys, idx, np.nan), color=COLORS[s.key],
                    lw=2 if s.key == "f" else 1.4,
                    ls="-" if s.key == "f" else ("--" if s.key == "f′" else ":"), label=s.label)
        f = data.series[0].ys
        for x, _ in data.kinks:
            y = float(np.interp(x, xs, f))
            ax.plot([x], [y], "^", color=COLORS["mark"], ms=8, zorder=5,
                    label="kink (f′ jumps)" if x == data.kinks[0][0] else None)
        for x, _ in data.jumps:
            ax.axvline(x, color=COLORS["mark"], lw=1, ls=":", zorder=1, alpha=0.8,
                       label="jump or pole of f" if x == data.jumps[0][0] else None)
        for k, (a, b, _) in enumerate(data.nonfinite):
            lab = "f′ nan/inf" if k == 0 else None
            if a == b:
                ax.plot([a], [0], "x", color=COLORS["mark"], ms=9, mew=2, zorder=5, label=lab)
            else:
                ax.axvspan(a, b, color=COLORS["mark"], alpha=0.12, lw=0, label=lab)
        for k, (a, b, _) in enumerate(data.undefined):
            if a < b:
                ax.axvspan(a, b, color="#868e96", alpha=0.1, lw=0, hatch="//",
                           label="f nan/inf" if k == 0 else None)
        if data.tangent is not None and all(map(math.isfinite, data.tangent)):
            x0, y0, d0 = data.tangent
            ax.plot([xs[0], xs[-1]], [y0 + d0 * (xs[0] - x0), y0 + d0 * (xs[-1] - x0)],
                    color=COLORS["tangent"], lw=1.2,
                    label=f"tangent at {data.var} = {short(x0)}, slope {short(d0)}")
            ax.plot([x0], [y0], "o", color=COLORS["tangent"], ms=6, zorder=6)
        lo, hi = y_range(data)
        ax.set_ylim(lo, hi)
        ax.set_xlim(xs[0], xs[-1])
        ax.axhline(0, color="#868e96", lw=0.6, zorder=0)
        ax.grid(True, color="#e9ecef", lw=0.6)
        ax.set_xlabel(data.var)
        ax.set_ylabel(", ".join(s.label for s in data.series))
        ax.set_title(f"f({data.var}) = {data.expr}"[:120], fontsize=11)
        ax.legend(loc="best", fontsize=9, framealpha=0.9)
        fig.tight_layout()
        buf = io.BytesIO()
        meta = {"png": {"Software": None}, "svg": {"Date": None},
                "pdf": {"CreationDate": None, "ModDate": None}}[fmt]
        fig.savefig(buf, format=fmt, metadata=meta)
        return buf.getvalue()
    finally:
        plt.close(fig)


def check_format(path: str, option: str = "-o") -> str:
    """The plot format a file name asks for (png, svg, pdf), or a usage error."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise DdxUsageError(f"{option} {path}: " + (f"unknown plot format '.{suffix}'" if suffix
                                                    else "no ending to say the plot format"),
                            hint="end the file name in .png, .svg or .pdf")
    return suffix


def write_plot(data: PlotData, path: str, *, option: str = "-o") -> None:
    from . import outfile

    suffix = check_format(path, option)
    outfile.check(path, option=option)
    outfile.write(path, figure_bytes(data, suffix), option=option)
