"""Forward mode, finite differences, Jacobians, Hessians and the explain ledger."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest
from exprgen import exprs, reference, to_text
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_ops import sample

import ddx
from ddx.engine.reverse import unbroadcast
from ddx.ops import OPS


@pytest.mark.parametrize("name", sorted(OPS))
def test_jvp_is_the_transpose_of_vjp(name):
    """<g, J t> == <J^T g, t> for random g and t: the forward and reverse rules agree."""
    op = OPS[name]
    rng = np.random.default_rng(zlib.crc32(name.encode() + b"jvp"))  # (not hash(): per process)
    inputs, kw = sample(name, rng)
    out = np.asarray(op.fn(*inputs, **kw))
    g = rng.uniform(-1, 1, out.shape)
    for i, x in enumerate(inputs):
        t = rng.uniform(-1, 1, np.shape(x))
        tangents = [t if k == i else None for k in range(len(inputs))]
        if op.jvp is not None:
            jt = op.jvp(tangents, out, *inputs, **kw)
        else:
            jt = op.vjp[i](t, out, *inputs, **kw)
        lhs = float(np.sum(g * np.broadcast_to(jt, out.shape)))
        rhs = float(np.sum(unbroadcast(np.asarray(op.vjp[i](g, out, *inputs, **kw)),
                                       np.shape(x)) * t))
        assert lhs == pytest.approx(rhs, rel=1e-12, abs=1e-12), (name, i)


values = st.floats(-1.5, 1.5, allow_nan=False).filter(lambda v: abs(v) > 1e-3)
envs = st.fixed_dictionaries({"a": values, "b": values, "c": values})


@settings(max_examples=100, deadline=None)
@given(exprs, envs)
def test_forward_equals_reverse_and_both_equal_differences(tree, env):
    text = to_text(tree, parens=False)
    v = reference(tree, env)
    assume(math.isfinite(v) and abs(v) < 1e6)
    g = ddx.trace(text, **env)
    if not g.output.requires_grad:
        return
    g.backward()
    fwd = g.forward_mode()["gradients"]
    check = g.check()
    for name in g.leaves:
        rev = 0.0 if g.grads[name] is None else float(g.grads[name])
        assert float(fwd[name]) == pytest.approx(rev, rel=1e-12, abs=1e-12)
        assert float(check["gradients"][name]) == pytest.approx(rev, rel=1e-6, abs=1e-6)


def test_forward_mode_on_the_seed_counts_passes():
    g = ddx.trace("(w*x+b)^2", w=3, x=2, b=1).backward()
    result = g.forward_mode()
    assert {k: float(v) for k, v in result["gradients"].items()} == {"w": 28, "x": 42, "b": 14}
    assert result["cost"]["forward"] == {"passes": 3, "ops": 8}  # w, x: 3 ops; b: 2 ops
    assert result["cost"]["reverse"]["passes"] == 2
    assert result["cost"]["reverse"]["forward_ops"] == 3


def test_forward_mode_with_many_inputs_costs_one_pass_per_element():
    g = ddx.trace("sum(x^2)", x=list(range(50))).backward()
    assert g.forward_mode()["cost"]["forward"]["passes"] == 50
    np.testing.assert_array_equal(g.extras["forward"]["gradients"]["x"], 2 * np.arange(50))


def test_check_reports_step_and_verdict_and_float32_warning():
    g = ddx.trace("sin(x) * exp(y)", x=0.5, y=0.25).backward()
    result = g.check()
    assert result["ok"] and result["step"] == 1e-6 and result["max_rel_error"] < 1e-8
    g32 = ddx.trace("sin(x) * exp(y)", x=0.5, y=0.25, dtype="float32").backward()
    result32 = g32.check()
    assert result32["ok"] and result32["step"] == 1e-3
    assert "float32: finite differences are unreliable" in result32["warning"]


def test_jacobian_of_a_linear_map_is_the_matrix_both_ways():
    A = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    g = ddx.trace("A @ v", A=A, v=[0.5, -1.0])
    result = g.jacobian()
    np.testing.assert_array_equal(result["reverse"]["v"], A)
    np.testing.assert_array_equal(result["forward"]["v"], A)
    assert result["reverse"]["A"].shape == (3, 3, 2)
    # d(Av)_i/dA_jk = delta_ij v_k
    expected = np.einsum("ij,k->ijk", np.eye(3), [0.5, -1.0])
    np.testing.assert_array_equal(result["reverse"]["A"], expected)
    assert result["cost"]["reverse"]["passes"] == 3 and result["cost"]["forward"]["passes"] == 8


def test_jacobian_of_elementwise_sin_is_diagonal_cos():
    x = np.array([0.1, 0.7, -1.3])
    g = ddx.trace("sin(x)", x=x.tolist())
    result = g.jacobian()
    np.testing.assert_allclose(result["reverse"]["x"], np.diag(np.cos(x)), rtol=1e-15)
    assert result["difference"] == (0.0, 0.0)


def test_hessian_closed_forms():
    g = ddx.trace("(w*x+b)^2", w=3, x=2, b=1).backward()
    H = g.hessian()["hessian"]
    # L = y^2, y = wx + b: d2L/dw2 = 2x^2, d2L/dwdx = 2(y + wx), d2L/db2 = 2
    assert float(H["w"]["w"]) == 8 and float(H["w"]["x"]) == 26 and float(H["x"]["w"]) == 26
    assert float(H["x"]["x"]) == 18 and float(H["b"]["b"]) == 2 and float(H["w"]["b"]) == 4
    v = np.array([0.3, -0.2, 0.9])
    g = ddx.trace("sum(exp(v))", v=v.tolist()).backward()
    result = g.hessian()
    np.testing.assert_allclose(result["hessian"]["v"]["v"], np.diag(np.exp(v)), rtol=1e-15)
    assert result["check"]["ok"]
    Q = np.array([[2.0, 1.0], [1.0, 3.0]])
    g = ddx.trace("x @ (Q @ x) / 2", Q=Q.tolist(), x=[1.0, 2.0], wrt="x").backward()
    np.testing.assert_allclose(g.hessian()["hessian"]["x"]["x"], Q, rtol=1e-15)


@pytest.mark.parametrize("text, bindings", [
    ("(w*x+b)^2", {"w": 3, "x": 2, "b": 1}),
    ("a = 2; b = a*a; c = b + a*b", {}),
    ("sin(x*y) + x/y - y^x", {"x": 0.7, "y": 1.9}),
])
def test_explain_path_products_multiply_and_add_up(text, bindings):
    g = ddx.trace(text, **bindings).backward()
    ledger = g.explain()
    for name, entry in ledger["leaves"].items():
        assert entry["mode"] == "paths"
        for path in entry["paths"]:
            assert math.prod(f["value"] for f in path["factors"]) == pytest.approx(
                path["product"], rel=1e-15)
        assert entry["sum"] == pytest.approx(float(g.grads[name]), rel=1e-12)


def test_explain_factors_are_labelled_as_in_the_seed():
    g = ddx.trace("(w*x+b)^2", w=3, x=2, b=1).backward()
    path = g.explain()["leaves"]["w"]["paths"][0]["factors"]
    assert [(f["node"], f["local"], f["value"]) for f in path] == [
        ("PowBackward0", "2*(w*x+b)", 14.0), ("AddBackward0", "1", 1.0),
        ("MulBackward0", "x", 2.0)]


def test_explain_names_summed_broadcast_axes():
    g = ddx.trace("sum(w * x + b)", w=2, x=[1, 2, 3], b=[[1], [2]]).backward()
    steps = g.explain()["steps"]
    to_w = next(s for s in steps if s["input"] == "w")
    to_b = next(s for s in steps if s["input"] == "b")
    assert to_w["summed_axes"] == [0] and float(to_w["gets"]) == 12  # 2 rows x (1+2+3)
    assert to_b["summed_axes"] == [1] and to_b["gets"].tolist() == [[3], [3]]


def test_explain_names_where_nan_arose_with_a_hint():
    g = ddx.trace("sqrt(x) * 0 + x", x=0).backward()
    bad = g.explain()["nonfinite"]
    assert bad["pass"] == "backward" and bad["node"] == "SqrtBackward0"
    assert "1/(2*sqrt(x)) = inf" in bad["why"] and "gives nan" in bad["why"]
    assert "sqrt(x + 1e-12)" in bad["hint"]
    g = ddx.trace("log(x) + 1", x=0).backward()
    bad = g.explain()["nonfinite"]
    assert bad["pass"] == "forward" and bad["node"] == "LogBackward0"


def test_explain_falls_back_to_node_sums_when_paths_multiply():
    text = "y = x; " + "; ".join(["y = y * y + y"] * 8)
    g = ddx.trace(text, x=0.1).backward()
    entry = g.explain()["leaves"]["x"]
    assert entry["mode"] == "nodes" and entry["path_count"] > 32


def test_cli_json_has_forward_check_jacobian_hessian_explain(run_json):
    code, doc, _ = run_json("(w*x+b)^2", "w=3", "x=2", "b=1", "--forward", "--check",
                            "--hessian", "--explain")
    assert code == 0
    assert doc["forward"] == {"w": 28.0, "x": 42.0, "b": 14.0}
    assert doc["check"]["ok"] is True and doc["check"]["step"] == 1e-6
    assert doc["hessian"]["w"]["x"] == 26.0
    assert doc["explain"]["leaves"]["b"]["sum"] == 14.0
    code, doc, _ = run_json("sin(x)", "x=[0,1]", "--jacobian")
    assert code == 0
    assert doc["jacobian"]["x"] == [[1.0, 0.0], [0.0, math.cos(1.0)]]


def test_cli_human_views(run):
    code, out, _ = run("(w*x+b)^2", "w=3", "x=2", "b=1", "--forward", "--check", "--explain",
                       "--hessian", "--no-color")
    assert code == 0
    assert "reverse mode vs forward mode" in out and "3 (one per input element)" in out
    assert "ok: max abs error" in out
    flat = " ".join(out.split())
    assert "dout/dw = [PowBackward0] 2*(w*x+b) = 14 × [AddBackward0] 1 × [MulBackward0] x = 2 → 28" in flat
    assert "forward-over-reverse" in out
    assert run("sin(x)", "x=[0,1]", "--hessian")[0] == 2


def test_logsumexp_of_nothing_is_minus_inf_as_in_pytorch(run_json):
    code, doc, _ = run_json("logsumexp(x)", "x=[]")
    assert code == 0 and doc["value"] == "-inf" and doc["gradients"] == {"x": []}


def test_a_hessian_check_on_an_infinite_gradient_says_it_cannot_check(run):
    code, out, err = run("z/0", "z=2", "--hessian", "--no-color")
    assert code == 0
    assert "unchecked: the gradient is not finite near this point" in out
    assert "RuntimeWarning" not in err and "agree to 0" not in out


def test_compare_lets_a_nan_win():
    from ddx.engine.forward import compare

    max_abs, _ = compare({"x": np.array([0.0, 1.0])}, {"x": np.array([np.nan, 1.0])})
    assert math.isnan(max_abs)


def test_explain_names_the_kink_pytorch_takes(run):
    code, out, _ = run("relu(x) + maximum(x, y)", "x=0", "y=0", "--explain", "--no-color")
    assert code == 0
    out = " ".join(out.split())  # (a long note wraps, between words, at the view's width)
    assert "kink at [ReluBackward0] relu(x): at 0 PyTorch takes the slope 0" in out
    assert ("kink at [MaximumBackward0] maximum(x, y): at a tie PyTorch gives each input half "
            "the gradient") in out
    code, out, _ = run("relu(x)", "x=1", "--explain", "--no-color")
    assert "kink" not in out


def test_a_rule_that_calls_an_undifferentiated_function_gets_a_worded_hessian_error(run):
    from ddx.ops import op, unregister

    op("clipped", "ClippedBackward0", lambda a: np.clip(a, -1, 1),
       lambda g, o, a: g * np.clip(a * 0 + 1, 0, 1), call="unary")
    try:
        code, out, err = run("clipped(x)", "x=0.5", "--hessian")
        assert code == 1
        assert err.splitlines()[0] == ("error: --hessian: the derivative rule of clipped calls "
                                       "numpy.clip, which no row of the op table differentiates")
        assert run("clipped(x)", "x=0.5", "--json")[0] == 0  # every other mode works
    finally:
        unregister("clipped")


def test_row_parameters_by_position_or_name_as_pytorch(run_json, run):
    assert run_json("leaky_relu(x, 0.2)", "x=-0.5")[1]["gradients"] == {"x": 0.2}
    assert run_json("leaky_relu(x, negative_slope=0.2)", "x=-0.5")[1]["value"] == -0.1
    assert run_json("leaky_relu(x)", "x=-0.5")[1]["gradients"] == {"x": 0.01}
    assert run_json("hardtanh(x, max_val=0.25)", "x=0.5")[1]["value"] == 0.25
    code, _, err = run("leaky_relu(x, slope=1)", "x=1")
    assert code == 1 and "leaky_relu() got an unexpected keyword argument 'slope'" in err
    code, _, err = run("leaky_relu(x, 1, 2)", "x=1")
    assert code == 1 and "leaky_relu() takes at most 2 arguments (3 given)" in err
    code, _, err = run("leaky_relu(x, 0.1, negative_slope=0.2)", "x=1")
    assert code == 1 and "got multiple values for argument 'negative_slope'" in err
    code, _, err = run("leaky_relu(x, x)", "x=1")
    assert code == 1 and "negative_slope must be a number" in err
