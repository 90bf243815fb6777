"""Reverse mode with PyTorch's semantics: the seed's numbers, accumulation, broadcasting, names."""

from __future__ import annotations

import numpy as np
import pytest

import ddx
from ddx.errors import DdxError
from ddx.replay.cache import TEMPLATES


def grads(text, **bindings):
    g = ddx.trace(text, **bindings)
    g.backward()
    return {k: (v.tolist() if v is not None else None) for k, v in g.grads.items()}


def test_seed_listing_01_forward_value():
    g = ddx.trace("y = w * x; z = y + b", x=2.0, w=3.0, b=1.0)
    assert float(g.value) == 7.0
    assert g.output.grad_fn.name == "AddBackward0"
    assert g.evaluator.env["y"].grad_fn.name == "MulBackward0"


def test_seed_loss_gradients_42_28_14():
    assert grads("y = w*x + b; loss = y*y", x=2, w=3, b=1) == {"x": 42.0, "w": 28.0, "b": 14.0}
    assert grads("(w*x+b)^2", w=3, x=2, b=1) == {"w": 28.0, "x": 42.0, "b": 14.0}


def test_seed_non_scalar_needs_gradient_argument():
    g = ddx.trace("w * x_vector + b", x_vector="[2, 4]", w=3, b=1)
    with pytest.raises(DdxError, match="^grad can be implicitly created only for scalar outputs$"):
        g.backward()
    g.backward("ones")
    assert g.grads["x_vector"].tolist() == [3.0, 3.0]
    assert float(g.grads["w"]) == 6.0  # broadcast scalar: summed back to its own shape
    assert float(g.grads["b"]) == 2.0


def test_diamond_accumulates():
    assert grads("a = 2; b = a + a; c = b + b") == {"a": 4.0}
    assert grads("x*x*x + x", x=2) == {"x": 13.0}  # 3x^2 + 1
    assert grads("a*a", a=3) == {"a": 6.0}  # two parent slots, not one


def test_reassignment_later_uses_see_the_new_value():
    g = ddx.trace("y = x * 2; y = y + 1; y * y", x=3)
    g.backward()
    assert float(g.value) == 49.0
    assert float(g.grads["x"]) == 2 * 7 * 2


def test_broadcast_matrix_plus_row_and_column():
    g = ddx.trace("sum(A * r + c)", A="[[1,2,3],[4,5,6]]", r="[1,2,3]", c="[[1],[2]]")
    g.backward()
    assert g.grads["A"].tolist() == [[1, 2, 3], [1, 2, 3]]
    assert g.grads["r"].tolist() == [5, 7, 9]
    assert g.grads["c"].tolist() == [[3], [3]]


def test_wrt_and_no_grad_select_leaves():
    g = ddx.trace("(w*x+b)^2", w=3, x=2, b=1, wrt="w")
    g.backward()
    assert list(g.grads) == ["w"] and float(g.grads["w"]) == 28
    g = ddx.trace("(w*x+b)^2", w=3, x=2, b=1, no_grad="x")
    g.backward()
    assert {k: float(v) for k, v in g.grads.items()} == {"w": 28, "b": 14}


def test_retain_grad_keeps_intermediate_gradients():
    g = ddx.trace("y = w*x + b; L = y^2", w=3, x=2, b=1, retain_grad=True)
    g.backward()
    assert float(g.evaluator.env["y"].grad) == 14.0
    assert g.output_name == "L"


def test_float32_stays_float32():
    g = ddx.trace("(w*x+b)^2 * 0.5", w=3, x=2, b=1, dtype="float32")
    g.backward()
    assert g.value.dtype == np.float32
    assert all(v.dtype == np.float32 for v in g.grads.values())


