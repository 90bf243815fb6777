"""Derivative formulas and the --swell table as Rich renderables (pure: they print nothing).

Formulas are shown as ddx input; ``pretty`` writes small integer powers as superscripts
(``3*x²``, which the one-liner reads back too) for a terminal that can show them."""

from __future__ import annotations

import re

import numpy as np
from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from ..textsafe import safe_text
from . import numbers

SUPER = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_POWER = re.compile(r"\^(-?\d+)(?![\d.eE^(])")
STYLE_NAME = "bold cyan"
STYLE_FORMULA = "bold"
STYLE_NOTE = "dim"
LABEL_MAX = 48
SHARED_MIN_OPS = 20  # a shared form is shown beside the formulas past this many operations


def pretty(text: str) -> str:
    """``x^2`` as ``x²`` (small integer powers only; ``x^(y - 1)`` stays)."""
    return _POWER.sub(lambda m: m.group(1).translate(SUPER), text)


def _t(text: str, style: str = "") -> Text:
    return Text(safe_text(text), style=style)


def _line() -> Text:
    """A formula's line (printed with soft wrap: never cut, it is meant to be copied)."""
    return Text("  ")


def operator(key: str, unicode: bool) -> str:
    """``d/dx``, ``d²/dx²``, ``d²/dx dy`` for a key ``x``, ``x,x``, ``x,y``."""
    steps = key.split(",")
    if len(steps) == 1:
        return f"d/d{steps[0]}"
    n = str(len(steps))
    sup = n.translate(SUPER) if unicode else "^" + n
    if len(set(steps)) == 1:
        return f"d{sup}/d{steps[0]}{sup}"
    return f"d{sup}/" + " ".join(f"d{s}" for s in steps)


def _named(text: str, names: dict | None) -> str:
    """Names as the user typed them (``theta`` -> ``θ``), for the terminal view."""
    for spelled, typed in (names or {}).items():
        text = re.sub(rf"(?<![A-Za-z0-9_]){re.escape(spelled)}(?![A-Za-z0-9_])", typed, text)
    return text


def _cut(text: str) -> str:
    return text if len(text) <= LABEL_MAX else text[:LABEL_MAX - 3] + "..."


def formulas_view(result: dict, *, unicode: bool = True) -> Group:
    """The formulas of a derivative request, with the numbers when every variable has one."""
    names = result.get("names") if unicode else None
    show = (lambda s: _named(pretty(s), names)) if unicode else (lambda s: s)
    expr, out = _named(_cut(result["expression"]), names), result["output"]
    parts = [_t(f"derivatives of {out} = {expr}" if out == "out" else
                f"derivatives of {out}, from {expr}", "bold")]
    values = result.get("values") or {}
    shared = result.get("shared")
    for key, text in result["formulas"].items():
        line = _line()
        line.append_text(_t(operator(_named(key, names), unicode), STYLE_NAME))
        line.append(" = ")
        line.append_text(_t(show(text), STYLE_FORMULA))
        if key in values:
            line.append(" = " + numbers.text(np.asarray(values[key], dtype=float)
                                             if not isinstance(values[key], str) else
                                             np.asarray(float(values[key])), width=40))
        parts.append(line)
    if shared is not None and _worth(result):
        by = "SymPy's cse" if shared["by"] == "cse" else "as reverse mode computes it"
        parts.append(_t(f"with shared subexpressions ({by})", "bold"))
        for name, text in shared["let"]:
            line = _line()
            line.append_text(_t(f"{name} = {show(text)}"))
            parts.append(line)
        for key, text in shared["formulas"].items():
            line = _line()
            line.append_text(_t(operator(_named(key, names), unicode), STYLE_NAME))
            line.append_text(_t(f" = {show(text)}", STYLE_FORMULA))
            parts.append(line)
    if not result["formulas"]:
        parts.append(_t("no derivatives: no variable requires grad", STYLE_NOTE))
    if result["conditions"]:
        where = _named(", ".join(result["conditions"]), names)
        note = f"where {where}"
        if result["unbound"]:
            note += " (the branch the rules take at the sample point " + ", ".join(
                f"{n} = {numbers.text(np.asarray(v))}"
                for n, v in result.get("point", {}).items()) + ")"
        parts.append(_t(note, STYLE_NOTE))
    if result["simplified"] is None:
        parts.append(_t("not simplified: SymPy is not installed (pip install 'ddx[symbolic]')",
                        STYLE_NOTE))
    if "swell" in result:
        parts.append(swell_view(result["swell"], result["output"]))
    return Group(*parts)


def _worth(result: dict) -> bool:
    """Whether the shared form is worth showing beside the formulas (or instead of them)."""
    formulas = result["formulas"].values()
    return any(";" in f for f in formulas) or sum(len(f) for f in formulas) > 4 * SHARED_MIN_OPS


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def swell_view(rows: dict, output: str) -> Table:
    """Expression swell: one derivative written several ways, in SymPy's count_ops."""
    table = Table(box=box.SIMPLE_HEAD, title=f"expression swell: the gradient of {output}, in "
                  "operations (SymPy's count_ops)", title_justify="left")
    table.add_column("form")
    table.add_column("operations", justify="right")
    shared_by = "ddx's let-form" if rows["shared"] == rows["shared_ddx"] else "cse of the " \
        "simplified formula"
    lines = [
        ("naive formula (the tree the rules build, no sharing)", rows["naive"]),
        ("simplified (SymPy's bounded passes)", rows["simplified"]),
        (f"shared subexpressions ({shared_by})", rows["shared"]),
        ("SymPy's diff", rows["sympy_diff"]),
        ("SymPy's diff, then cse", rows["sympy_cse"]),
        (f"reverse-mode AD ({_count(rows['ad_forward'], 'forward op')} + "
         f"{_count(rows['ad_vjps'], 'VJP')})", rows["ad"]),
    ]
    for what, n in lines:
        table.add_row(what, "-" if n is None else f"{n:,}")
    return table
