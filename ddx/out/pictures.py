"""Graph pictures: Graphviz DOT and Mermaid text written by ddx itself; SVG/PNG through `dot`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

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
        lines.append(t.display if t.name or t.op != "const" else f"const {t.display}")
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


def to_dot(view) -> str:
    nodes = collect(view.output)
    ids = {id(t): f"n{i}" for i, t in enumerate(nodes)}
    out = ["digraph ddx {", '  rankdir=BT;',
           '  node [fontname="Helvetica", fontsize=11, style=filled];',
           '  edge [fontname="Helvetica", fontsize=9];']
    for t in nodes:
        k = kind(view, t)
        shape = "ellipse" if k == "op" else "box"
        style = "filled,dashed" if k == "const" else ("filled,rounded" if shape == "box"
                                                        else "filled")
        label = "\\n".join(_dot_escape(line) for line in label_lines(view, t))
        out.append(f'  {ids[id(t)]} [label="{label}", shape={shape}, style="{style}", '
                   f'fillcolor="{FILL[k]}", color="{BORDER[k]}"];')
    for t in nodes:
        for s in t.inputs:
            if id(s) not in ids:
                continue
            out.append(f"  {ids[id(s)]} -> {ids[id(t)]};")
    for t in nodes:
        for s in t.inputs:
            if id(s) in ids and s.requires_grad and t.requires_grad:
                out.append(f'  {ids[id(t)]} -> {ids[id(s)]} [style=dashed, color="#e03131", '
                           'constraint=false];')
    out.append("}")
    return "\n".join(out) + "\n"


def _mmd_escape(text: str) -> str:
    return (text.replace("&", "&amp;").replace('"', "#quot;").replace("<", "&lt;")
            .replace(">", "&gt;"))


def to_mermaid(view) -> str:
    nodes = collect(view.output)
    ids = {id(t): f"n{i}" for i, t in enumerate(nodes)}
    out = ["flowchart BT"]
    for t in nodes:
        k = kind(view, t)
        label = "<br/>".join(_mmd_escape(line) for line in label_lines(view, t))
        left, right = ("([", "])") if k == "op" else ("[", "]")
        out.append(f'  {ids[id(t)]}{left}"{label}"{right}:::{k}')
    for t in nodes:
        for s in t.inputs:
            if id(s) in ids:
                out.append(f"  {ids[id(s)]} --> {ids[id(t)]}")
    for t in nodes:
        for s in t.inputs:
            if id(s) in ids and s.requires_grad and t.requires_grad:
                out.append(f"  {ids[id(t)]} -.-> {ids[id(s)]}")
    for k in FILL:
        out.append(f"  classDef {k} fill:{FILL[k]},stroke:{BORDER[k]}")
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
