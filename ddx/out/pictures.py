"""Graph pictures: Graphviz DOT and Mermaid text written by ddx itself; SVG/PNG through `dot`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np

from .. import fmt
from ..errors import DdxError, DdxUsageError
from ..graph.record import ancestors
from ..graph.tensor import Tensor
from ..ops import OPS

FILL = {"leaf": "#cfe2ff", "const": "#f1f3f5", "op": "#fff3bf", "out": "#d3f9d8"}
BORDER = {"leaf": "#1c64f2", "const": "#adb5bd", "op": "#e0a800", "out": "#2b8a3e"}


def collect(root: Tensor) -> list[Tensor]:
    return ancestors(root)


def kind(view, t: Tensor) -> str:
    if t is view.output:
        return "out"
    if t.op in ("leaf", "const") or not t.inputs:
        return "leaf" if t.requires_grad else "const"
    return "op"


def label_lines(view, t: Tensor) -> list[str]:
    lines = []
    if t.op not in ("leaf", "const") and t.inputs:
        row = OPS.get(t.op)
        lines.append(f"{t.display}   [{row.symbol if row is not None else t.op}]")
        lines.append(t.grad_fn.name if t.grad_fn is not None else "(no grad_fn)")
    else:
        from .graphdoc import label

        lines.append(label(t))
        if t.requires_grad:
            lines.append("AccumulateGrad")
    lines.append("value " + fmt.value(t.value, threshold=6, width=40, exact=False))
    if view.backward_done and t.requires_grad:
        g = view.grad_of(t)
        if g is not None:
            lines.append("grad " + fmt.value(g, threshold=6, width=40, exact=False))
    return lines


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def _html(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("\n", " "))


GROUP = ("#f3d9fa", "#ae3ec9")
LEGEND_DOT = (
    '<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="3" CELLPADDING="3">'
    '<TR><TD BORDER="0" COLSPAN="6" ALIGN="LEFT"><B>legend</B></TD></TR><TR>'
    + "".join(f'<TD BGCOLOR="{FILL[k]}" COLOR="{BORDER[k]}">{w}</TD>' for k, w in (
        ("leaf", "leaf (requires grad)"), ("const", "constant / data"), ("op", "operation"),
        ("out", "output")))
    + f'<TD BGCOLOR="{GROUP[0]}" COLOR="{GROUP[1]}">folded group</TD>'
    '<TD BORDER="0">→ solid: forward   ⇢ dashed red: gradient</TD></TR></TABLE>>')


def _grid_rows(cell: dict) -> str:
    rows = "".join("<TR>" + "".join(f'<TD ALIGN="RIGHT">{_html(v.replace("…", "..."))}</TD>'
                                    for v in row) + "</TR>" for row in cell["grid"])
    return (f'<TR><TD><TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="2">{rows}'
            f'</TABLE></TD></TR>' + (f'<TR><TD><FONT POINT-SIZE="8">{_html(cell["summary"])}'
                                     '</FONT></TD></TR>' if cell.get("summary") else ""))


def _html_label(view, t: Tensor) -> str:
    """A node whose value or gradient is an array: its numbers as a small grid."""
    from .graphdoc import cell

    lines = label_lines(view, t)
    head = [ln for ln in lines if not ln.startswith(("value ", "grad "))]
    out = ['<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">']
    out += [f"<TR><TD>{'<B>' + _html(ln) + '</B>' if i == 0 else _html(ln)}</TD></TR>"
            for i, ln in enumerate(head)]
    grad = view.grad_of(t) if view.backward_done and t.requires_grad else None
    for word, value in (("value", t.value), ("grad", grad)):
        if value is None:
            continue
        c = cell(value)
        if "grid" in c:
            out.append(f'<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="9">{word}</FONT></TD></TR>')
            out.append(_grid_rows(c))
        else:
            out.append(f"<TR><TD>{word} {_html(c['text'])}</TD></TR>")
    return "".join(out) + "</TABLE>>"


def folded(view):
    """The nodes, the groups that fold (large graphs), and each node's item id."""
    from .graphdoc import group_records

    nodes = collect(view.output)
    groups = group_records(view, nodes)
    ids = {id(t): f"n{i}" for i, t in enumerate(nodes)}
    for g in groups:
        for i in g["members"]:
            ids[id(nodes[i])] = f"g{g['id']}"
    return nodes, groups, ids


