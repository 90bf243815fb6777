"""Graph pictures (DOT, Mermaid, SVG/PNG through Graphviz) and scripts emitted for PyTorch/JAX."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from conftest import torch_or_skip

import ddx
from ddx.out.emit import emit
from ddx.out.pictures import collect, to_dot, to_mermaid


def seed():
    return ddx.trace("(w*x+b)^2", w=3, x=2, b=1).backward()


def dot_available() -> bool:
    if shutil.which("dot"):
        return True
    if os.environ.get("DDX_REQUIRE_DOT"):
        raise AssertionError("Graphviz 'dot' is required here")
    return False


def test_dot_has_one_node_per_tensor_and_both_kinds_of_edges():
    text = to_dot(seed())
    nodes = re.findall(r"^  (n\d+) \[label=", text, re.M)
    solid = re.findall(r"^  n\d+ -> n\d+;$", text, re.M)
    dashed = re.findall(r"^  n\d+ -> n\d+ \[style=dashed", text, re.M)
    assert len(nodes) == 6  # w, x, b, w*x, w*x+b, the output
    assert len(solid) == 5 and len(dashed) == 5
    assert 'label="w\\nAccumulateGrad\\nvalue 3\\ngrad 28"' in text
    assert "MulBackward0\\nvalue 6\\ngrad 14" in text
    assert 'fillcolor="#d3f9d8"' in text  # the output is green


def test_shared_subexpression_is_drawn_once():
    g = ddx.trace("y = w*x; y*y + y", w=3, x=2).backward()
    assert len(collect(g.output)) == 5  # w, x, y, y*y, the sum: y once
    assert to_dot(g).count('label="y   [*]') == 1


def test_constants_are_their_own_style_and_big_arrays_are_summarised():
    g = ddx.trace("sum(x * 2 + [1, 2, 3])", x=list(range(3))).backward()
    assert "dashed" in to_dot(g)
    g = ddx.trace("sum(x)", x=list(range(1000))).backward()
    assert "..." in to_dot(g)


def test_dot_parses_with_graphviz_and_renders(tmp_path):
    if not dot_available():
        pytest.skip("Graphviz is not installed (CI installs it)")
    proc = subprocess.run(["dot", "-Tcanon"], input=to_dot(seed()), text=True,
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    for ext in ("svg", "png"):
        out = tmp_path / f"g.{ext}"
        code = subprocess.run([sys.executable, "-m", "ddx", "(w*x+b)^2", "w=3", "x=2", "b=1",
                               "--graph", str(out)], capture_output=True, timeout=60).returncode
        assert code == 0 and out.stat().st_size > 1000
    assert (tmp_path / "g.svg").read_text().count("<g id=\"node") == 6


def test_missing_graphviz_is_a_clear_error(tmp_path, monkeypatch, run):
    monkeypatch.setenv("PATH", str(tmp_path))
    code, _, err = run("x^2", "x=3", "--graph", str(tmp_path / "g.svg"))
    assert code == 1
    assert "Graphviz's 'dot' program is not installed" in err and "apt-get install graphviz" in err
    code, _, _ = run("x^2", "x=3", "--graph", str(tmp_path / "g.dot"))
    assert code == 0 and (tmp_path / "g.dot").read_text().startswith("digraph ddx {")


def test_mermaid_is_well_formed():
    text = to_mermaid(seed())
    lines = text.splitlines()
    assert lines[0] == "flowchart BT"
    node_lines = [line for line in lines if re.match(r"^  n\d+(\(\[|\[)\"", line)]
    assert len(node_lines) == 6
    for line in node_lines:
        assert line.count('"') == 2 and re.search(r":::(leaf|const|op|out)$", line)
    assert sum(" --> " in line for line in lines) == 5
    assert sum(" -.-> " in line for line in lines) == 5
    assert all(re.match(r"^  classDef \w+ fill:#[0-9a-f]{6},stroke:#[0-9a-f]{6}$", line)
               for line in lines if "classDef" in line)


def test_repl_dot_uses_the_same_writer(tmp_path):
    from ddx.app.repl import Repl

    repl = Repl(no_color=True)
    repl.handle("w = tensor(3.0, requires_grad=true)")
    repl.handle("y = w * w")
    path = tmp_path / "y.dot"
    repl.handle(f":dot y {path}")
    assert path.read_text().startswith("digraph ddx {") and "MulBackward0" in path.read_text()


EXPRESSIONS = [
    ("(w*x+b)^2", {"w": 3, "x": 2, "b": 1}, None),
    ("sum(sin(A @ v)) + 2/v[0] - logsumexp(v)", {"A": "[[1,2],[3,4]]", "v": "[0.5,1.5]"}, None),
    ("y = w*x + b; L = mean(y^2) + norm(w) + sum(max(x, dim=0)[0])",
     {"w": "[0.5,-1]", "x": "[[1,2],[3,4]]", "b": "[0.1]"}, None),
    ("sigmoid(z) * tanh(z) + relu(z - 0.5) + softplus(-z) + maximum(z, 0.3)", {"z": "[0.1,0.9]"},
     "ones"),
    ("2 - x ^ 3 + 2 ^ x + sqrt(x) * log(x) / exp(x) + dot(v, v) + sum(transpose(M)[0, 1:])",
     {"x": 1.5, "v": "[1,2]", "M": "[[1,2,3],[4,5,6]]"}, None),
]


def run_emitted(lib: str, text: str, bindings: dict, grad_output, tmp_path) -> None:
    """Emit the script for ``lib``, run it in a fresh Python, compare with ddx's own answers."""
    g = ddx.trace(text, bindings)
    g.backward(grad_output)
    script = tmp_path / "check.py"
    script.write_text(emit(g, lib))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    theirs = json.loads(proc.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(theirs["value"], g.value, rtol=1e-12)
    for name, grad in g.grads.items():
        np.testing.assert_allclose(theirs["gradients"][name], grad, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("text, bindings, grad_output", EXPRESSIONS)
def test_emitted_torch_script_runs_and_agrees(text, bindings, grad_output, tmp_path):
    torch_or_skip()
    run_emitted("torch", text, bindings, grad_output, tmp_path)


@pytest.mark.parametrize("text, bindings, grad_output", EXPRESSIONS)
def test_emitted_jax_script_runs_and_agrees(text, bindings, grad_output, tmp_path):
    try:
        import jax  # noqa: F401
    except ImportError:
        if os.environ.get("DDX_REQUIRE_JAX"):
            raise
        pytest.skip("JAX is not installed")
    run_emitted("jax", text, bindings, grad_output, tmp_path)


def test_emit_from_the_cli(run):
    code, out, _ = run("(w*x+b)^2", "w=3", "x=2", "b=1", "--emit", "torch")
    assert code == 0 and out.startswith("# Generated by ddx") and "out.backward()" in out
    code, out, _ = run("(w*x+b)^2", "w=3", "x=2", "b=1", "--emit", "jax")
    assert code == 0 and "jax.vjp(f, *args)" in out
