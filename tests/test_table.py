"""Every row of the op table through every mode, from the row alone: reverse mode against
central differences, forward mode against reverse, the Hessian against differences of the
gradient and against PyTorch, the explain view's formulas re-entered as ddx input, the
emitted torch and JAX scripts, and the result dtype; then a row registered at run time,
picked up by every mode, the REPL, batch and the library with no other change."""

from __future__ import annotations

import json
import os
import re
import zlib

import numpy as np
import pytest
from conftest import torch_or_skip
from test_ops import bindings, node_of

import ddx
from ddx.engine import explain
from ddx.ops import OPS, op, stack_op, unregister
from ddx.out.emit import emit

stack_op(2)
ROWS = [name for name in sorted(OPS) if OPS[name].differentiable]
VALUE_ROWS = [name for name in sorted(OPS) if not OPS[name].differentiable]  # gt, argmax, ...
DTYPES = ["float64", "float32"]
TOL = {"float64": dict(rtol=1e-6, atol=1e-8), "float32": dict(rtol=2e-2, atol=2e-3)}


def traced(name: str, seed: bytes = b"", dtype: str = "float64", values: dict | None = None):
    rng = np.random.default_rng(zlib.crc32(name.encode() + seed))
    source = OPS[name].example[0]
    if values is None:  # (the variables the example names: leaky_relu(x) has no y)
        values = {var: v for var, v in bindings(name, rng, vector=False).items()
                  if re.search(rf"\b{var}\b", source)}
    return ddx.trace(source, dtype=dtype, **values), values


def scalar_out(g):
    """The example's gradients need a scalar: weight a tensor output by ones."""
    return None if g.output.value.size == 1 else np.ones(g.output.value.shape)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ROWS)
def test_reverse_forward_and_differences_agree(name, dtype):
    g, _ = traced(name, b"modes", dtype)
    g.backward(scalar_out(g))
    fwd = g.forward_mode()["gradients"]
    fd = g.check()["gradients"]
    for var in g.leaves:
        rev = np.asarray(g.grads[var], dtype=np.float64)
        np.testing.assert_allclose(np.asarray(fwd[var], dtype=np.float64), rev, rtol=1e-5,
                                   atol=1e-6, err_msg=f"{name}: forward vs reverse for {var}")
        np.testing.assert_allclose(rev, np.asarray(fd[var]), **TOL[dtype],
                                   err_msg=f"{name}: reverse vs differences for {var}")


@pytest.mark.parametrize("name", ROWS)
def test_jacobians_both_ways_agree(name):
    g, _ = traced(name, b"jac")
    jac = g.jacobian()
    for var in g.leaves:
        np.testing.assert_allclose(jac["reverse"][var], jac["forward"][var], rtol=1e-12,
                                   atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ROWS)
def test_output_dtype_is_the_rows(name, dtype):
    g, _ = traced(name, b"dtype", dtype)
    want = np.dtype(dtype) if OPS[name].dtype == "same" else np.dtype(OPS[name].dtype)
    assert node_of(name, g).value.dtype == want
    g.backward(scalar_out(g))
    for var in g.leaves:
        assert g.grads[var].dtype == np.dtype(dtype)


def _hessian_source(name: str) -> str:
    """The example, summed when it is not a scalar (the Hessian needs a scalar output)."""
    source = OPS[name].example[0]
    g, _ = traced(name)
    return source if g.output.value.size == 1 else f"sum({source})"