def _edges(nodes, ids, grads: bool) -> list[tuple[str, str]]:
    seen: list[tuple[str, str]] = []
    done = set()
    for t in nodes:
        for s in t.inputs:
            if id(s) not in ids or (grads and not (s.requires_grad and t.requires_grad)):
                continue
            pair = (ids[id(s)], ids[id(t)])
            if pair[0] != pair[1] and pair not in done:
                done.add(pair)
                seen.append(pair)
    return seen


def to_dot(view) -> str:
    nodes, groups, ids = folded(view)
    out = ["digraph ddx {", '  rankdir=BT;',
           '  node [fontname="Helvetica", fontsize=11, style=filled];',
           '  edge [fontname="Helvetica", fontsize=9];',
           f'  labelloc=b; labeljust=l; fontname="Helvetica"; fontsize=10; label={LEGEND_DOT};']
    for t in nodes:
        if ids[id(t)].startswith("g"):
            continue
        k = kind(view, t)
        shape = "ellipse" if k == "op" else "box"
        style = "filled,dashed" if k == "const" else ("filled,rounded" if shape == "box"
                                                        else "filled")
        grad = view.grad_of(t) if view.backward_done and t.requires_grad else None
        if np.ndim(t.value) or np.ndim(grad if grad is not None else 0):
            label = _html_label(view, t)
            shape = "box" if shape == "ellipse" else shape
            style = style if k != "op" else "filled,rounded"
        else:
            label = '"' + "\\n".join(_dot_escape(line) for line in label_lines(view, t)) + '"'
        out.append(f'  {ids[id(t)]} [label={label}, shape={shape}, style="{style}", '
                   f'fillcolor="{FILL[k]}", color="{BORDER[k]}"];')
    for g in groups:
        name = g["name"] if " parts like " in g["name"] else "up to " + g["name"]
        text = f"group {g['id'] + 1}: {g['size']} nodes (folded)\\n{g['summary']}\\n{name}"
        out.append(f'  g{g["id"]} [label="{_dot_escape(text).replace(chr(92) * 2 + "n", chr(92) + "n")}", '
                   f'shape=box3d, fillcolor="{GROUP[0]}", color="{GROUP[1]}"];')
    for a, b in _edges(nodes, ids, False):
        out.append(f"  {a} -> {b};")
    for a, b in _edges(nodes, ids, True):
        out.append(f'  {b} -> {a} [style=dashed, color="#e03131", constraint=false];')
    out.append("}")
    return "\n".join(out) + "\n"


def _mmd_escape(text: str) -> str:
    return (text.replace("&", "&amp;").replace('"', "#quot;").replace("<", "&lt;")
            .replace(">", "&gt;"))


def _mmd_lines(view, t: Tensor) -> list[str]:
    """label_lines, with an array's numbers a row per line (a small grid)."""
    from .graphdoc import cell

    lines = []
    grad = view.grad_of(t) if view.backward_done and t.requires_grad else None
    for line in label_lines(view, t):
        word = line.split(" ", 1)[0]
        value = t.value if word == "value" else (grad if word == "grad" else None)
        c = cell(value) if value is not None and np.ndim(value) else None
        if c is None or "grid" not in c:
            lines.append(line)
            continue
        lines.append(word + " " + c.get("summary", ""))
        lines += ["[" + ", ".join(v.replace("…", "...") for v in row) + "]" for row in c["grid"]]
    return lines