@pytest.mark.parametrize("text, name, nexts", [
    ("x + 2", "AddBackward0", ["AccumulateGrad", None]),
    ("2 + x", "AddBackward0", ["AccumulateGrad", None]),
    ("x - 2", "SubBackward0", ["AccumulateGrad", None]),
    ("2 - x", "RsubBackward1", ["AccumulateGrad"]),
    ("x * 2", "MulBackward0", ["AccumulateGrad", None]),
    ("c * x", "MulBackward0", [None, "AccumulateGrad"]),
    ("x / 2", "DivBackward0", ["AccumulateGrad", None]),
    ("2 / x", "MulBackward0", ["ReciprocalBackward0", None]),
    ("-x", "NegBackward0", ["AccumulateGrad"]),
    ("x ^ 2", "PowBackward0", ["AccumulateGrad"]),
    ("x ** 0.5", "PowBackward0", ["AccumulateGrad"]),
    ("x ^ x", "PowBackward1", ["AccumulateGrad", "AccumulateGrad"]),
    ("2 ^ x", "PowBackward2", ["AccumulateGrad"]),
    ("sum(v)", "SumBackward0", ["AccumulateGrad"]),
    ("sum(v, dim=0)", "SumBackward1", ["AccumulateGrad"]),
    ("mean(v)", "MeanBackward0", ["AccumulateGrad"]),
    ("mean(v, dim=0)", "MeanBackward1", ["AccumulateGrad"]),
    ("max(v)", "MaxBackward1", ["AccumulateGrad"]),
    ("max(v, dim=0)[0]", "MaxBackward0", ["AccumulateGrad"]),
    ("norm(v)", "LinalgVectorNormBackward0", ["AccumulateGrad"]),
    ("v @ v", "DotBackward0", ["AccumulateGrad", "AccumulateGrad"]),
    ("M @ v", "MvBackward0", ["AccumulateGrad", "AccumulateGrad"]),
    ("M @ M", "MmBackward0", ["AccumulateGrad", "AccumulateGrad"]),
    ("v[0]", "SelectBackward0", ["AccumulateGrad"]),
    ("v[1:]", "SliceBackward0", ["AccumulateGrad"]),
    ("M[0, :]", "SelectBackward0", ["AccumulateGrad"]),
    ("M[0, 1:]", "SliceBackward0", ["SelectBackward0"]),
    ("sigmoid(x)", "SigmoidBackward0", ["AccumulateGrad"]),
    ("maximum(v, x)", "MaximumBackward0", ["AccumulateGrad", "AccumulateGrad"]),
])
def test_grad_fn_names_and_next_functions_match_pytorch(text, name, nexts):
    g = ddx.trace(text, x=2, c=3, v="[1, 2]", M="[[1, 2], [3, 4]]", no_grad="c")
    fn = g.output.grad_fn
    assert fn.name == name
    assert [f.name if f is not None else None for f, _ in fn.next_functions] == nexts
    assert all(slot == 0 for _, slot in fn.next_functions)


def test_leaves_and_requires_grad_propagation():
    g = ddx.trace("y = w * x + b", x="[1, 2]", w="[0.5, -1]", b="[0.1]", no_grad="x")
    env = g.evaluator.env
    assert env["x"].requires_grad is False and env["x"].is_leaf
    assert env["w"].requires_grad and env["w"].grad_fn is None
    assert env["y"].requires_grad and not env["y"].is_leaf


def test_domain_problems_warn_and_name_the_node():
    g = ddx.trace("log(x) + sqrt(y)", x=0, y=-1)
    g.backward()
    assert float(g.value) != float(g.value)  # nan
    text = " ".join(g.warnings)
    assert "log(x)" in text and "-inf" in text and "LogBackward0" in text
    assert "sqrt(y)" in text and "nan" in text
    assert np.isinf(g.grads["x"]) and np.isnan(g.grads["y"])


def test_division_by_zero_gives_inf_with_warning():
    g = ddx.trace("1/x", x=0)
    assert np.isinf(g.value)
    assert any("1/x" in w for w in g.warnings)


def test_constant_expression_bindings():
    g = ddx.trace("sin(t)", t="pi/4")
    g.backward()
    assert g.grads["t"] == pytest.approx(np.cos(np.pi / 4), rel=1e-15)
    assert float(ddx.trace("x", x="2^-1").value) == 0.5


