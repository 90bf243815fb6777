"""The reductions against PyTorch 2.13: sum mean prod max min amax amin var std norm logsumexp
cumsum cumprod (value, gradient, grad_fn) and argmax argmin all any (value, dtype, no grad),
with dim as an int or a tuple (negative too) and keepdim, by position and by keyword, through
the bare name, torch.X and x.X(), in float64 and float32, at random points, ties and zeros;
in the one-liner, in `ddx run`; and PyTorch's messages for bad dims."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import session_run, torch_or_skip

import ddx
from ddx.graph.functions import NAMED_SPACES

RNG = np.random.default_rng(14)
POINTS = {
    "random": RNG.standard_normal((3, 4)),
    "ties": np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0], [-1.0, 0.0, 5.0, 5.0]]),
    "zeros": np.array([[0.0, 2.0, 3.0, 0.0], [1.0, 0.0, 2.0, 3.0], [2.0, -3.0, 4.0, 0.5]]),
}

# (ddx source in x, the same in PyTorch: a function of (torch, x))
DIFFERENTIABLE = [
    ("sum(x)", lambda t, x: x.sum()),
    ("torch.sum(x, 1)", lambda t, x: t.sum(x, 1)),
    ("x.sum(dim=(0, -1))", lambda t, x: x.sum(dim=(0, -1))),
    ("sum(x, -1, keepdim=True)", lambda t, x: x.sum(-1, keepdim=True)),
    ("torch.sum(x, (1, 0), True)", lambda t, x: t.sum(x, (1, 0), True)),
    ("x.sum(dim=None, keepdim=True)", lambda t, x: x.sum(dim=None, keepdim=True)),
    ("mean(x)", lambda t, x: x.mean()),
    ("x.mean(0)", lambda t, x: x.mean(0)),
    ("torch.mean(x, dim=(0, 1), keepdim=True)", lambda t, x: t.mean(x, dim=(0, 1), keepdim=True)),
    ("prod(x)", lambda t, x: x.prod()),
    ("x.prod(1)", lambda t, x: x.prod(1)),
    ("torch.prod(x, dim=-2, keepdim=True)", lambda t, x: t.prod(x, dim=-2, keepdim=True)),
    ("max(x)", lambda t, x: x.max()),
    ("min(x)", lambda t, x: x.min()),
    ("torch.max(x, 1).values", lambda t, x: t.max(x, 1).values),
    ("x.max(dim=0, keepdim=True)[0]", lambda t, x: x.max(dim=0, keepdim=True)[0]),
    ("torch.min(x, -1)[0]", lambda t, x: t.min(x, -1)[0]),
    ("x.min(dim=0).values", lambda t, x: x.min(dim=0).values),
    ("amax(x)", lambda t, x: x.amax()),
    ("x.amax(1)", lambda t, x: x.amax(1)),
    ("torch.amax(x, (0, 1), keepdim=True)", lambda t, x: t.amax(x, (0, 1), keepdim=True)),
    ("torch.amin(x, dim=-1)", lambda t, x: t.amin(x, dim=-1)),
    ("var(x)", lambda t, x: x.var()),
    ("x.var(1)", lambda t, x: x.var(1)),
    ("torch.var(x, 1, correction=0)", lambda t, x: t.var(x, 1, correction=0)),
    ("x.var(unbiased=False)", lambda t, x: x.var(unbiased=False)),
    ("x.var(0, False, True)", lambda t, x: x.var(0, False, True)),
    ("torch.var(x, dim=(0, 1), correction=2, keepdim=True)",
     lambda t, x: t.var(x, dim=(0, 1), correction=2, keepdim=True)),
    ("std(x)", lambda t, x: x.std()),
    ("torch.std(x, dim=1, unbiased=False)", lambda t, x: t.std(x, dim=1, unbiased=False)),
    ("x.std(0, keepdim=True)", lambda t, x: x.std(0, keepdim=True)),
    ("norm(x)", lambda t, x: x.norm()),
    ("x.norm(1)", lambda t, x: x.norm(1)),
    ("x.norm(p='fro')", lambda t, x: x.norm(p="fro")),
    ("torch.norm(x, p=inf, dim=1)", lambda t, x: t.norm(x, p=float("inf"), dim=1)),
    ("x.norm(-inf, 0)", lambda t, x: x.norm(float("-inf"), 0)),
    ("x.norm(3, dim=-1, keepdim=True)", lambda t, x: x.norm(3, dim=-1, keepdim=True)),
    ("x.norm(p=1.5, dim=(0, 1))", lambda t, x: x.norm(p=1.5, dim=(0, 1))),
    ("torch.linalg.vector_norm(x, ord=3, dim=1)", lambda t, x: t.linalg.vector_norm(x, ord=3, dim=1)),
    ("torch.linalg.norm(x)", lambda t, x: t.linalg.norm(x)),
    ("torch.linalg.norm(x, 'fro')", lambda t, x: t.linalg.norm(x, "fro")),
    ("torch.linalg.norm(x, 1, dim=1)", lambda t, x: t.linalg.norm(x, 1, dim=1)),
    ("torch.linalg.norm(x[0], ord=inf)", lambda t, x: t.linalg.norm(x[0], ord=float("inf"))),
    ("x.sum(1, dtype=torch.DTYPE)", lambda t, x: x.sum(1, dtype=x.dtype)),  # (the input's)
    ("x.logsumexp(1)", lambda t, x: x.logsumexp(1)),
    ("torch.logsumexp(x, (0, 1), keepdim=True)", lambda t, x: t.logsumexp(x, (0, 1), keepdim=True)),
    ("torch.special.logsumexp(x, dim=0)", lambda t, x: t.special.logsumexp(x, dim=0)),
    ("x.sum(axis=0)", lambda t, x: x.sum(axis=0)),  # (numpy's names, which PyTorch takes too)
    ("x.max(axis=1, keepdims=True)[0]", lambda t, x: x.max(axis=1, keepdims=True)[0]),
    ("x.std(axis=0, keepdims=True)", lambda t, x: x.std(axis=0, keepdims=True)),
    ("x.cumprod(axis=1)", lambda t, x: x.cumprod(axis=1)),
    ("cumsum(x, 0)", lambda t, x: x.cumsum(0)),
    ("x.cumsum(dim=-1)", lambda t, x: x.cumsum(dim=-1)),
    ("torch.cumprod(x, 1)", lambda t, x: t.cumprod(x, 1)),
    ("x.cumprod(dim=0)", lambda t, x: x.cumprod(dim=0)),
]
# norms of p < 1 and 0 are kinked at 0: at the zeros they are compared too, p=0 has slope 0
KINKED = [
    ("x.norm(0.5)", lambda t, x: x.norm(0.5)),
    ("x.norm(0, dim=1)", lambda t, x: x.norm(0, dim=1)),
]


def _torch_result(torch, fn, x: np.ndarray, dtype: str):
    xt = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
    out = fn(torch, xt)
    if out.requires_grad:
        out.backward(torch.ones_like(out))
    return xt, out


def _tol(dtype: str) -> dict:
    return dict(rtol=1e-12, atol=1e-12) if dtype == "float64" else dict(rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("point", sorted(POINTS))
@pytest.mark.parametrize("source,fn", DIFFERENTIABLE + KINKED, ids=[c[0] for c in DIFFERENTIABLE + KINKED])
def test_value_gradient_and_grad_fn_match_pytorch(source, fn, point, dtype):
    torch = torch_or_skip()
    x = POINTS[point]
    xt, out = _torch_result(torch, fn, x, dtype)
    g = ddx.trace(source.replace("DTYPE", dtype), dtype=dtype, x=x)
    assert g.output.value.dtype == np.dtype(dtype)
    assert g.output.grad_fn.name == out.grad_fn.name(), source
    assert g.output.value.shape == tuple(out.shape)
    np.testing.assert_allclose(g.output.value, out.detach().numpy(), **_tol(dtype),
                               equal_nan=True, err_msg=source)
    g.backward(np.ones(g.output.value.shape))
    assert g.grads["x"].dtype == np.dtype(dtype)
    # (PyTorch leaves .grad None where the whole gradient is a zero it never made: norm(x, 0))
    want = xt.grad.numpy() if xt.grad is not None else np.zeros(x.shape)
    np.testing.assert_allclose(g.grads["x"], want, **_tol(dtype), equal_nan=True,
                               err_msg=f"{source} at {point}")


NO_GRADIENT = [
    ("argmax(x)", lambda t, x: x.argmax()),
    ("x.argmax(1)", lambda t, x: x.argmax(1)),
    ("torch.argmax(x, dim=0, keepdim=True)", lambda t, x: t.argmax(x, dim=0, keepdim=True)),
    ("torch.argmin(x, -1)", lambda t, x: t.argmin(x, -1)),
    ("x.argmin()", lambda t, x: x.argmin()),
    ("torch.max(x, 1).indices", lambda t, x: t.max(x, 1).indices),
    ("x.min(0, True)[1]", lambda t, x: x.min(0, True)[1]),
    ("all(x)", lambda t, x: x.all()),
    ("(x > 0).all(1)", lambda t, x: (x > 0).all(1)),
    ("torch.any(x > 2, dim=(0, 1))", lambda t, x: t.any(x > 2, dim=(0, 1))),
    ("x.any(-1, keepdim=True)", lambda t, x: x.any(-1, keepdim=True)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("point", sorted(POINTS))
@pytest.mark.parametrize("source,fn", NO_GRADIENT, ids=[c[0] for c in NO_GRADIENT])
def test_results_without_gradient_match_pytorch(source, fn, point, dtype):
    torch = torch_or_skip()
    _, out = _torch_result(torch, fn, POINTS[point], dtype)
    g = ddx.trace(source, dtype=dtype, x=POINTS[point])
    assert not g.output.requires_grad and g.output.grad_fn is None
    assert str(out.dtype) == f"torch.{g.output.value.dtype.name}", source
    np.testing.assert_array_equal(g.output.value, out.numpy(), err_msg=f"{source} at {point}")


def test_max_with_dim_is_values_and_indices(run_json):
    torch = torch_or_skip()
    x = POINTS["ties"]
    g = ddx.trace("r = torch.max(x, 1); r.values.sum() + r[0].sum() + r.indices.sum()", x=x)
    g.backward()
    xt = torch.tensor(x, requires_grad=True)
    r = torch.max(xt, 1)
    (r.values.sum() + r[0].sum() + r.indices.sum()).backward()
    np.testing.assert_array_equal(g.grads["x"], xt.grad.numpy())
    assert float(g.value) == float(r.values.sum() * 2 + r.indices.sum())
    # the regression: max(M, dim=1)[0] is the values, not the first row's maximum
    code, doc, _ = run_json("max(M, dim=1)[0]", "M=[[1,5],[7,2]]", "--grad-output", "ones")
    assert code == 0 and doc["value"] == [5.0, 7.0] and doc["grad_fn"] == "MaxBackward0"
    assert doc["gradients"]["M"] == [[0.0, 1.0], [1.0, 0.0]]


def test_prod_gradients_with_one_and_several_zeros_are_pytorchs():
    """Worked by hand: with one zero, only it gets the product of the others; with two, none."""
    g = ddx.trace("prod(x)", x=[2.0, 0.0, 3.0]).backward()
    assert g.grads["x"].tolist() == [0.0, 6.0, 0.0]
    g = ddx.trace("prod(x)", x=[2.0, 0.0, 0.0]).backward()
    assert g.grads["x"].tolist() == [0.0, 0.0, 0.0]
    g = ddx.trace("cumprod(x, 0)", x=[2.0, 0.0, 3.0, 4.0]).backward(np.ones(4))
    assert g.grads["x"].tolist() == [1.0, 32.0, 0.0, 0.0]  # 1; 2 + 2*3 + 2*3*4; 0; 0


@pytest.mark.parametrize("source", ["prod(x, 1)", "cumprod(x, dim=1)", "norm(x, 3, dim=1)",
                                    "var(x, 0)", "std(x, 1)", "logsumexp(x, 1)", "amax(x, 1)"])
def test_hessians_match_pytorch_at_zeros_and_random_points(source):
    torch = torch_or_skip()
    for x in (POINTS["random"][:2, :3], POINTS["zeros"][:2, :3]):
        g = ddx.trace(f"sum({source})", x=x).backward()
        ours = g.hessian()["hessian"]["x"]["x"]
        fn = {"prod(x, 1)": lambda v: v.prod(1), "cumprod(x, dim=1)": lambda v: v.cumprod(1),
              "norm(x, 3, dim=1)": lambda v: v.norm(3, dim=1), "var(x, 0)": lambda v: v.var(0),
              "std(x, 1)": lambda v: v.std(1), "logsumexp(x, 1)": lambda v: v.logsumexp(1),
              "amax(x, 1)": lambda v: v.amax(1)}[source]
        theirs = torch.autograd.functional.hessian(lambda v: fn(v).sum(), torch.tensor(x))
        np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-9, atol=1e-12, equal_nan=True,
                                   err_msg=source)


def test_one_liner_spellings(run_json):
    torch = torch_or_skip()
    x = [[1.0, 2.0, 3.0], [4.0, 0.5, -1.0]]
    xt = torch.tensor(x, requires_grad=True)
    for source, theirs in [("torch.sum(x, dim=(0, 1))", xt.sum(dim=(0, 1))),
                           ("x.var(1, keepdim=True).sum()", xt.var(1, keepdim=True).sum()),
                           ("norm(x, dim=1, p=1).sum()", xt.norm(dim=1, p=1).sum()),
                           ("x.logsumexp(dim=-1).mean()", xt.logsumexp(dim=-1).mean())]:
        xt.grad = None
        theirs.backward()
        code, doc, err = run_json(source, f"x={json.dumps(x)}")
        assert code == 0, err
        assert doc["grad_fn"] == theirs.grad_fn.name()
        np.testing.assert_allclose(doc["value"], theirs.item(), rtol=1e-12)
        np.testing.assert_allclose(doc["gradients"]["x"], xt.grad.numpy(), rtol=1e-12)


def test_ddx_run_prints_what_pytorch_prints():
    torch = torch_or_skip()
    script = ("x = torch.tensor([[1., 2, 3], [4, 0.5, -1]], requires_grad=True)\n"
              "x.sum(1)\ntorch.mean(x, dim=(0, 1), keepdim=True)\nx.prod(0)\n"
              "torch.max(x, 1).values\nx.amin(1)\nx.std(1, unbiased=False)\nx.cumsum(1)\n"
              "x.argmax(1)\ntorch.any(x < 0, 1)\ny = x.norm(dim=0).sum()\ny.backward()\nx.grad\n")
    x = torch.tensor([[1., 2, 3], [4, 0.5, -1]], requires_grad=True)
    y = x.norm(dim=0).sum()
    y.backward()
    want = [repr(v) for v in (x.sum(1), torch.mean(x, dim=(0, 1), keepdim=True), x.prod(0),
                              torch.max(x, 1).values, x.amin(1), x.std(1, unbiased=False),
                              x.cumsum(1), x.argmax(1), torch.any(x < 0, 1), x.grad)]
    assert session_run(script) == want


@pytest.mark.parametrize("source,message,theirs", [
    ("sum(x, 2)", "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
     lambda t, x: t.sum(x, 2)),
    ("x.mean(dim=(0, -2))", "dim 0 appears multiple times in the list of dims",
     lambda t, x: x.mean(dim=(0, -2))),
    ("torch.amax(x, -3)", "Dimension out of range (expected to be in range of [-2, 1], but got -3)",
     lambda t, x: t.amax(x, -3)),
    ("x.cumsum(5)", "Dimension out of range (expected to be in range of [-2, 1], but got 5)",
     lambda t, x: x.cumsum(5)),
    ("mean(x > 0)", "mean(): could not infer output dtype. Input dtype must be either a floating "
                    "point or complex dtype. Got: Bool", lambda t, x: t.mean(x > 0)),
    # (PyTorch's own text here is its list of signatures)
    ("x.prod(dim=(0, 1))", "prod(): argument 'dim' must be int, not tuple", None),
    ("x.argmax(dim=(0, 1))", "argmax(): argument 'dim' must be int, not tuple", None),
])
def test_pytorchs_messages(run, source, message, theirs):
    torch = torch_or_skip()
    code, _, err = run(source, "x=[[1,2],[3,4]]")
    assert code == 1 and f"error: {message}" in err, err
    if theirs is not None:
        with pytest.raises((RuntimeError, IndexError)) as caught:
            theirs(torch, torch.tensor([[1.0, 2], [3, 4]]))
        assert str(caught.value).splitlines()[0] == message


def test_empty_max_and_argmax_are_pytorchs_errors(run):
    code, _, err = run("max(x)", "x=[]")
    assert code == 1 and "max(): Expected reduction dim to be specified for input.numel() == 0." \
        in err
    code, _, err = run("argmax(x)", "x=[]")
    assert code == 1 and "argmax(): Expected reduction dim to be specified for input.numel() == 0." \
        in err


def test_functions_that_are_not_one_row_live_where_pytorch_has_them():
    torch = torch_or_skip()
    import torch.nn.functional as F

    modules = {"torch": torch, "Tensor": torch.Tensor, "F": F, "linalg": torch.linalg,
               "special": torch.special}
    for name in ("vector_norm", "cross_entropy", "l1_loss", "kl_div", "cosine_similarity"):
        for space in NAMED_SPACES[name]:
            assert hasattr(modules[space], name), (name, space)


def test_a_matrix_norm_is_not_supported_and_not_a_wrong_vector_norm(run):
    """torch.linalg.norm(A, 1) is the matrix 1-norm; torch.norm(A, 1) the 1-norm of the entries."""
    code, _, err = run("torch.linalg.norm(x, 1)", "x=[[1,-2],[3,4]]")
    assert code == 1 and "is not supported by ddx" in err
    code, out, _ = run("torch.norm(x, 1)", "x=[[1,-2],[3,4]]", "--json")
    assert code == 0 and json.loads(out)["value"] == 10.0


def test_a_dtype_that_casts_inside_the_op_is_not_supported(run):
    code, _, err = run("x.sum(dtype=torch.float32)", "x=[1, 2]")
    assert code == 1 and "sum(dtype=torch.float32) of a float64 tensor" in err \
        and "not supported by ddx" in err


def test_var_without_degrees_of_freedom_warns_as_pytorch(run_json):
    code, doc, _ = run_json("x.var(correction=3)", "x=[1, 2]")
    assert code == 0 and doc["value"] == "inf"
    assert doc["warnings"] == ["var(): degrees of freedom is <= 0. Correction should be strictly "
                               "less than the reduction factor (input numel divided by output "
                               "numel)."]


def test_tied_extremes_share_the_gradient_in_atens_order():
    """amax/amin: (g / count) * mask (scale_grad_by_count); the full max: zeros with g / count
    at the ties (+0.0 elsewhere, also for a negative g), as ATen's CPU path. Bit for bit with
    torch over tie-heavy matrices (159, 213 and 1,643 of the elements differed before)."""
    from conftest import torch_or_skip

    import ddx

    torch = torch_or_skip()
    rng = np.random.default_rng(0)
    for _ in range(100):
        x = rng.integers(0, 3, (4, 6)).astype(np.float64) * 0.7
        g = rng.standard_normal(6) * 3
        for expr, tf in (("amax(x, 0)", lambda t: torch.amax(t, 0)),
                         ("amin(x, 0)", lambda t: torch.amin(t, 0))):
            t = ddx.trace(expr, x=x)
            t.backward(gradient=g)
            tx = torch.from_numpy(x.copy()).requires_grad_()
            tf(tx).backward(torch.from_numpy(g))
            assert np.asarray(t.grads["x"]).tobytes() == tx.grad.numpy().tobytes()
        gs = float(rng.standard_normal() * 3)
        t = ddx.trace("max(x)", x=x)
        t.backward(gradient=np.array(gs))
        tx = torch.from_numpy(x.copy()).requires_grad_()
        tx.max().backward(torch.tensor(gs, dtype=torch.float64))
        assert np.asarray(t.grads["x"]).tobytes() == tx.grad.numpy().tobytes()