def full_matrix(H: dict) -> np.ndarray:
    """The Hessian's blocks H[a][b] (shape a + b) as one square matrix."""
    names = list(H)
    sizes = [int(np.prod(np.shape(H[a][a])[: np.ndim(H[a][a]) // 2])) for a in names]
    return np.block([[np.reshape(H[a][b], (sa, sb)) for b, sb in zip(names, sizes)]
                     for a, sa in zip(names, sizes)])


@pytest.mark.parametrize("name", ROWS)
def test_hessian_matches_differences_of_the_gradient(name):
    _, values = traced(name, b"hess")
    result = ddx.trace(_hessian_source(name), **values).backward().hessian()
    assert result["check"]["ok"], (name, result["check"])
    m = full_matrix(result["hessian"])
    np.testing.assert_allclose(m, m.T, rtol=1e-9, atol=1e-12, err_msg=f"{name}: not symmetric")


def _torch_function(trace, torch):
    """The emitted torch script, as a function of the leaves (our own generated code)."""
    script = emit(trace, "torch")
    leaves = list(trace.leaves)
    body = []
    for line in script.splitlines():
        if line.startswith(("#", "import", "torch.set_default", "print", "out.backward")) \
                or not line.strip():
            continue
        if any(line.startswith(f"{n} = torch.tensor(") for n in leaves):
            continue
        body.append("    " + line)
    source = f"def f({', '.join(leaves)}):\n" + "\n".join(body) + "\n    return out\n"
    scope = {"torch": torch}
    exec(compile(source, "<emitted>", "exec"), scope)  # noqa: S102 - ddx's own output
    return scope["f"]


def _torch_grad_fns(out) -> list[str]:
    """The grad_fn names of a torch result's graph, the output's first."""
    names, stack, seen = [], [out.grad_fn], set()
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        names.append(fn.name())
        stack.extend(f for f, _ in fn.next_functions)
    return names


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", VALUE_ROWS)
def test_rows_without_gradient_give_pytorchs_values_and_need_no_grad(name, dtype):
    torch = torch_or_skip()
    g, values = traced(name, b"value", dtype)
    assert not g.output.requires_grad and g.output.grad_fn is None, name
    args = [torch.tensor(np.asarray(values[var], dtype=dtype), requires_grad=True)
            for var in g.leaves]
    theirs = _torch_function(g, torch)(*args)
    assert not theirs.requires_grad
    assert str(theirs.dtype) == f"torch.{g.output.value.dtype.name}", name
    np.testing.assert_array_equal(g.output.value, theirs.detach().numpy(), err_msg=name)


@pytest.mark.parametrize("name", ROWS)
def test_grad_fn_names_match_pytorch(name):
    torch = torch_or_skip()
    g, values = traced(name, b"grad_fn")
    args = [torch.tensor(np.asarray(values[var], dtype=np.float64), requires_grad=True)
            for var in g.leaves]
    theirs = _torch_grad_fns(_torch_function(g, torch)(*args))
    assert g.output.grad_fn.name == theirs[0], name
    ours = node_of(name, g).grad_fn.name
    # (1/x is reciprocal then mul, in PyTorch as in ddx: the op's node is not the output)
    assert ours == theirs[0] if g.output.op == name else ours in theirs, (name, theirs)


KINK_CANDIDATES = (-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 6.0)


@pytest.mark.parametrize("name", sorted(n for n in OPS if OPS[n].kink and OPS[n].elementwise))
def test_gradients_at_kinks_match_pytorch(name):
    """Where the row says it has a kink, PyTorch's one-sided choice, by PyTorch's own numbers."""
    torch = torch_or_skip()
    where = OPS[name].kink[0]
    g0, values = traced(name)
    kw = node_of(name, g0).kw  # (the example's parameters: clamp's bounds, hardtanh's ends)
    pairs = [(v,) for v in KINK_CANDIDATES] if len(values) == 1 else \
        [(v, w) for v in KINK_CANDIDATES for w in KINK_CANDIDATES]
    seen = 0
    for pair in pairs:
        if not np.asarray(where(*pair, **kw)).all():
            continue
        g = ddx.trace(OPS[name].example[0], **dict(zip(values, pair)))
        if not np.isfinite(g.output.value).all():
            continue
        g.backward()
        args = [torch.tensor(v, requires_grad=True) for v in pair]
        _torch_function(g, torch)(*args).backward()
        for var, x in zip(values, args):
            np.testing.assert_allclose(g.grads[var], x.grad.numpy(), rtol=1e-12, atol=0,
                                       equal_nan=True, err_msg=f"{name} d/d{var} at {pair}")
        seen += 1
    assert seen, f"{name}: no kink among the candidates"


# Rows whose inputs outside their domain are an error, in PyTorch as in ddx (probabilities)
CLOSED_DOMAIN = {"binary_cross_entropy", "binary_cross_entropy_weight"}


def _edge_points(name: str) -> list[dict]:
    """Points at the ends of the row's domain and at 0 and ±1, where the forward is defined."""
    row = OPS[name]
    _, values = traced(name)
    lo, hi = row.domain
    picks = sorted({0.0, 1.0, -1.0, lo, hi, 2.0, -2.0})
    if name in CLOSED_DOMAIN:
        picks = [lo, hi]
    points = []
    for k, v in enumerate(picks):
        other = picks[(k + 2) % len(picks)]
        point = {var: np.full(np.shape(val), v if i == 0 else other)
                 for i, (var, val) in enumerate(values.items())}
        points.append(point)
    return points


# Where ddx's Hessian (forward mode over the backward pass) and PyTorch's (backward over
# backward) part ways: 0 * nan is nan in one order and a masked 0 in the other. x^y at x = -2,
# y = 0: PyTorch's d/dx of dL/dy takes x^y's own slope as 0 (masked at y = 0) before it meets
# log(-2) = nan; forward mode multiplies that 0 slope by nan. (Reverse over reverse is the cure,
# with torch.autograd.grad(create_graph=True).) (xlogy at x = 0 agrees since its dL/dx is
# derivatives.yaml's xlogy(grad, y): 1/y both ways.)
# copysign(x, y) at x = 0: its dL/dx is derivatives.yaml's grad * (result / self) masked at
# self = 0; PyTorch's d/dy of it goes through copysign's zeros_like(other) (0), forward mode
# through the division by self = 0 (nan).
FORWARD_OVER_REVERSE = {("pow", "y", "x", -2.0, 0.0): (np.nan, -0.5),
                        ("copysign", "x", "y", 0.0, 2.0): (np.nan, 0.0)}


def test_xlogys_hessian_at_x_zero_is_pytorchs():
    torch = torch_or_skip()
    g = ddx.trace(OPS["xlogy"].example[0], x=0.0, y=1.0).backward()
    assert g.hessian()["hessian"]["x"]["y"] == 1.0
    H = torch.autograd.functional.hessian(_torch_function(g, torch),
                                          (torch.tensor(0.0), torch.tensor(1.0)))
    assert float(H[0][1]) == 1.0


@pytest.mark.parametrize("case", sorted(FORWARD_OVER_REVERSE))
def test_known_hessian_differences_from_pytorch(case):
    torch = torch_or_skip()
    name, a, b, x, y = case
    ours_want, torch_want = FORWARD_OVER_REVERSE[case]
    g = ddx.trace(OPS[name].example[0], x=x, y=y).backward()
    np.testing.assert_equal(g.hessian()["hessian"][a][b], ours_want)
    H = torch.autograd.functional.hessian(_torch_function(g, torch),
                                          (torch.tensor(x), torch.tensor(y)))
    assert float(H["xy".index(a)]["xy".index(b)]) == torch_want


# Rows whose PyTorch has no second derivative ("derivative for aten::hardsigmoid_backward is
# not implemented"): there PyTorch's Hessian is central differences of PyTorch's gradient.
NO_TORCH_DOUBLE_BACKWARD = {"hardsigmoid", "cdist"}


def _torch_hessian(name: str, f, args: tuple, torch):
    if name not in NO_TORCH_DOUBLE_BACKWARD:
        return torch.autograd.functional.hessian(f, args)
    with pytest.raises(RuntimeError, match="is not implemented"):
        torch.autograd.functional.hessian(f, args)

    def grad(xs):
        xs = [x.clone().requires_grad_(True) for x in xs]
        return torch.autograd.grad(f(*xs), xs, allow_unused=True, materialize_grads=True)

    h = 1e-3
    cols = []  # cols[j][i]: d grad_i / d x_j, one element of x_j at a time (5-point stencil)
    for j, x in enumerate(args):
        parts = [[] for _ in args]
        for e in range(x.numel()):
            step = torch.zeros_like(x).reshape(-1)
            step[e] = h
            at = []
            for k in (2, 1, -1, -2):
                moved = list(args)
                moved[j] = x + k * step.reshape(x.shape)
                at.append(grad(moved))
            for i in range(len(args)):
                parts[i].append((-at[0][i] + 8 * at[1][i] - 8 * at[2][i] + at[3][i]) / (12 * h))
        cols.append([torch.stack(p, dim=-1).reshape(args[i].shape + x.shape)
                     for i, p in enumerate(parts)])
    return [[cols[j][i] for j in range(len(args))] for i in range(len(args))]


@pytest.mark.parametrize("name", ROWS)
def test_hessian_matches_pytorch_including_domain_edges(name):
    torch = torch_or_skip()
    _, values = traced(name, b"torch")
    for point in [values, *_edge_points(name)]:
        g = ddx.trace(_hessian_source(name), **point)
        if not g.output.requires_grad or not np.isfinite(g.output.value).all():
            continue
        g.backward()
        ours = g.hessian()["hessian"]
        f = _torch_function(g, torch)
        args = tuple(torch.tensor(np.asarray(v, dtype=np.float64)) for v in point.values())
        theirs = _torch_hessian(name, f, args, torch)
        names = list(point)
        for i, a in enumerate(names):
            for j, b in enumerate(names):
                if (name, a, b, *[float(np.asarray(v).flat[0]) for v in point.values()]) \
                        in FORWARD_OVER_REVERSE:
                    continue  # (checked on its own below)
                np.testing.assert_allclose(ours[a][b], theirs[i][j].numpy(), rtol=1e-9,
                                           atol=1e-12, equal_nan=True,
                                           err_msg=f"{name} H[{a}][{b}] at {point}")


@pytest.mark.parametrize("name", ROWS)
def test_explain_formulas_reentered_give_the_local_derivative(name):
    g, values = traced(name, b"explain")
    g.backward(scalar_out(g))
    t = node_of(name, g)
    for i, s in enumerate(t.inputs):
        if not s.requires_grad:
            continue
        text = explain.local_formula(t, i)
        if text is None:  # a matrix product or a scatter: shown by its value
            assert not OPS[name].elementwise and explain.local_text(t, i)
            continue
        want = explain.local_value(t, i)
        got = ddx.trace(text, **values).value
        np.testing.assert_allclose(np.broadcast_to(got, np.shape(want)), want, rtol=1e-12,
                                   atol=1e-12, err_msg=f"{name} input {i}: {text!r}")


def _run_emitted(script: str) -> dict:
    """Run an emitted script in this process and return what it prints (its JSON)."""
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(script, "<emitted>", "exec"), {})  # noqa: S102 - ddx's own output
    return json.loads(buf.getvalue())


@pytest.mark.parametrize("lib", ["torch", "jax"])
@pytest.mark.parametrize("name", ROWS)
def test_emitted_scripts_run_and_agree(name, lib):
    if lib == "torch":
        torch_or_skip()
    else:
        try:
            import jax  # noqa: F401
        except ImportError:
            if os.environ.get("DDX_REQUIRE_JAX"):
                raise
            pytest.skip("JAX not installed (CI installs it)")
    g, _ = traced(name, b"emit")
    g.backward(scalar_out(g))
    got = _run_emitted(emit(g, lib))
    np.testing.assert_allclose(np.asarray(got["value"]), g.value, rtol=1e-12, atol=1e-12)
    for var in g.leaves:
        np.testing.assert_allclose(np.asarray(got["gradients"][var]), g.grads[var], rtol=1e-12,
                                   atol=1e-12, err_msg=f"{name} d/d{var} ({lib})")


# --- a row registered at run time: every mode picks it up ------------------------------------

@pytest.fixture
def cube():
    row = op("cube", "CubeBackward0", lambda a: a * a * a, lambda g, o, a: g * 3 * a * a,
             reads="i", call="unary", hint="no domain trouble", domain=(-1.5, 1.5),
             emit={"torch": "({0} ** 3)", "jax": "({0} ** 3)"})
    yield row
    unregister("cube")


def test_a_name_has_one_row(cube):
    """A second row of a name is refused (it used to replace the first silently: floor_divide
    had two, and the first's `//` text and example were lost)."""
    with pytest.raises(ValueError, match="op 'cube' has a row already"):
        op("cube", "CubeBackward0", lambda a: a, lambda g, o, a: g)
    assert OPS["cube"] is cube and OPS["floor_divide"].text == "{0} // {1}"


def test_a_new_row_works_in_every_mode(cube, run, tmp_path):
    # the library: value, gradient, grad_fn
    g = ddx.trace("cube(x) + x", x=2.0).backward()
    assert float(g.value) == 10.0 and float(g.grads["x"]) == 13.0
    assert g.output.inputs[0].grad_fn.name == "CubeBackward0"
    # the one-liner, with every mode at once
    code, out, err = run("cube(x)*y", "x=2", "y=3", "--json", "--forward", "--check",
                         "--jacobian", "--hessian", "--explain")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["gradients"] == {"x": 36.0, "y": 8.0}
    assert doc["forward"] == {"x": 36.0, "y": 8.0}
    assert doc["hessian"]["x"]["x"] == 36.0  # d2/dx2 of 3x^3 = 18x
    assert doc["hessian"]["x"]["y"] == 12.0  # 3x^2
    assert [n["op"] for n in doc["nodes"]] == ["leaf", "leaf", "cube", "mul"]
    steps = {(s["node"], s["input"]): s["local"] for s in doc["explain"]["steps"]}
    assert steps[("CubeBackward0", "x")] == "3*x^2"
    # float32 stays float32
    doc32 = json.loads(run("cube(x)", "x=[1,2]", "--dtype", "float32", "--grad-output", "ones",
                           "--json")[1])
    assert doc32["dtype"] == "float32" and doc32["gradients"]["x"] == [3.0, 12.0]
    # emitted scripts
    code, script, _ = run("cube(x)", "x=2", "--emit", "torch")
    assert code == 0 and "(x ** 3)" in script
    # pictures
    code, _, err = run("cube(x)", "x=2", "--graph", str(tmp_path / "g.dot"))
    assert code == 0, err
    assert "[cube]" in (tmp_path / "g.dot").read_text()
    # batch, replayed or not
    code, out, _ = run("batch", "-", input='"cube(x)" x=2\n"cube(x)" x=3\n')
    assert [json.loads(line)["gradients"]["x"] for line in out.splitlines()] == [12.0, 27.0]
    # the REPL's language: the bare name, torch.X and the method
    code, out, err = run("run", "-", input="x = tensor(2.0, requires_grad=true)\n"
                                           "y = torch.cube(x) + x.cube()\ny.backward()\n"
                                           "y\nx.grad\n")
    assert code == 0, err
    assert out.splitlines() == ["tensor(16., grad_fn=<AddBackward0>)", "tensor(24.)"]


def test_a_removed_row_is_unknown_again(run):
    op("cube2", "Cube2Backward0", lambda a: a * a * a, lambda g, o, a: g * 3 * a * a,
       call="unary")
    assert run("cube2(x)", "x=1")[0] == 0
    unregister("cube2")
    code, _, err = run("cube2(x)", "x=1")
    assert code == 1 and "unknown function 'cube2'" in err


SPACES = ("torch", "Tensor", "F", "linalg", "special")


@pytest.mark.parametrize("name", sorted(n for n in OPS if OPS[n].call))
def test_each_row_lives_where_pytorch_has_it(name):
    """torch.X, x.X(), F.X, torch.linalg.X, torch.special.X: exactly PyTorch 2.13's namespaces."""
    torch = torch_or_skip()
    import torch.nn.functional as F

    modules = dict(zip(SPACES, (torch, torch.Tensor, F, torch.linalg, torch.special)))
    want = tuple(space for space in SPACES if hasattr(modules[space], OPS[name].names[0]))
    assert OPS[name].spaces == want, name