def test_binding_named_like_a_constant_wins():
    assert float(ddx.trace("e * 2", e=5).value) == 10


def test_unused_leaf_has_no_gradient():
    g = ddx.trace("w * 2", w=1, q=3)
    g.backward()
    assert g.grads["q"] is None


REPLAYED = [
    ("(w*x+b)^2", {"w": 3.0, "x": 2.0, "b": 1.0}, None),
    ("y = w*x + b; L = mean(y^2) + norm(w) + sum(max(x, dim=0)[0])",
     {"w": [0.5, -1.0], "x": [[1.0, 2.0], [3.0, 4.0]], "b": [0.1]}, None),
    ("sin(x^3.5) / exp(y) + x^-1.5 * y - 2/x", {"x": 1.3, "y": 0.4}, None),
    ("w*x + b", {"w": 3.0, "x": [2.0, 4.0], "b": 1.0}, "ones"),
    ("v = [x, y, x*y]; sum(v * v) + max(v, dim=0).values + v[1:][0]", {"x": 1.5, "y": -0.5}, None),
]


@pytest.mark.parametrize("text, bindings, grad_output", REPLAYED)
def test_a_repeated_trace_replays_its_graph_with_identical_results(text, bindings, grad_output):
    from ddx.app import api

    TEMPLATES.clear()

    first = api.Trace(text, bindings, lean=False).backward(grad_output)
    assert not TEMPLATES  # one recorded trace makes no template ...
    api.Trace(text, bindings, lean=False).backward(grad_output)  # ... the second one does
    doc = first.to_dict()
    shifted = {k: np.asarray(v) * 1.25 for k, v in bindings.items()}
    fresh = ddx.trace(text, shifted, retain_grad=False)
    fresh._materialize() if fresh._fast is not None else None
    fresh.backward(grad_output)
    replayed = ddx.trace(text, shifted)
    assert replayed._fast is not None  # the graph is replayed, not rebuilt
    replayed.backward(grad_output)
    assert replayed._fast is not None
    np.testing.assert_array_equal(replayed.value, fresh.value)
    for name, g in fresh.grads.items():
        np.testing.assert_array_equal(replayed.grads[name], g)  # bit for bit
    # anything beyond values and gradients builds the real graph, with the same answers
    assert replayed.to_json() == fresh.to_json()
    assert replayed._fast is None and doc["output"] == replayed.output_name


def test_replay_falls_back_for_domain_problems_and_other_shapes():

    TEMPLATES.clear()
    ddx.trace("log(x) * y", x=2.0, y=3.0).backward()
    ddx.trace("log(x) * y", x=2.0, y=3.0).backward()
    g = ddx.trace("log(x) * y", x=0.0, y=3.0)
    assert g._fast is None or g.backward().warnings  # forward or backward hit log(0)
    assert any("LogBackward0" in w for w in g.warnings)
    v = ddx.trace("log(x) * y", x=[1.0, 2.0], y=3.0)  # another shape: another template
    np.testing.assert_allclose(v.value, [0.0, 3 * np.log(2.0)])
    assert v._fast is not None and v._fast.template.n == 4  # x, y, log(x), product


def test_a_gradient_sum_that_overflows_is_reported_and_nothing_leaks_into_the_next_trace():
    from ddx.app.api import Trace

    g = Trace("x*1e308*10 - x*1e308*10", {"x": 1.0}, lean=False)
    g.backward()
    assert np.isnan(g.grads["x"])  # inf + -inf
    assert g.warnings[-1] == "the gradients reaching x add up to nan"
    h = Trace("tanh(2) * x", {"x": 1.0}, lean=False)  # a clean trace right after
    h.backward()
    assert h.warnings == []
    lean = ddx.trace("x*1e308*10 - x*1e308*10", x=1.0)  # the template path falls back
    lean.backward()
    assert lean.warnings == g.warnings
