"""The everyday torch functions of rows_more/rows_misc and calls_more/calls_misc/calls_compose
against PyTorch 2.13: values, dtypes and gradients bit for bit (float32 and float64, sizes
1 to 1000 so that vector bodies and tails are both seen, random values, ties, nan, inf, -0.0),
grad_fn names, reprs printed by ``ddx run`` against Python with PyTorch (named results such
as torch.return_types.sort), the functions without a gradient (no grad_fn, int64/bool), the
one-liner, and PyTorch's error texts."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from conftest import session_run, torch_or_skip

import ddx

RNG = np.random.default_rng(2013)
SIZES = (1, 3, 7, 8, 9, 16, 17, 1000)
SPECIAL = np.array([0.0, -0.0, 1e-30, -1e-30, 3e38, -3e38, 1.5, -2.25, 7.0, 7.0])


def _data(kind: str, shape: tuple) -> np.ndarray:
    n = int(np.prod(shape))
    if kind == "random":
        flat = RNG.standard_normal(n) * 3
    elif kind == "ties":
        flat = RNG.integers(-2, 3, n).astype(float)
    else:  # "special": zeros of both signs, tiny, huge, repeats
        flat = np.resize(SPECIAL, n)[RNG.permutation(n)]
    return flat.reshape(shape)


def _same_bits(ours: np.ndarray, theirs: np.ndarray, what: str) -> None:
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype, what
    assert ours.shape == theirs.shape, what
    assert ours.tobytes() == theirs.tobytes(), (what, ours, theirs)


def _both(torch, source: str, fn, values: dict, dtype: str, grad: bool = True,
          bits: bool = True):
    """The op through ddx.trace and through torch: values (and gradients, for grad) bit for
    bit; with bits False, values equal as numbers (-0.0 == 0.0: an unstable sort's ties)."""
    tdtype = getattr(torch, dtype)
    ts = {k: torch.tensor(v, dtype=tdtype, requires_grad=True) for k, v in values.items()}
    out = fn(torch, **ts)
    g = ddx.trace(source, dtype=dtype, **values)
    if not bits:
        np.testing.assert_array_equal(g.output.value, out.detach().numpy(), err_msg=source)
        assert g.output.value.dtype == out.detach().numpy().dtype
        return
    _same_bits(g.output.value, out.detach().numpy(), f"{source} value")
    if not grad:
        return
    assert g.output.grad_fn.name == out.grad_fn.name(), source
    w = RNG.standard_normal(out.shape)
    out.backward(torch.tensor(w, dtype=tdtype))
    g.backward(w.astype(dtype))
    for k, t in ts.items():
        if t.grad is None:  # (an input the result does not depend on: no gradient, as in torch)
            assert g.grads[k] is None, (source, k)
            continue
        _same_bits(g.grads[k], t.grad.numpy(), f"{source} d/d{k}")


# (ddx source, the same in PyTorch, and which data the gradients are compared on: "all" kinds,
# or only "random" where ties leave the order to PyTorch's unstable sort (x86-simd-sort's
# quicksort past 16 elements), whose values are compared as numbers on the other kinds)
ORDERINGS = [
    ("sort(x)[0]", lambda t, x: t.sort(x).values, "random"),
    ("x.sort(0, descending=True).values", lambda t, x: x.sort(0, descending=True).values,
     "random"),
    ("x.sort(dim=0, descending=True, stable=True).values",
     lambda t, x: x.sort(dim=0, descending=True, stable=True).values, "all"),
    ("torch.sort(x, dim=-1, stable=True)[0]", lambda t, x: t.sort(x, dim=-1, stable=True)[0],
     "all"),
    ("torch.topk(x, 1)[0]", lambda t, x: t.topk(x, 1)[0], "all"),
    ("x.topk(1, dim=0, largest=False).values",
     lambda t, x: x.topk(1, dim=0, largest=False).values, "all"),
    ("torch.topk(x, 1, sorted=False)[0]", lambda t, x: t.topk(x, 1, sorted=False)[0], "all"),
    ("median(x)", lambda t, x: x.median(), "all"),
    ("torch.median(x, -1)[0]", lambda t, x: t.median(x, -1)[0], "all"),
    ("x.median(dim=0, keepdim=True).values", lambda t, x: x.median(dim=0, keepdim=True).values,
     "all"),
    ("torch.mode(x)[0]", lambda t, x: t.mode(x)[0], "all"),
    ("x.mode(0, True).values", lambda t, x: x.mode(0, True).values, "all"),
    ("torch.aminmax(x)[0]", lambda t, x: t.aminmax(x)[0], "all"),
    ("x.aminmax(dim=-1).max", lambda t, x: x.aminmax(dim=-1).max, "all"),
    ("nansum(x)", lambda t, x: t.nansum(x), "all"),
    ("x.nansum(-1, keepdim=True)", lambda t, x: x.nansum(-1, keepdim=True), "all"),
    ("deg2rad(x)", lambda t, x: t.deg2rad(x), "all"),
    ("x.rad2deg()", lambda t, x: x.rad2deg(), "all"),
    ("torch.tile(x, (2, 1))", lambda t, x: t.tile(x, (2, 1)), "all"),
    ("x.repeat_interleave(2)", lambda t, x: x.repeat_interleave(2), "all"),
    ("torch.repeat_interleave(x, 3, dim=0)", lambda t, x: t.repeat_interleave(x, 3, dim=0), "all"),
    ("torch.diff(x)", lambda t, x: t.diff(x), "all"),
    ("x.diff(n=2, dim=0)", lambda t, x: x.diff(n=2, dim=0), "all"),
    ("torch.take(x, torch.tensor([0, -1, 0]))", lambda t, x: t.take(x, t.tensor([0, -1, 0])),
     "all"),
    ("x.unflatten(0, (1, -1))", lambda t, x: x.unflatten(0, (1, -1)), "all"),
]
SHAPES = [(n,) for n in SIZES] + [(3, 17), (4, 1), (2, 3, 5)]


def _applies(source: str, shape: tuple) -> bool:
    if "n=2, dim=0" in source:
        return shape[0] > 2
    return True


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["random", "ties", "special"])
@pytest.mark.parametrize("source,fn,data", ORDERINGS, ids=[c[0] for c in ORDERINGS])
def test_values_and_gradients_are_pytorchs_bits(source, fn, data, kind, dtype):
    torch = torch_or_skip()
    for shape in SHAPES:
        if _applies(source, shape):
            exact = data == "all" or kind == "random"
            _both(torch, source, fn, {"x": _data(kind, shape)}, dtype, bits=exact)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("args", ["", ", 1", ", dim=0, correction=0", ", (0, 1), keepdim=True",
                                  ", unbiased=False"])
