"""ddx in a notebook (issue 17): a real Jupyter kernel runs a notebook, and its outputs' MIME
bundles carry the trace's repr and the one-liner's view as HTML."""

from __future__ import annotations

import ast
import os

import pytest

if os.environ.get("CI") or os.environ.get("DDX_REQUIRE_TORCH"):  # CI installs the extra
    import nbclient
    import nbformat
else:
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("ipykernel")

CELLS = [
    'import ddx\ng = ddx.trace("(w*x+b)^2", {"w": 3, "x": 2, "b": 1})\ng',
    "g.backward()\ng",
    "from ddx.out.render import one_liner\none_liner(g)",
    'ddx.trace("wrt*2", wrt=3).backward().grads',
    'ddx.trace("wrt*2", {"wrt": 3}, wrt="wrt").backward().grads',
    'h = ddx.trace("w*x", w=3, x=[1, 2])\nh.backward(gradient="ones", retain_graph=False)\nh',
    "sorted(n for n in dir(ddx) if not n.startswith('_'))",
    "help(ddx.trace)",
    'type(g.to_json()).__name__, type(g.to_dict()).__name__',
]


@pytest.fixture(scope="module")
def outputs():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": os.getcwd()}})
    client.execute()
    return [cell.outputs for cell in nb.cells]


def result(cell_outputs) -> dict:
    got = [o for o in cell_outputs if o.output_type == "execute_result"]
    assert len(got) == 1, cell_outputs
    return got[0].data


def test_a_trace_shows_its_expression_value_and_gradients(outputs):
    before = result(outputs[0])
    assert before["text/plain"] == ("<ddx.Trace '(w*x+b)^2': out = 49; call .backward() for "
                                    "gradients>")
    after = result(outputs[1])
    assert after["text/plain"] == "<ddx.Trace '(w*x+b)^2': out = 49; gradients w = 28, x = 42, b = 14>"
    html = after["text/html"]
    assert html.startswith("<pre") and "grad_fn tree" in html and "PowBackward0" in html
    assert "AccumulateGrad" in html and "<script" not in html
    assert ">28<" in html.replace(" ", "") or " 28 " in html  # w's gradient in the table


def test_a_rendered_view_displays_as_html(outputs):
    data = result(outputs[2])
    assert "<rich.console.Group" not in data["text/plain"]
    assert "gradients of out" in data["text/plain"] and "dout/d(leaf)" in data["text/html"]


def test_a_variable_named_like_an_option_is_a_binding(outputs):
    assert result(outputs[3])["text/plain"] == "{'wrt': array(2.)}"
    assert result(outputs[4])["text/plain"] == "{'wrt': array(2.)}"


def test_backward_takes_pytorchs_keywords(outputs):
    assert result(outputs[5])["text/plain"] == ("<ddx.Trace 'w*x': out = [3, 6]; gradients "
                                                "w = 3, x = [3, 3]>")


def test_dir_and_help_show_the_public_names_and_every_option(outputs):
    names = ast.literal_eval(result(outputs[6])["text/plain"])
    assert {"trace", "Trace", "DdxError"} <= set(names)
    text = "".join(o.get("text", "") for o in outputs[7] if o.output_type == "stream")
    for option in ("wrt", "no_grad", "dtype", "retain_grad", "bindings"):
        assert option in text
    assert result(outputs[8])["text/plain"] == "('str', 'dict')"
