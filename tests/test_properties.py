"""Hypothesis: the parser respects precedence, and reverse mode agrees with finite differences."""

from __future__ import annotations

import math

import numpy as np
from conftest import torch_or_skip
from exprgen import exprs, reference, to_text, torch_eval
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import ddx

values = st.floats(-1.5, 1.5, allow_nan=False).filter(lambda v: abs(v) > 1e-3)
envs = st.fixed_dictionaries({"a": values, "b": values, "c": values})


def finite(v) -> bool:
    return math.isfinite(v) and abs(v) < 1e8


@settings(max_examples=150, deadline=None)
@given(exprs, envs)
def test_minimal_and_full_parentheses_parse_to_the_same_value(tree, env):
    expected = reference(tree, env)
    assume(finite(expected))
    for text in (to_text(tree, parens=True), to_text(tree, parens=False)):
        got = float(ddx.trace(text, **env).value)
        assert math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-12), text


@settings(max_examples=120, deadline=None)
@given(exprs, envs)
def test_reverse_mode_matches_central_differences(tree, env):
    text = to_text(tree, parens=False)
    assume(finite(reference(tree, env)))
    g = ddx.trace(text, **env)
    if not g.output.requires_grad:
        return
    g.backward()
    h = 1e-6
    for name in env:
        up = dict(env, **{name: env[name] + h})
        down = dict(env, **{name: env[name] - h})
        numeric = (reference(tree, up) - reference(tree, down)) / (2 * h)
        analytic = g.grads[name]
        analytic = 0.0 if analytic is None else float(analytic)
        assume(finite(numeric))
        assert math.isclose(analytic, numeric, rel_tol=1e-5, abs_tol=1e-5), (text, name)


@settings(max_examples=80, deadline=None)
@given(exprs, envs)
def test_values_and_gradients_match_pytorch(tree, env):
    torch = torch_or_skip()
    text = to_text(tree, parens=False)
    assume(finite(reference(tree, env)))
    leaves = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in env.items()}
    out = torch_eval(tree, leaves, torch)
    g = ddx.trace(text, **env)
    if not isinstance(out, torch.Tensor) or not out.requires_grad:
        return
    out.backward()
    g.backward()
    assert math.isclose(float(g.value), out.item(), rel_tol=1e-12, abs_tol=1e-12)
    ours_fn = g.output.grad_fn.name if g.output.grad_fn is not None else None
    assert ours_fn == (type(out.grad_fn).__name__ if out.grad_fn is not None else None)
    for name, t in leaves.items():
        ours = g.grads[name]
        theirs = t.grad
        if theirs is None:
            assert ours is None
        else:
            np.testing.assert_allclose(float(ours), theirs.item(), rtol=1e-10, atol=1e-12)


SYMBOLS = list("xyv0123456789.+-*/^@()[],:;=e \n#") + ["sin(", "sum(", "dim=", "**", "max(",
                                                      "pi", "norm(", "x[", "]", "1e", "relu("]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(SYMBOLS), max_size=25).map("".join))
def test_any_input_gives_a_result_or_a_ddx_error(text):
    """No input makes ddx fail with anything but its own one-line error."""
    from ddx.errors import DdxError

    try:
        g = ddx.trace(text, x=0.5, y=2.0, v=[1.0, -2.0])
        if g.output.requires_grad and g.output.value.size == 1:
            g.backward()
        g.to_json()
    except DdxError as exc:
        assert exc.message and "\n" not in exc.message
        assert exc.exit_code in (1, 2)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(SYMBOLS), max_size=25).map("".join))
def test_values_and_gradients_first_agree_with_the_graph_for_any_input(text):
    """Asking for gradients before anything else takes the template path (ddx/replay/lean.py); it
    must raise the same errors and give the same numbers as the graph built afterwards."""
    from ddx.app.api import Trace
    from ddx.errors import DdxError

    bindings = {"x": 0.5, "y": 2.0, "v": [1.0, -2.0]}
    try:
        ordinary = Trace(text, bindings, lean=False)
        ordinary.backward()
        want = (ordinary.value.tobytes(), {k: None if g is None else g.tobytes()
                                           for k, g in ordinary.grads.items()})
    except DdxError as exc:
        want = (type(exc), exc.message)
    try:
        g = ddx.trace(text, **bindings)
        g.backward()
        got = (g.value.tobytes(), {k: None if v is None else v.tobytes()
                                   for k, v in g.grads.items()})
    except DdxError as exc:
        got = (type(exc), exc.message)
    assert got == want


REPL_SYMBOLS = ["x", "y", " = ", "tensor(", "2.0", "[1., 2.]", ", requires_grad=true", ")", "(",
                ".grad", ".grad_fn", ".next_functions", "[0]", ".backward()", ".retain_grad()",
                ".detach()", ".item()", ".zero_()", "\n", "with no_grad:", "  ", " * ", " + ",
                "sum(", "zero_grad()", "ones_like(", ".requires_grad_(", "true", "False", ";",
                "dtype=int64", "gradient=", ".shape", "print(", ":"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(REPL_SYMBOLS), max_size=30).map("".join))
def test_any_repl_script_runs_without_crashing(text):
    """Every statement either prints or reports one ddx error; the session survives."""
    from ddx.app.session import Session

    out: list[str] = []
    err: list[str] = []
    session = Session(out.append, err.append)
    session.run_script(text)
    session.run_script("z = tensor(1.0)\nz")
    assert out[-1] == "tensor(1.)"
    assert all(e.startswith(("error: ", "warning: ")) for e in err)
