"""The static pictures catch up with the page: a legend in .dot/.svg/.png/.mmd, arrays as small
grids, large graphs folded, and a 1,000-node graph written in every format."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from test_graph_emit import dot_available
from test_html_graph import page_data

import ddx
from ddx.graph.record import ancestors
from ddx.out.pictures import to_dot, to_mermaid, write_graph


def traced(expr, bindings):
    t = ddx.Trace(expr, bindings, lean=False)
    t.backward()
    return t


def chain_sum(terms: int) -> str:
    return " + ".join(f"sin(x*{i}) * w" for i in range(1, terms + 1))


MATRIX = ("sum(tanh(W @ v + c))", {"W": "[[1,2,3,4,5],[1,2,3,4,5],[1,2,3,4,5],[1,2,3,4,5],"
                                        "[1,2,3,4,5],[6,7,8,9,10]]",
                                   "v": "[0.1,0.2,0.3,0.4,0.5]", "c": 0.1})


def test_dot_has_a_legend_naming_every_style():
    text = to_dot(traced("(w*x+b)^2", {"w": 3, "x": 2, "b": 1}))
    legend = re.search(r"label=<<TABLE.*?</TABLE>>;", text).group()
    for word, color in (("leaf (requires grad)", "#cfe2ff"), ("constant / data", "#f1f3f5"),
                        ("operation", "#fff3bf"), ("output", "#d3f9d8"),
                        ("folded group", "#f3d9fa")):
        assert f'BGCOLOR="{color}"' in legend and word in legend
    assert "solid: forward" in legend and "dashed red: gradient" in legend


def test_matrix_values_are_grids_in_dot_and_mermaid():
    t = traced(*MATRIX)
    dot = to_dot(t)
    w_node = next(line for line in dot.splitlines() if "<B>W</B>" in line)
    rows = re.findall(r"<TR>((?:<TD ALIGN=\"RIGHT\">[^<]*</TD>)+)</TR>", w_node)
    cells = [re.findall(r">([^<]*)</TD>", r) for r in rows]
    assert cells[:4] == [["1", "2", "...", "5"], ["1", "2", "...", "5"], ["..."] * 4,
                         ["6", "7", "...", "10"]]
    assert "(6, 5)  min 1  max 10  mean 3.83333" in w_node
    mmd = to_mermaid(t)
    w_line = next(line for line in mmd.splitlines() if line.startswith('  n0["W<br/>'))
    assert "value (6, 5)  min 1  max 10  mean 3.83333<br/>[1, 2, ..., 5]<br/>" in w_line
    assert "[6, 7, ..., 10]" in w_line


def test_large_graphs_fold_in_dot_and_mermaid():
    t = traced(chain_sum(250), {"x": 0.5, "w": 2})
    assert len(ancestors(t.output)) > 1000
    dot = to_dot(t)
    nodes = re.findall(r"^  ([ng]\d+) \[label=", dot, re.M)
    assert len(nodes) < 12 and "g0" in nodes
    group = next(line for line in dot.splitlines() if line.startswith("  g0 [label="))
    assert "nodes (folded)" in group and "AddBackward0" in group and "shape=box3d" in group
    # the leaves stay outside with their gradients
    for name, g in t.grads.items():
        assert re.search(rf'label="{name}\\nAccumulateGrad\\nvalue [^"]*\\ngrad {g:.6g}"', dot)
    mmd = to_mermaid(t)
    assert '  g0[["group 1: ' in mmd
    assert len(re.findall(r'^  n\d+(\(\[|\[)"', mmd, re.M)) < 12


@pytest.mark.parametrize("suffix", ["dot", "mmd", "html", "svg", "png"])
def test_a_1000_node_graph_in_every_format(tmp_path, suffix):
    if suffix in ("svg", "png") and not dot_available():
        pytest.skip("Graphviz is not installed (CI installs it)")
    t = traced(chain_sum(250), {"x": 0.5, "w": 2})
    path = tmp_path / f"big.{suffix}"
    write_graph(t, str(path))
    data = path.read_bytes()
    if suffix == "svg":
        svg = data.decode()
        assert svg.count('<g id="node') < 12 and "folded" in svg and "legend" in svg
        width = float(re.search(r'<svg width="([\d.]+)pt"', svg).group(1))
        assert width < 1500  # readable: not a 4839-pixel strip
    elif suffix == "png":
        assert data.startswith(b"\x89PNG")
        w, h = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        assert w < 2000 and h < 2000
    elif suffix == "html":
        doc = page_data(data.decode())
        assert len(doc["nodes"]) == len(ancestors(t.output)) and len(doc["groups"]) == 1
        assert len(doc["steps"]) == sum(1 for n in ancestors(t.output) if n.grad_fn is not None)
    else:
        assert b"folded" in data


def test_svg_and_png_have_the_legend(tmp_path):
    if not dot_available():
        pytest.skip("Graphviz is not installed (CI installs it)")
    path = tmp_path / "g.svg"
    write_graph(traced("(w*x+b)^2", {"w": 3, "x": 2, "b": 1}), str(path))
    svg = path.read_text()
    assert svg.count('<g id="node') == 6  # the legend is the graph's label, no extra nodes
    for word in ("legend", "leaf (requires grad)", "constant / data", "folded group"):
        assert word in svg


def test_repl_dot_and_html(tmp_path, capsys):
    from ddx.app.repl import Repl

    repl = Repl(no_color=True)
    repl.handle("W = tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=true)")
    repl.handle("s = (W * W).sum()")
    repl.handle("s.backward(retain_graph=true)")
    repl.handle(f":dot s {tmp_path / 's.dot'}")
    dot = (tmp_path / "s.dot").read_text()
    assert "<B>W</B>" in dot and "legend" in dot
    repl.handle(f":html s {tmp_path / 's.html'}")
    doc = page_data((tmp_path / "s.html").read_text())
    w = next(n for n in doc["nodes"] if n["name"] == "W")
    assert w["grad"]["grid"] == [["2", "4"], ["6", "8"]]
    out = capsys.readouterr().out
    assert f"wrote {tmp_path / 's.dot'}" in out and f"wrote {tmp_path / 's.html'}" in out


def test_graphviz_accepts_the_html_labels():
    if not dot_available():
        pytest.skip("Graphviz is not installed (CI installs it)")
    proc = subprocess.run([shutil.which("dot"), "-Tcanon"], input=to_dot(traced(*MATRIX)),
                          text=True, capture_output=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_graph_option_does_not_turn_on_check(run, tmp_path):
    code, out, err = run("x^2", "x=3", "--graph", str(tmp_path / "g.dot"))
    assert code == 0 and "finite differences" not in out
    code, out, err = run("sin(A @ v)", "A=[[1,2],[3,4],[5,6]]", "v=[0.1,0.2]", "--jacobian",
                         "--graph", str(tmp_path / "g.html"))
    assert code == 0, err
    doc = page_data((tmp_path / "g.html").read_text())
    assert doc["steps"] == [] and doc["backward"] is False  # (no backward for a vector output)