def to_mermaid(view) -> str:
    nodes, groups, ids = folded(view)
    out = ["flowchart BT"]
    for t in nodes:
        if ids[id(t)].startswith("g"):
            continue
        k = kind(view, t)
        label = "<br/>".join(_mmd_escape(line) for line in _mmd_lines(view, t))
        left, right = ("([", "])") if k == "op" else ("[", "]")
        out.append(f'  {ids[id(t)]}{left}"{label}"{right}:::{k}')
    for g in groups:
        label = "<br/>".join(_mmd_escape(x) for x in (
            f"group {g['id'] + 1}: {g['size']} nodes (folded)", g["summary"],
            g["name"] if " parts like " in g["name"] else f"up to {g['name']}"))
        out.append(f'  g{g["id"]}[["{label}"]]:::group')
    for a, b in _edges(nodes, ids, False):
        out.append(f"  {a} --> {b}")
    for a, b in _edges(nodes, ids, True):
        out.append(f"  {b} -.-> {a}")
    out.append('  subgraph legend ["legend: solid arrows forward, dotted arrows gradients"]')
    for k, word in (("leaf", "leaf (requires grad)"), ("const", "constant / data"),
                    ("op", "operation"), ("out", "output"), ("group", "folded group")):
        out.append(f'    legend_{k}["{word}"]:::{k}')
    out.append("  end")
    for k in FILL:
        out.append(f"  classDef {k} fill:{FILL[k]},stroke:{BORDER[k]}")
    out.append(f"  classDef group fill:{GROUP[0]},stroke:{GROUP[1]}")
    return "\n".join(out) + "\n"


def graph_text(view, kind_: str) -> str:
    return to_mermaid(view) if kind_ == "mmd" else to_dot(view)


def write_graph(view, path: str, *, option: str = "--graph") -> None:
    """Write the picture; the file's ending picks the format (a device or pipe with no ending,
    such as /dev/stdout, gets DOT). The file appears whole or not at all; labels are escaped
    as on a terminal."""
    import os
    import stat

    from ..textsafe import safe_text
    from . import outfile

    outfile.check(path, option=option)
    suffix = Path(path).suffix.lower().lstrip(".")
    if not suffix:
        try:
            suffix = "" if stat.S_ISREG(os.stat(path).st_mode) else "dot"
        except OSError:
            pass
    if suffix not in ("dot", "gv", "svg", "png", "mmd", "html", "htm"):
        raise DdxUsageError(f"{option} {path}: " + (f"unknown picture format '.{suffix}'" if suffix
                                                    else "no ending to say the picture format"),
                            hint="end the file name in .dot, .gv, .mmd, .html, .svg or .png")
    if suffix in ("html", "htm"):
        from .html_graph import to_html

        outfile.write(path, to_html(view), option=option)
        return
    if suffix in ("dot", "gv", "mmd"):
        outfile.write(path, safe_text(graph_text(view, suffix)), option=option)
        return
    exe = shutil.which("dot")
    if exe is None:
        raise DdxError(f"cannot write {path}: Graphviz's 'dot' program is not installed",
                       hint="install Graphviz (Debian/Ubuntu: apt-get install graphviz), or "
                            "write a .dot or .mmd file instead")
    try:  # dot writes to a pipe, ddx writes the file: so a write failure is never missed
        proc = subprocess.run([exe, f"-T{suffix}"], input=safe_text(to_dot(view)).encode(),
                              capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        raise DdxError(f"Graphviz took more than 120 s to render {path}") from None
    except OSError as exc:
        raise DdxError(f"cannot run Graphviz's 'dot': {outfile.reason(exc)}") from None
    if proc.returncode != 0 or not proc.stdout:
        why = proc.stderr.decode("utf-8", "replace").strip() or f"exit code {proc.returncode}"
        raise DdxError(f"Graphviz failed to render {path}: {why}")
    outfile.write(path, proc.stdout, option=option)