def test_var_mean_and_std_mean_are_ddxs_var_and_mean_with_pytorchs_node(name, args, dtype):
    """The two results are ddx's var/std and mean rows' bits (PyTorch's var_mean computes
    them in one Welford pass, within an ulp or two of these), one VarMeanBackward0/
    StdMeanBackward0 node's, with PyTorch's gradients."""
    torch = torch_or_skip()
    x = _data("random", (3, 17))
    g = ddx.trace(f"torch.{name}_mean(x{args})[0] + torch.{name}_mean(x{args})[1] * 3",
                  dtype=dtype, x=x)
    spread = ddx.trace(f"torch.{name}(x{args})", dtype=dtype, x=x).value
    mean_args = args.replace(", correction=0", "").replace(", unbiased=False", "")
    mean = ddx.trace(f"torch.mean(x{mean_args})", dtype=dtype, x=x).value
    tdtype = getattr(torch, dtype)
    xt = torch.tensor(x, dtype=tdtype, requires_grad=True)
    scope = {"torch": torch, "x": xt}
    s_t, m_t = eval(f"torch.{name}_mean(x{args})", scope)  # noqa: S307 - the test's own text
    assert s_t.grad_fn.name() == f"{name.capitalize()}MeanBackward0"
    assert g.output.inputs[0].grad_fn.name == s_t.grad_fn.name()
    assert g.output.inputs[1].inputs[0].grad_fn.name == m_t.grad_fn.name()
    w = RNG.standard_normal(s_t.shape)
    (s_t + m_t * 3).backward(torch.tensor(w, dtype=tdtype))
    scale = 64 * np.finfo(dtype).eps * float(np.max(np.abs(x)))
    np.testing.assert_allclose(g.output.value, (s_t + m_t * 3).detach().numpy(),
                               rtol=8 * np.finfo(dtype).eps, atol=scale)
    _same_bits(g.output.inputs[0].value, spread, "the spread is ddx's var/std")
    _same_bits(g.output.inputs[1].inputs[0].value, mean, "the mean is ddx's mean")
    g.backward(w.astype(dtype))
    np.testing.assert_allclose(g.grads["x"], xt.grad.numpy(), rtol=16 * np.finfo(dtype).eps,
                               atol=4 * np.finfo(dtype).eps)


