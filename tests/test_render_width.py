"""Every view fits the width it is printed at (issue 17): 40, 60, 80, 120 and 200 columns, for the
seed example, a matrix expression, a 2-layer MLP and a 1,000-element vector; numbers are never
split, what is left out is named, the gradients stay; no trailing spaces in a pipe."""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest
from click.testing import CliRunner
from rich.cells import cell_len

from ddx.app.cli import main
from ddx.out import numbers

WIDTHS = (40, 60, 80, 120, 200)
SEED = ("(w*x+b)^2", "w=3", "x=2", "b=1")
MATRIX = ("sum(sin(A @ v))", "A=[[1.5,-2.25],[3.125,4],[5,-6.75]]", "v=[0.1,-0.2]")
MLP = ("h = relu(W1 @ x + b1); y = W2 @ h + b2; L = sum(y^2)",
       "W1=[[0.1,-0.2,0.3],[0.4,0.5,-0.6],[0.7,-0.8,0.9],[0.15,0.25,-0.35]]",
       "x=[1.5,-2.25,0.75]", "b1=[0.01,0.02,-0.03,0.04]",
       "W2=[[0.3,-0.1,0.2,0.5],[-0.4,0.6,0.1,-0.2]]", "b2=[0.1,-0.1]")
VECTOR = ("sum(sin(x)^2)", "x=[" + ",".join(str(i / 7) for i in range(1000)) + "]")
EXAMPLES = {"seed": SEED, "matrix": MATRIX, "mlp": MLP, "vector": VECTOR}
NUMBER = re.compile(r"-?(?:\d+\.?\d*(?:e[+-]\d+)?|nan|inf)")


