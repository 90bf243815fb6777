"""The explain view: the chain rule path by path, the per-node steps, kinks, where nan arose."""

from __future__ import annotations

from rich.text import Text

from .. import fmt
from ..textsafe import safe_text
from . import numbers
from .fit import STYLE_BAD, Column, Fitted, fit_table
from .tree import STYLE_LEAF, STYLE_OP

MAX_ROWS = 40


def _t(text, style: str = "") -> Text:
    return Text(safe_text(str(text)), style=style)


def explain_parts(trace, result: dict, precision: int) -> list:
    def num(v) -> str:
        return numbers.text(v, precision, 40)

    out = safe_text(trace.output_name)
    parts: list = [Text("chain rule, path by path", style="bold")]
    for name, entry in result["leaves"].items():
        head = _t(f"d{out}/d{name}", STYLE_LEAF)
        if entry["mode"] == "unused":
            parts.append(head.append(" = 0: no path leads from the output to it", style="dim"))
            continue
        if entry["mode"] == "nodes":
            why = ("the values are tensors" if entry.get("path_count", 0) <= 32
                   else f"{entry['path_count']} paths is too many to list")
            parts.append(head.append(f" = {num(entry['gradient'])}  ({why}: see the per-node "
                                     "steps below)", style="default"))
            continue
        many = len(entry["paths"]) > 1
        for k, path in enumerate(entry["paths"], 1):
            lead = Text()
            lead.append_text(head.copy() if not many else Text(f"  path {k}: ", style="dim"))
            if not many:
                lead.append(" = ")
            segs: list[tuple[str, Text]] = []
            for j, f in enumerate(path["factors"]):
                seg = Text(safe_text(f"[{f['node']}] "), style=STYLE_OP)
                seg.append(safe_text(str(f["local"])))
                if f["local"] != fmt.number(f["value"]):
                    seg.append(f" = {num(f['value'])}")
                segs.append((" × " if j else "", seg))
            segs.append((" ", Text(f"→ {num(path['product'])}", style="bold")))
            if many and k == 1:
                parts.append(head.copy().append(f": {len(entry['paths'])} paths, one per use",
                                                style="default"))
            parts.append(_flow(lead, segs))
        if many:
            parts.append(Text(f"  sum of the paths = {num(entry['sum'])}", style="bold"))
    steps = result["steps"]
    if any(e["mode"] == "nodes" for e in result["leaves"].values()) or any(
            s["summed_axes"] for s in steps):
        cols = [Column("node", kind="name", least=8), Column("input", kind="name", least=4),
                Column("local", kind="name", least=6), Column("upstream", kind="number"),
                Column("gets", kind="number"), Column("broadcast", kind="name", least=8)]
        for s in steps[:MAX_ROWS]:
            cells = (_t(f"{s['node']} {s['at']}", STYLE_OP), _t(s["input"]), _t(s["local"]),
                     s["upstream"], s["gets"],
                     _t(f"summed over axes {tuple(s['summed_axes'])}" if s["summed_axes"]
                        else ""))
            for c, cell in zip(cols, cells):
                c.cells.append(cell)
        title = "per node: upstream gradient × local derivative = what the input gets"
        parts.append(Fitted(lambda width: _group(fit_table(title, cols, width, precision))))
    kinks = {}  # each kinked node once, with what PyTorch takes there
    for s in steps:
        if s.get("kink"):
            kinks.setdefault(f"[{s['node']}] {s['at']}", s["kink"])
    for where, note in kinks.items():
        parts.append(_t(f"kink at {where}: {note}", "yellow"))
    bad = result["nonfinite"]
    if bad:
        parts.append(_t(f"nan/inf first arose in the {bad['pass']} pass at "
                        f"[{bad['node']}] {bad['at']}: {bad['why']}", STYLE_BAD))
        parts.append(_t(f"hint: {bad['hint']}", "yellow"))
    return parts


def _flow(lead: Text, segs: list[tuple[str, Text]]) -> Fitted:
    """A product of factors that wraps only between factors (never inside ``x = 2``), the
    next lines indented under the first."""
    def build(width: int) -> Text:
        lines: list[Text] = []
        line = lead.copy()
        for sep, seg in segs:
            if line.cell_len + len(sep) + seg.cell_len <= width or not line.plain.strip():
                line.append(sep)
                line.append_text(seg)
                continue
            line.append(sep.rstrip())
            lines.append(line)
            line = Text(" " * max(0, min(6, width - seg.cell_len))).append_text(seg)
        lines.append(line)
        return Text("\n").join(lines)
    return Fitted(build)


def _group(parts: list):
    from rich.console import Group

    return Group(*parts)