PAIRS = [
    ("hstack([x, y])", lambda t, x, y: t.hstack([x, y]), (3, 4), (3, 2)),
    ("torch.vstack([x, y])", lambda t, x, y: t.vstack([x, y]), (4,), (2, 4)),
    ("torch.cross(x, y, dim=0)", lambda t, x, y: t.cross(x, y, dim=0), (3, 17), (3, 17)),
    ("torch.linalg.cross(x, y)", lambda t, x, y: t.linalg.cross(x, y), (9, 3), (1, 3)),
    ("kron(x, y)", lambda t, x, y: t.kron(x, y), (2, 3), (3, 2)),
    ("torch.kron(x, y)", lambda t, x, y: t.kron(x, y), (3,), (2, 2)),
    ("torch.scatter(x, 1, torch.tensor([[2, 0], [1, 2]]), y)",
     lambda t, x, y: t.scatter(x, 1, t.tensor([[2, 0], [1, 2]]), y), (2, 3), (2, 2)),
    ("torch.diff(x, prepend=y)", lambda t, x, y: t.diff(x, prepend=y), (2, 5), (2, 1)),
    ("torch.meshgrid(x, y, indexing='xy')[1]",
     lambda t, x, y: t.meshgrid(x, y, indexing="xy")[1], (3,), (4,)),
    ("torch.meshgrid(x, y, indexing='ij')[0]",
     lambda t, x, y: t.meshgrid(x, y, indexing="ij")[0], (3,), (4,)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("source,fn,sx,sy", PAIRS, ids=[c[0] for c in PAIRS])
def test_two_input_functions_are_pytorchs_bits(source, fn, sx, sy, dtype):
    torch = torch_or_skip()
    for kind in ("random", "ties"):
        _both(torch, source, fn, {"x": _data(kind, sx), "y": _data(kind, sy)}, dtype)


def test_rot90_in_every_direction_is_pytorchs():
    torch = torch_or_skip()
    x = _data("random", (2, 3, 4))
    for k in (-1, 0, 1, 2, 3, 5):
        for dims in ([0, 1], [1, 0], [2, 0], [-1, -2]):
            _both(torch, f"torch.rot90(x, {k}, {dims})",
                  lambda t, x, k=k, dims=dims: t.rot90(x, k, dims), {"x": x}, "float32")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_orders_and_nan_reductions_are_pytorchs(dtype):
    torch = torch_or_skip()
    x = np.array([[np.nan, 1.0, -0.0, 0.0, np.nan, -1.0, np.inf, -np.inf],
                  [2.0, np.nan, 2.0, -3.0, 0.5, np.inf, 1.0, 0.0]])
    for source, fn in [("sort(x)[0]", lambda t, x: t.sort(x).values),
                       ("sort(x, descending=True)[0]", lambda t, x: t.sort(x, descending=True)[0]),
                       ("median(x)", lambda t, x: t.median(x)),
                       ("nansum(x, 1)", lambda t, x: t.nansum(x, 1)),
                       ("nanmean(x, 1)", lambda t, x: t.nanmean(x, 1)),
                       ("nanmean(x)", lambda t, x: t.nanmean(x))]:
        _both(torch, source, fn, {"x": x}, dtype)
    for source, fn in [("argsort(x)", lambda t, x: t.argsort(x)),
                       ("argsort(x, 1, descending=True)", lambda t, x: t.argsort(x, 1, True)),
                       ("sort(x, dim=0, stable=True)[1]",
                        lambda t, x: t.sort(x, dim=0, stable=True)[1]),
                       ("median(x, 1)[0]", lambda t, x: t.median(x, 1)[0]),
                       ("isnan(x)", lambda t, x: t.isnan(x)),
                       ("x.isinf()", lambda t, x: x.isinf()),
                       ("torch.isfinite(x)", lambda t, x: t.isfinite(x)),
                       ("count_nonzero(x, 1)", lambda t, x: t.count_nonzero(x, 1))]:
        _both(torch, source, fn, {"x": x}, dtype, grad=False)


def test_logaddexp_is_within_a_few_ulps_of_pytorch():
    """(PyTorch's vectorised exp/log1p are Sleef's; numpy's differ in the last bit for some
    values: counted here, so that a change shows.)"""
    torch = torch_or_skip()
    a = RNG.standard_normal(20000) * 10
    b = RNG.standard_normal(20000) * 10
    for dtype, most in (("float32", 100), ("float64", 100)):
        g = ddx.trace("logaddexp(x, y)", dtype=dtype, x=a, y=b)
        theirs = torch.logaddexp(torch.tensor(a, dtype=getattr(torch, dtype)),
                                 torch.tensor(b, dtype=getattr(torch, dtype))).numpy()
        assert np.sum(g.output.value != theirs) <= most
        np.testing.assert_allclose(g.output.value, theirs, rtol=4 * np.finfo(dtype).eps,
                                   atol=4 * np.finfo(dtype).eps)
    g = ddx.trace("logaddexp(x, y)", x=np.array([np.inf, -np.inf, np.nan, 1.0]),
                  y=np.array([np.inf, -np.inf, 1.0, -np.inf]))
    np.testing.assert_array_equal(g.output.value, [np.inf, -np.inf, np.nan, 1.0])
    g.backward(np.ones(4))
    assert g.output.grad_fn.name == "LogaddexpBackward0"


# --- functions without a gradient: values, dtypes, no grad_fn -----------------------------------
NO_GRAD = [
    ("argsort(x)", lambda t, x: t.argsort(x)),
    ("x.argsort(dim=0, descending=True)", lambda t, x: x.argsort(dim=0, descending=True)),
    ("torch.sort(x, 0)[1]", lambda t, x: t.sort(x, 0)[1]),
    ("torch.mode(x, 0)[1]", lambda t, x: t.mode(x, 0)[1]),
    ("isnan(x / 0)", lambda t, x: t.isnan(x / 0)),
    ("torch.isinf(x / 0)", lambda t, x: t.isinf(x / 0)),
    ("x.isfinite()", lambda t, x: x.isfinite()),
    ("count_nonzero(x)", lambda t, x: t.count_nonzero(x)),
    ("torch.count_nonzero(x, dim=(0, 1))", lambda t, x: t.count_nonzero(x, dim=(0, 1))),
    ("nonzero(x)", lambda t, x: t.nonzero(x)),
    ("torch.searchsorted(torch.tensor([-1.0, 0.0, 1.0]), x)",
     lambda t, x: t.searchsorted(t.tensor([-1.0, 0.0, 1.0], dtype=x.dtype), x)),
    ("torch.searchsorted(torch.tensor([-1.0, 0.0, 1.0]), x, right=True)",
     lambda t, x: t.searchsorted(t.tensor([-1.0, 0.0, 1.0], dtype=x.dtype), x, right=True)),
    ("torch.bucketize(x, torch.tensor([-1.0, 0.0, 1.0]), right=True)",
     lambda t, x: t.bucketize(x, t.tensor([-1.0, 0.0, 1.0], dtype=x.dtype), right=True)),
    ("torch.histc(x, bins=7)", lambda t, x: t.histc(x, bins=7)),
    ("torch.histc(x, 5, -1, 1)", lambda t, x: t.histc(x, 5, -1, 1)),
    ("torch.floor_divide(x, 0.75)", lambda t, x: t.floor_divide(x, 0.75)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("source,fn", NO_GRAD, ids=[c[0] for c in NO_GRAD])
def test_functions_without_gradient_give_pytorchs_values_and_no_grad_fn(source, fn, dtype):
    torch = torch_or_skip()
    for kind in ("random", "ties", "special"):
        x = _data(kind, (4, 9))
        xt = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
        theirs = fn(torch, xt)
        g = ddx.trace(source, dtype=dtype, x=x)
        assert not g.output.requires_grad and g.output.grad_fn is None
        if source.startswith("torch.floor_divide"):  # (PyTorch: grad_fn NotImplemented)
            theirs = theirs.detach()
        assert not theirs.requires_grad, source
        _same_bits(g.output.value, theirs.numpy(), source)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unique_is_pytorchs(dtype):
    torch = torch_or_skip()
    x = np.array([3.0, 1.0, 2.0, 1.0, np.nan, 0.0, -0.0, np.nan, 3.0, -0.0, 2.0])
    m = RNG.integers(0, 3, (6, 4)).astype(float)
    for source, fn, data in [
            ("unique(x)", lambda t, x: t.unique(x), x),
            ("x.unique(sorted=False)", lambda t, x: x.unique(sorted=False), x),
            ("torch.unique(x, return_inverse=True, return_counts=True)[0]",
             lambda t, x: t.unique(x, return_inverse=True, return_counts=True)[0], x),
            ("torch.unique(x, return_inverse=True, return_counts=True)[1]",
             lambda t, x: t.unique(x, return_inverse=True, return_counts=True)[1], x),
            ("torch.unique(x, return_counts=True)[1]",
             lambda t, x: t.unique(x, return_counts=True)[1], x),
            ("torch.unique(x, dim=0, return_inverse=True)[0]",
             lambda t, x: t.unique(x, dim=0, return_inverse=True)[0], m),
            ("torch.unique(x, dim=1, return_inverse=True)[1]",
             lambda t, x: t.unique(x, dim=1, return_inverse=True)[1], m),
            ("torch.unique(x, dim=0, return_counts=True)[1]",
             lambda t, x: t.unique(x, dim=0, return_counts=True)[1], m)]:
        theirs = fn(torch, torch.tensor(data, dtype=getattr(torch, dtype)))
        g = ddx.trace(source, dtype=dtype, x=data)
        assert g.output.grad_fn is None
        _same_bits(g.output.value, theirs.numpy(), source)


def test_bincount_is_pytorchs():
    torch = torch_or_skip()
    idx = RNG.integers(0, 6, 40)
    w = RNG.standard_normal(40)
    for source, fn in [("bincount(i)", lambda t: t.bincount(t.tensor(idx))),
                       ("bincount(i, minlength=9)", lambda t: t.bincount(t.tensor(idx),
                                                                         minlength=9)),
                       ("bincount(i, w)", lambda t: t.bincount(t.tensor(idx), t.tensor(w)))]:
        g = ddx.trace(source, i=idx.astype(float), w=w)
        np.testing.assert_array_equal(g.output.value, fn(torch).numpy())
        assert g.output.value.dtype == fn(torch).numpy().dtype


# --- ddx run against Python with PyTorch: reprs, named results, grad_fn names, errors ---------
SCRIPT = """import torch
x = torch.tensor([[3.0, 1.0, 2.0], [0.5, -1.0, 4.0]], requires_grad=True)
y = torch.tensor([[1.0, 2.0, 0.5], [2.0, -3.0, 1.5]], requires_grad=True)
v = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
print(torch.sort(x, dim=1, descending=True))
print(x.sort(stable=True))
print(x.argsort(dim=0), torch.topk(x, 2))
print(torch.median(x), x.median(dim=1), torch.mode(x, 0))
print(torch.aminmax(x), x.aminmax(dim=0, keepdim=True))
print(torch.var_mean(x, 1), torch.std_mean(x, unbiased=False))
print(torch.isnan(x), x.isinf(), torch.isfinite(x), x.count_nonzero(dim=1))
print(torch.nonzero(x > 1), torch.nonzero(x > 1, as_tuple=True))
b = torch.tensor([0.0, 1.0, 2.0])
print(torch.searchsorted(b, x), torch.bucketize(x, b, right=True))
print(torch.bincount(torch.tensor([0, 1, 1, 3])), torch.histc(x, bins=4))
print(torch.nansum(x), x.nansum(1), torch.nanmean(x, 0))
print(torch.logaddexp(x, y), torch.deg2rad(x), x.rad2deg(), torch.positive(x) is x)
print(torch.rot90(x), torch.take(x, torch.tensor([[0, 5], [-1, 2]])))
print(torch.cross(x, y, dim=1), torch.dist(x, y), torch.dist(x, v, 3))
print(x.scatter(0, torch.tensor([[1, 0, 1]]), 0.5), torch.diff(x, n=2, dim=1))
print(torch.hstack([x, y]), torch.vstack([x, v]), torch.tile(v, (2, 2)))
print(x.unflatten(1, (3, 1)), torch.repeat_interleave(x, torch.tensor([1, 2]), dim=0))
print(torch.meshgrid(v, v[:2], indexing="ij"), torch.kron(v, x))
z = (torch.sort(x, 1)[0] * y).sum() + torch.topk(x, 2)[0].sum() + torch.median(x)
z = z + torch.mode(x, 1)[0].sum() + torch.aminmax(x)[1] + torch.var_mean(x, 1)[1].sum()
z = z + torch.nanmean(x) + torch.dist(x, y) + torch.kron(v, x).pow(2).sum()
z = z + torch.cross(x, y, dim=1).pow(2).sum() + torch.diff(x).pow(2).sum()
z.backward()
print(z, x.grad, y.grad, v.grad)
def check(f):
    try:
        f()
    except Exception as e:  # (the text: ddx's class for an out-of-range dim is RuntimeError)
        print(e)
check(lambda: x.sort(dim=5))
check(lambda: x.topk(4))
check(lambda: torch.median(x, 2))
check(lambda: torch.take(x, torch.tensor([6])))
check(lambda: torch.rot90(v))
check(lambda: torch.diff(torch.tensor(1.0)))
check(lambda: torch.cross(x[:, :2], y[:, :2], dim=1))
check(lambda: torch.bincount(torch.tensor([-1, 2])))
check(lambda: x.unflatten(1, (2, 2)))
check(lambda: torch.histc(x, bins=0))
"""


def test_ddx_run_prints_what_python_with_pytorch_prints(tmp_path):
    torch_or_skip()
    script = tmp_path / "more.py"
    script.write_text(SCRIPT)
    python = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120)
    assert python.returncode == 0, python.stderr
    ours = subprocess.run([sys.executable, "-m", "ddx", "run", str(script)], capture_output=True,
                          text=True, timeout=120)
    assert ours.stderr == ""
    assert ours.stdout.splitlines() == python.stdout.splitlines()


@pytest.mark.parametrize("line,message", [
    ("x.sort(5)", "error: Dimension out of range (expected to be in range of [-2, 1], but got 5)"),
    ("torch.argsort(x, -3)",
     "error: Dimension out of range (expected to be in range of [-2, 1], but got -3)"),
    ("x.topk(4)", "error: selected index k out of range"),
    ("torch.mode(x, 2)",
     "error: Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ("torch.rot90(x, 1, [0, 0])",
     "error: expected rotation dims to be different, but got dim0 = 0 and dim1 = 0"),
    ("torch.take(x, torch.tensor([7]))",
     "error: out of range: tried to access index 7 on a tensor of 6 elements."),
    ("torch.diff(x, n=-1)", "error: order must be non-negative but got -1"),
    ("torch.bincount(torch.tensor([0.5]))",
     "error: \"bincount_cpu\" not implemented for 'Float'"),
    ("torch.positive(x > 0)", "error: The `+` operator, on a bool tensor is not supported."),
])
def test_misuse_gives_pytorchs_error_text(line, message):
    got = session_run(f"import torch\nx = torch.ones(2, 3, requires_grad=True)\n{line}\n")
    assert got == [message]


# --- the one-liner ------------------------------------------------------------------------------
def test_one_liners_sort_and_differentiate(run_json):
    code, out, _ = run_json("sum(sort(x)[0] * w)", "x=[3,1,2]", "w=[1,10,100]")
    assert code == 0
    assert out["value"] == 1 * 1 + 10 * 2 + 100 * 3
    assert out["gradients"]["x"] == [100.0, 1.0, 10.0]
    code, out, _ = run_json("median(x) + nansum(x) + topk(x, 1)[0][0]", "x=[3,1,2]")
    assert code == 0 and out["value"] == 2 + 6 + 3
    assert out["gradients"]["x"] == [2.0, 1.0, 2.0]


# --- special functions ----------------------------------------------------------------------------
def _special_points(dtype: str) -> np.ndarray:
    x = np.concatenate([RNG.standard_normal(4000) * 3, RNG.uniform(-30, 30, 4000),
                        10 ** RNG.uniform(-20, 20, 2000),
                        [0.0, -0.0, 1.0, 2.0, -1.0, -2.5, 10.0, np.inf, -np.inf, np.nan]])
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_digamma_is_pytorchs_bits_and_its_gradient_pytorchs_trigamma(dtype):
    torch = torch_or_skip()
    x = _special_points(dtype)
    g = ddx.trace("torch.digamma(x)", dtype=dtype, x=x)
    theirs = torch.digamma(torch.tensor(x))
    _same_bits(g.output.value, theirs.numpy(), "digamma")
    assert g.output.grad_fn.name == "DigammaBackward0"
    y = RNG.uniform(0.5, 20, 1000).astype(dtype)
    _both(torch, "x.digamma() * 1", lambda t, x: x.digamma() * 1, {"x": y}, dtype, grad=False)
    g = ddx.trace("torch.special.digamma(x)", dtype=dtype, x=y)
    yt = torch.tensor(y, requires_grad=True)
    torch.special.digamma(yt).backward(torch.ones(y.shape, dtype=yt.dtype))
    g.backward(np.ones(y.shape, dtype=dtype))
    np.testing.assert_allclose(g.grads["x"], yt.grad.numpy(), rtol=4 * np.finfo(dtype).eps)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,most", [("lgamma", 0.4), ("erfinv", 0.85)])
def test_lgamma_and_erfinv_are_within_an_ulp_or_two_of_pytorch(name, most, dtype):
    """(Not PyTorch's bits: its vectorised lgamma is Sleef's, and its erfinv's last bits
    differ from this port of calc_erfinv for most values (half to four fifths); counted, so that a
    change shows. Their gradients are PyTorch's formulas.)"""
    torch = torch_or_skip()
    x = _special_points(dtype)
    if name == "erfinv":
        # (past 0.999 the two differ more: 6e-5 relative at 1 - 1e-13 in float64)
        x = np.concatenate([np.clip(np.tanh(x[:8000]), -0.999, 0.999),
                            [1.0, -1.0, 1.5, -0.0]]).astype(dtype)
    g = ddx.trace(f"torch.{name}(x)", dtype=dtype, x=x)
    theirs = getattr(torch, name)(torch.tensor(x)).numpy()
    same = (g.output.value == theirs) | (np.isnan(g.output.value) & np.isnan(theirs))
    assert np.mean(~same) <= most
    np.testing.assert_allclose(g.output.value, theirs, rtol=200 * np.finfo(dtype).eps,
                               atol=4 * np.finfo(dtype).eps)
    y = RNG.uniform(0.5, 0.9, 200).astype(dtype)
    yt = torch.tensor(y, requires_grad=True)
    getattr(torch, name)(yt).backward(torch.ones(y.shape, dtype=yt.dtype))
    g = ddx.trace(f"x.{name}()", dtype=dtype, x=y)
    assert g.output.grad_fn.name == getattr(torch, name)(yt).grad_fn.name()
    g.backward(np.ones(y.shape, dtype=dtype))
    np.testing.assert_allclose(g.grads["x"], yt.grad.numpy(), rtol=200 * np.finfo(dtype).eps)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("source,fn,shapes", [
    ("torch.cdist(x, y)", lambda t, x, y: t.cdist(x, y), ((5, 7), (6, 7))),
    ("torch.cdist(x, y, p=1)", lambda t, x, y: t.cdist(x, y, p=1), ((5, 7), (6, 7))),
    ("torch.cdist(x, y, 3)", lambda t, x, y: t.cdist(x, y, 3), ((2, 5, 3), (2, 4, 3))),
    ("torch.baddbmm(x, y, y.transpose(1, 2), beta=0.5, alpha=2)",
     lambda t, x, y: t.baddbmm(x, y, y.transpose(1, 2), beta=0.5, alpha=2), ((3, 4, 4), (3, 4, 6))),
    ("x.baddbmm(y, y.mT)", lambda t, x, y: x.baddbmm(y, y.mT), ((1, 4), (2, 4, 3))),
])
def test_cdist_and_baddbmm_are_within_an_ulp_of_pytorch(source, fn, shapes, dtype):
    """(Their sums of products are in numpy's order, not ATen's vectorised one: a few
    values differ in the last bit, as the ones counted here.)"""
    torch = torch_or_skip()
    x, y = (_data("random", s) for s in shapes)
    tdtype = getattr(torch, dtype)
    xt, yt = (torch.tensor(v, dtype=tdtype, requires_grad=True) for v in (x, y))
    out = fn(torch, xt, yt)
    g = ddx.trace(source, dtype=dtype, x=x, y=y)
    assert g.output.grad_fn.name == out.grad_fn.name()
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(g.output.value, out.detach().numpy(), rtol=8 * eps, atol=8 * eps)
    w = RNG.standard_normal(out.shape)
    out.backward(torch.tensor(w, dtype=tdtype))
    g.backward(w.astype(dtype))
    for k, t in (("x", xt), ("y", yt)):
        np.testing.assert_allclose(g.grads[k], t.grad.numpy(), rtol=64 * eps, atol=64 * eps)