def ddx(*args, width: int = 80):
    result = CliRunner().invoke(main, list(args), env={"COLUMNS": str(width)},
                                catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def section(text: str, title: str) -> str:
    """The lines of one titled table, up to the next blank-line-separated part."""
    start = text.index(title)
    rest = text[start:].split("\n\n")
    return "\n".join(rest[:2])


def shown_elements(value) -> list[str]:
    """The numbers a summarised array shows: all of them, or the first and last three."""
    flat = np.asarray(value, dtype=float).reshape(-1)
    if flat.size > numbers.THRESHOLD:
        flat = np.concatenate([flat[:3], flat[-3:]])
    return [numbers.scalar(v) for v in flat.tolist()]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", EXAMPLES)
def test_every_line_fits_and_every_gradient_is_shown_whole(name, width):
    args = EXAMPLES[name]
    code, out, err = ddx(*args, "--no-color", width=width)
    assert (code, err) == (0, "")
    lines = out.split("\n")
    assert max(cell_len(line) for line in lines) <= width
    assert all(line == line.rstrip() for line in lines)  # not a terminal: no padding
    _, doc_text, _ = ddx(*args, "--json")
    doc = json.loads(doc_text)
    grads = section(out, f"gradients of {doc['output']}")
    tokens = set(NUMBER.findall(grads))
    for leaf, g in doc["gradients"].items():
        assert leaf in grads
        for element in shown_elements(g):
            assert element in tokens, (leaf, element)  # a whole token: never split
    # the forward values of the leaves appear whole too (a number never straddles two lines)
    forward = section(out, "forward")
    tokens = set(NUMBER.findall(forward))
    for node in doc["nodes"]:
        if node["is_leaf"]:
            assert set(shown_elements(node["value"])) <= tokens, node["name"]


@pytest.mark.parametrize("width", WIDTHS)
def test_the_seed_tree_keeps_every_gradient_at_every_width(width):
    _, out, _ = ddx(*SEED, width=width)
    tree = out[out.index("grad_fn tree"):out.index("gradients of out")]
    for grad in ("grad 1", "grad 14", "grad 28", "grad 42"):
        assert grad in tree
    assert tree.count("grad 14") == 3
    assert "out = (w*x+b)^2" in tree  # the root's label is whole


def test_what_a_narrow_table_leaves_out_is_named():
    _, out, _ = ddx(*SEED, width=40)
    assert "… not shown: requires_grad, shape" in out
    _, out, _ = ddx(*SEED, width=80)
    assert "not shown" not in out and "requires_grad" in out


def test_the_seed_at_40_columns():
    _, out, _ = ddx(*SEED, width=40)
    assert out == """\
forward

  node           op             value
 ─────────────────────────────────────
  w              leaf           3
  x              leaf           2
  b              leaf           1
  w*x            MulBackward0   6
  w*x+b          AddBackward0   7
  out =          PowBackward0   49
  (w*x+b)^2

… not shown: requires_grad, shape
grad_fn tree
out = (w*x+b)^2  PowBackward0
│   value 49  grad 1
└ w*x+b  AddBackward0  value 7  grad 14
  ├ w*x  MulBackward0  value 6  grad 14
  │ ├ w  AccumulateGrad
  │ │     value 3  grad 28
  │ └ x  AccumulateGrad
  │       value 2  grad 42
  └ b  AccumulateGrad  value 1  grad 14
gradients of out

  leaf   shape   dout/d(leaf)
 ─────────────────────────────
  w      ()      28
  x      ()      42
  b      ()      14

"""


def test_the_seed_at_80_columns():
    _, out, _ = ddx(*SEED, width=80)
    assert out == """\
forward

  node              op             shape   value   requires_grad
 ────────────────────────────────────────────────────────────────
  w                 leaf           ()      3       True
  x                 leaf           ()      2       True
  b                 leaf           ()      1       True
  w*x               MulBackward0   ()      6       True
  w*x+b             AddBackward0   ()      7       True
  out = (w*x+b)^2   PowBackward0   ()      49      True

grad_fn tree
out = (w*x+b)^2  PowBackward0  value 49  grad 1
└── w*x+b  AddBackward0  value 7  grad 14
    ├── w*x  MulBackward0  value 6  grad 14
    │   ├── w  AccumulateGrad  value 3  grad 28
    │   └── x  AccumulateGrad  value 2  grad 42
    └── b  AccumulateGrad  value 1  grad 14
gradients of out

  leaf   shape   dout/d(leaf)
 ─────────────────────────────
  w      ()      28
  x      ()      42
  b      ()      14

"""


def test_the_mlp_tree_folds_its_arrays_instead_of_cropping_them():
    _, out, _ = ddx(*MLP, width=80)
    tree = out[out.index("grad_fn tree"):out.index("gradients of L")]
    assert "h  ReluBackward0" in tree
    assert "grad [0.6973, -0.3113, 0.4029, 1.0833]" in tree  # h's gradient, whole
    assert "b1  AccumulateGrad" in tree and "grad [0.6973, 0, 0.4029, 0]" in tree


def test_a_deep_tree_at_40_columns_says_where_it_stops():
    _, out, _ = ddx(*MLP, width=40)
    tree = out[out.index("grad_fn tree"):out.index("gradients of L")]
    assert "W2  AccumulateGrad" in tree and "b2  AccumulateGrad" in tree
    assert "grad [2.099, -0.169]" in tree


def test_one_number_format_and_precision():
    code, out, _ = ddx("x/3", "x=1", width=80)
    assert code == 0 and "0.333333" in out and "0.3333333333" not in out
    code, out, _ = ddx("x/3", "x=1", "--precision", "3", width=80)
    assert "0.333 " in out or out.rstrip().endswith("0.333") or "0.333\n" in out
    assert "0.3333" not in out
    code, out, _ = ddx("x/3", "x=1", "--precision", "3", "--json")
    assert json.loads(out)["gradients"]["x"] == 1 / 3  # --json keeps every digit
    code, _, err = ddx("x", "x=1", "--precision", "0")
    assert code == 2 and err.startswith("error: ") and "--precision" in err


def test_the_number_format():
    assert [numbers.scalar(v) for v in (28.0, -0.0, 0.2889390724562437, 1e-5, 123456789.0,
                                       float("nan"), float("-inf"), 3, True)] == \
        ["28", "0", "0.288939", "1e-05", "1.23457e+08", "nan", "-inf", "3", "True"]
    assert float(numbers.scalar(0.2889390724562437, 17)) == 0.2889390724562437  # every digit
    assert numbers.lines(np.array([-0.0, 1.5])) == ["[0, 1.5]"]
    a = np.linspace(-1, 1, 7) / 3
    assert numbers.narrowest(a) == len("[-0.333333,")
    for width in range(numbers.narrowest(a), 40):  # wrapped between elements, never inside
        got = numbers.fitted(a, 6, width)
        assert max(map(len, got)) <= width
        assert NUMBER.findall(" ".join(got)) == [numbers.scalar(v) for v in a.tolist()]
    assert numbers.fitted(a, 6, 8) == ["…(7,)"]  # too narrow for one number: the shape


@pytest.mark.parametrize("width", (40, 120))
@pytest.mark.parametrize("name", ("seed", "mlp"))
def test_in_a_real_terminal_with_colour_every_line_fits(name, width):
    import sys

    pexpect = pytest.importorskip("pexpect")
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS")}
    env["TERM"] = "xterm-256color"
    child = pexpect.spawn(sys.executable, ["-m", "ddx", *EXAMPLES[name]], env=env,
                          encoding="utf-8", timeout=60, dimensions=(50, width))
    shown = child.read()
    child.close()
    assert child.exitstatus == 0, shown
    assert "\x1b[" in shown  # a terminal: in colour
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown).replace("\r", "")
    assert max(cell_len(line) for line in plain.split("\n")) <= width
    assert "gradients of" in plain and "AccumulateGrad" in plain


def test_a_scalar_hessian_is_one_labelled_symmetric_grid():
    _, out, _ = ddx(*SEED, "--hessian", width=80)
    grid = out[out.index("Hessian of out"):]
    assert """\

  d²out    w    x   b
 ─────────────────────
  w        8   26   4
  x       26   18   6
  b        4    6   2
""" in grid
    assert "d2out/dwdw" not in out and grid.count("d²out") == 1


def test_a_jacobian_is_a_grid_per_tensor_input_with_element_labels():
    _, out, _ = ddx("sin(A @ v)", "A=[[1,2],[3,4],[5,6]]", "v=[0.1,0.2]", "--jacobian", width=80)
    grids = out[out.index("Jacobian of out"):]
    assert "dout/dv  (shape (3, 2))" in grids
    assert "  out \\ v        v[0]        v[1]" in grids
    assert "  out[2]    -0.644222   -0.773067" in grids  # cos(1.7) * [5, 6]... by row
    assert "A[0,0]" in grids and "A[2,1]" in grids
    _, narrow, _ = ddx("sin(A @ v)", "A=[[1,2],[3,4],[5,6]]", "v=[0.1,0.2]", "--jacobian",
                       width=40)
    head = next(line for line in narrow.splitlines() if "out \\ A" in line)
    assert "…" in head and "A[0,0]" in head and "A[2,1]" in head  # the middle gave way


def test_minus_zero_is_shown_as_zero():
    _, out, _ = ddx("x*0", "x=-1", "--jacobian", width=80)
    assert "-0" not in out
    _, doc, _ = ddx("x*0", "x=-1", "--json")
    assert json.loads(doc)["value"] == 0.0  # (-0.0 in the JSON, where every bit is kept)


def test_retained_intermediates_have_their_own_table():
    _, out, _ = ddx("y = w*x; L = y^2", "w=3", "x=2", "--wrt", "w", "--retain-grad", width=80)
    leaves = section(out, "gradients of L")
    assert "  w      ()      24" in leaves and " y " not in leaves
    mids = section(out, "retained gradients of L (intermediate nodes)")
    assert "  y      MulBackward0   ()      12" in mids
    assert "  L      PowBackward0   ()      1" in mids


def test_a_nan_forward_value_says_there_is_no_real_value():
    code, out, err = ddx("sqrt(-1)", width=80)
    assert code == 0 and "warning: sqrt(-1) gives nan" in err
    forward = section(out, "forward")
    assert "out = sqrt(-1)" in forward and "nan (no real value)" in forward


def test_any_vector_at_any_width_fits_and_keeps_its_numbers_whole():
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from rich.console import Console

    import ddx
    from ddx.out.render import one_liner

    values = st.floats(allow_nan=True, allow_infinity=True, width=64)

    @settings(max_examples=60, deadline=None)
    @given(st.lists(values, min_size=1, max_size=30), st.integers(40, 200),
           st.integers(1, 17))
    def check(xs, width, precision):
        g = ddx.trace("sum(x * w)", {"x": np.array(xs), "w": 1.5})
        g.backward()
        console = Console(width=width, record=True, color_system=None,
                          file=open(os.devnull, "w"))
        console.print(one_liner(g, precision=precision))
        text = console.export_text()
        assert max(cell_len(line.rstrip()) for line in text.split("\n")) <= width
        grads = section(text, "gradients of out")
        tokens = set(NUMBER.findall(grads))
        for element in [numbers.scalar(v, precision) for v in (1.5,)]:
            assert element in tokens  # x's gradient, whole
        w_grad = numbers.scalar(float(g.grads["w"]), precision)
        assert w_grad in tokens, (w_grad, grads)

    check()


def test_a_long_constant_input_folds_under_its_node():
    _, out, _ = ddx("x * [1.5,2.5,3.5,4.5,5.5,6.5,7.5,8.5]", "x=1", "--grad-output", "ones",
                    width=40)
    tree = out[out.index("grad_fn tree"):out.index("gradients of out")]
    assert "└ None  (constant)\n      [1.5, 2.5, 3.5, 4.5, 5.5, 6.5,\n       7.5, 8.5]" in tree
    assert max(cell_len(line) for line in tree.split("\n")) <= 40
