"""Elementwise functions and their gradients bit for bit with PyTorch's CPU build: reciprocal,
rsqrt, log1p, sinh, cosh, tanh, erf, softsign, tanhshrink, asinh, acosh, atanh
(ddx/ops/kernels_unary.py, ddx/ops/kernels_sleef.py). torch 2.13 is the oracle: float32 values
and gradients over 20,000+ values with 0, -0, tiny, huge, inf and nan, at sizes that leave
vector bodies and scalar tails; float64 gradients where the rule is what differed."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from conftest import torch_or_skip
from test_vml import mkl_or_skip

import ddx
from ddx.ops import OPS, kernels_sleef, kernels_unary

SPECIAL = [0.0, -0.0, 1e-40, -1e-40, 1e-30, -3e-8, 3e-8, 1.0, -1.0, 0.5, 20.0, -20.0, 88.5, 89.5,
           -95.0, 1e30, -1e30, 3e38, np.inf, -np.inf, np.nan]
# (name, torch function's path, needs MKL in float32: its value or its rule calls VML)
FUNCTIONS = [("reciprocal", "reciprocal", False), ("rsqrt", "rsqrt", False),
             ("log1p", "log1p", False), ("sinh", "sinh", False), ("cosh", "cosh", False),
             ("tanh", "tanh", True), ("erf", "erf", True), ("softsign", "F.softsign", False),
             ("tanhshrink", "F.tanhshrink", True), ("asinh", "asinh", False),
             ("acosh", "acosh", False), ("atanh", "atanh", False), ("expm1", "expm1", False),
             ("exp2", "exp2", False), ("erfc", "erfc", True), ("logit", "logit", True)]
SIZES = (1, 3, 7, 8, 9, 16, 17, 31, 32, 33, 63, 64, 65, 1000)


@pytest.fixture(autouse=True)
def _torch_threads_as_they_were():
    """Tests here run torch on one thread; later files compare with torch on as many threads
    as ddx uses (past GRAIN_SIZE each thread's range has a scalar tail), so the count is put
    back after each test."""
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else None
    yield
    torch = sys.modules.get("torch")
    if torch is not None:
        from ddx.ops.kernels_sum import threads

        torch.set_num_threads(before if before is not None else threads())


def inputs(name: str, dtype, n: int = 20_000, seed: int = 0) -> np.ndarray:
    """Normal*3 values and wider ones, moved into the function's domain, and the specials."""
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.standard_normal(n) * 3, rng.standard_normal(n // 4) * 40,
                        rng.uniform(-1e-3, 1e-3, n // 8), np.exp(rng.uniform(-60, 60, n // 8))])
    if name in ("rsqrt",):
        x = np.abs(x) + 1e-6
    elif name == "log1p":
        x = np.where(rng.random(x.size) < 0.5, np.abs(x) - 0.999, x * 1e-3)
    elif name == "acosh":
        x = np.abs(x) + 1
    elif name == "atanh":
        x = np.tanh(x / 3)
    elif name == "logit":
        x = 1 / (1 + np.exp(-x / 3))
    return np.concatenate([x, SPECIAL]).astype(dtype)


def torch_function(torch, path: str):
    if path.startswith("F."):
        return getattr(torch.nn.functional, path[2:])
    return getattr(torch, path)


def same_bits(ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """Where the two arrays differ in their bits (a nan's payload too)."""
    ints = np.int32 if ours.dtype == np.float32 else np.int64
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    return ours.view(ints) != theirs.view(ints)


def torch_value_and_grad(torch, path, x, g):
    tx = torch.from_numpy(x.copy()).requires_grad_()
    ty = torch_function(torch, path)(tx)
    ty.backward(torch.from_numpy(g.copy()))
    return ty.detach().numpy(), tx.grad.numpy()


def ddx_value(name, x):
    return np.asarray(ddx.trace(f"{name}(x)", {"x": x}, dtype=x.dtype.name, no_grad="x").value)


def ddx_value_and_grad(name, x, g):
    t = ddx.trace(f"{name}(x)", {"x": x}, dtype=x.dtype.name)
    t.backward(gradient=g)
    return np.asarray(t.value), np.asarray(t.grads["x"])


@pytest.mark.parametrize("name,path,mkl", FUNCTIONS)
def test_float32_values_and_gradients_are_pytorchs(name, path, mkl):
    torch = torch_or_skip()
    if mkl:
        mkl_or_skip()
    torch.set_num_threads(1)
    x = inputs(name, np.float32)
    g = np.random.default_rng(1).standard_normal(x.size).astype(np.float32)
    want_value, want_grad = torch_value_and_grad(torch, path, x, g)
    value, grad = ddx_value_and_grad(name, x, g)
    assert same_bits(value, want_value).sum() == 0, x[same_bits(value, want_value)][:8]
    assert same_bits(grad, want_grad).sum() == 0, x[same_bits(grad, want_grad)][:8]


@pytest.mark.parametrize("name,path,mkl", FUNCTIONS)
def test_float32_vector_bodies_and_scalar_tails(name, path, mkl):
    torch = torch_or_skip()
    if mkl:
        mkl_or_skip()
    torch.set_num_threads(1)
    fn = OPS[name].fn if name in OPS else (lambda v: ddx_value(name, v))
    rng = np.random.default_rng(2)
    for n in SIZES:
        x = inputs(name, np.float32, n=8 * n, seed=n)[rng.permutation(10 * n)[:n] % (8 * n)]
        want = torch_function(torch, path)(torch.from_numpy(x.copy())).numpy()
        assert same_bits(fn(x), want).sum() == 0, (n, x)
    x = inputs(name, np.float32, n=64)[:40]
    want = torch_function(torch, path)(torch.from_numpy(np.array(x[5]))).numpy()
    one = fn(x[5])  # (a numpy scalar: a 0-d tensor's value)
    assert one.dtype == np.float32 and one.tobytes() == want.tobytes()
    grid = x.reshape(5, 8)  # (a 2-d tensor is one run of its elements)
    want = torch_function(torch, path)(torch.from_numpy(grid.copy())).numpy()
    assert same_bits(fn(grid), want).sum() == 0


@pytest.mark.parametrize("name", ["sinh", "cosh", "atanh", "exp2"])
def test_threads_ranges_end_in_scalar_tails(name):
    """Past GRAIN_SIZE, at::parallel_for gives each thread a range of its own, and each range
    ends in its own scalar tail: with two threads 70,001 elements are two ranges of 35,001."""
    torch = torch_or_skip()
    from ddx.ops.kernels_sum import threads

    x = inputs(name, np.float32, n=60_000)[:70_001]
    torch.set_num_threads(threads())  # (as torch starts: tests before may have set another)
    want = getattr(torch, name)(torch.from_numpy(x.copy())).numpy()
    assert same_bits(OPS[name].fn(x), want).sum() == 0
    if threads() > 1:  # (the vector function on every element would differ somewhere)
        vector = getattr(kernels_sleef, name + "f")
        assert same_bits(vector(x), want).sum() > 0


@pytest.mark.parametrize("name", ["sinh", "cosh", "atanh", "log1p", "expm1", "exp2"])
def test_sleef_kernels_on_whole_vectors(name):
    """Multiples of 32 elements are all vector bodies: SLEEF's function on every one."""
    torch = torch_or_skip()
    torch.set_num_threads(1)
    x = inputs(name, np.float32)
    x = x[: x.size // 32 * 32]
    want = getattr(torch, name)(torch.from_numpy(x.copy())).numpy()
    ours = getattr(kernels_sleef, name + "f")(x)
    assert same_bits(ours, want).sum() == 0
    assert same_bits(getattr(np, {"atanh": "arctanh"}.get(name, name))(x), want).sum() > 20


@pytest.mark.parametrize("name,path", [("reciprocal", "reciprocal"), ("rsqrt", "rsqrt"),
                                       ("softsign", "F.softsign"), ("asinh", "asinh"),
                                       ("acosh", "acosh")])
def test_float64_values_and_gradients_are_pytorchs(name, path):
    torch = torch_or_skip()
    x = inputs(name, np.float64)
    g = np.random.default_rng(3).standard_normal(x.size)
    want_value, want_grad = torch_value_and_grad(torch, path, x, g)
    value, grad = ddx_value_and_grad(name, x, g)
    assert same_bits(value, want_value).sum() == 0
    assert same_bits(grad, want_grad).sum() == 0


@pytest.mark.parametrize("name", ["sinh", "cosh", "atanh", "asinh", "acosh", "exp2"])
def test_float64_numbers_and_short_arrays_are_the_c_librarys(name):
    """In float64 ATen's vector loop takes 16 elements at a time: a number or fewer than 16
    are all scalar tail, the C library's function (the one-liner's case)."""
    torch = torch_or_skip()
    x = inputs(name, np.float64, n=400)
    for n in (1, 3, 7, 15):
        for start in range(0, x.size - n, 37):
            part = x[start:start + n].copy()
            want = getattr(torch, name)(torch.from_numpy(part)).numpy()
            assert same_bits(OPS[name].fn(part), want).sum() == 0, part
    for v in x.tolist():
        want = getattr(torch, name)(torch.tensor(v, dtype=torch.float64)).numpy()
        one = OPS[name].fn(np.float64(v))
        assert type(one) is np.float64 and one.tobytes() == want.tobytes(), v
    t = ddx.trace(f"{name}(x)", x=float(x[3]))
    assert np.asarray(t.value).tobytes() == \
        getattr(torch, name)(torch.tensor(float(x[3]), dtype=torch.float64)).numpy().tobytes()


@pytest.mark.parametrize("name,path", [("tanh", "tanh"), ("tanhshrink", "F.tanhshrink"),
                                       ("sinh", "sinh"), ("cosh", "cosh"), ("erf", "erf"),
                                       ("atanh", "atanh"), ("log1p", "log1p")])
def test_float64_rules_are_pytorchs_given_its_values(name, path):
    """float64 values of these come from MKL or SLEEF in torch and from numpy in ddx (the
    one-liner loads neither); the rules themselves, fed torch's own numbers, are torch's."""
    torch = torch_or_skip()
    x = inputs(name, np.float64)
    g = np.random.default_rng(4).standard_normal(x.size)
    value, want_grad = torch_value_and_grad(torch, path, x, g)
    tx = torch.from_numpy(x)
    fed = {"sinh": torch.cosh, "cosh": torch.sinh, "tanhshrink": torch.tanh}
    if name in fed:  # (the function the rule calls, as torch computes it)
        other = fed[name](tx).numpy()
        rule = {"sinh": lambda: g * other, "cosh": lambda: g * other,
                "tanhshrink": lambda: g + OPS["tanh"].vjp[0](-g, other, x)}[name]
        grad = rule()
    elif name == "erf":
        grad = (kernels_unary.TWO_OVER_SQRT_PI * torch.exp(torch.from_numpy(-(x * x))).numpy()) * g
    else:
        grad = OPS[name].vjp[0](g, value, x)
    assert same_bits(grad, want_grad).sum() == 0
    before = {"tanh": lambda: g * (1 - value * value), "sinh": lambda: g * np.cosh(x)}
    if name in before:  # (what ddx computed before: the test sees the difference)
        assert same_bits(before[name](), want_grad).sum() > 100


def test_fused_one_minus_square_is_exact_on_scalars_and_arrays():
    rng = np.random.default_rng(5)
    o = np.concatenate([np.tanh(rng.standard_normal(4000) * 3), rng.uniform(0.70, 0.72, 2000),
                        math.sqrt(0.5) + rng.integers(-500, 500, 1000) * 2.0 ** -53,
                        rng.uniform(-1e-8, 1e-8, 500), rng.standard_normal(500) * 10,
                        [0.0, -0.0, 1.0, -1.0, 2.0 ** -27, 1.5, 2.0 ** -540, 5e-324]])
    exact = [float(1 - Fraction(v) * Fraction(v)) for v in o.tolist()]
    assert [kernels_unary.one_minus_square(v) for v in o.tolist()] == exact  # Python floats
    assert [float(kernels_unary.one_minus_square(v)) for v in o] == exact  # numpy scalars
    assert kernels_unary.one_minus_square(o).tolist() == exact  # arrays
    o32 = o.astype(np.float32)
    exact32 = np.array([float(1 - Fraction(float(v)) ** 2) for v in o32], np.float64)
    assert kernels_unary.one_minus_square(o32).tolist() == exact32.astype(np.float32).tolist()
    assert math.isnan(kernels_unary.one_minus_square(math.nan))
    assert kernels_unary.one_minus_square(math.inf) == -math.inf


def test_rules_take_the_plain_formula_for_other_number_types():
    """Dual numbers, symbolic values and object arrays are not floats: the plain formula."""
    o = np.array([0.5, 0.25], dtype=object)
    assert kernels_unary.one_minus_square(o).tolist() == [0.75, 0.9375]
    t = ddx.trace("tanh(x) + atanh(x/2) + asinh(x) + acosh(x + 2)", x=0.5)
    h = float(t.hessian()["hessian"]["x"]["x"])
    y, s = math.tanh(0.5), 0.25
    want = -2 * y * (1 - y * y) + (2 * s / (1 - s * s) ** 2) / 4 - 0.5 / (1.25 ** 1.5) \
        - 2.5 / ((2.5 ** 2 - 1) ** 1.5)  # (by hand: each function's second derivative)
    assert abs(h - want) < 1e-12


@pytest.mark.parametrize("source", ["softsign(x) + tanh(x)", "tanhshrink(x) * 3 + softsign(x)",
                                    "softsign(x) + atanh(x / 2) + sinh(x) * cosh(x)"])
def test_composites_add_gradients_in_pytorchs_order(source):
    """softsign and tanhshrink are recorded as PyTorch's ops, so a leaf reached by them and
    by other paths gets its gradients added in the order PyTorch's engine adds them."""
    torch = torch_or_skip()
    mkl_or_skip()
    x = (np.random.default_rng(6).standard_normal(999) * 1.5).astype(np.float32)
    g = np.random.default_rng(7).standard_normal(999).astype(np.float32)
    t = ddx.trace(source, {"x": x}, dtype="float32")
    t.backward(gradient=g)
    F = torch.nn.functional
    scope = {"softsign": F.softsign, "tanhshrink": F.tanhshrink, "tanh": torch.tanh,
             "atanh": torch.atanh, "sinh": torch.sinh, "cosh": torch.cosh}
    tx = torch.from_numpy(x.copy()).requires_grad_()
    y = {"softsign(x) + tanh(x)": lambda: scope["softsign"](tx) + torch.tanh(tx),
         "tanhshrink(x) * 3 + softsign(x)": lambda: F.tanhshrink(tx) * 3 + F.softsign(tx),
         "softsign(x) + atanh(x / 2) + sinh(x) * cosh(x)":
             lambda: F.softsign(tx) + torch.atanh(tx / 2) + torch.sinh(tx) * torch.cosh(tx)}[source]()
    y.backward(torch.from_numpy(g))
    assert same_bits(np.asarray(t.value), y.detach().numpy()).sum() == 0
    assert same_bits(np.asarray(t.grads["x"]), tx.grad.numpy()).sum() == 0


def test_composites_record_pytorchs_grad_fn_chain():
    t = ddx.trace("softsign(x)", x=0.5)
    assert str(t.output.grad_fn) == "<DivBackward0 object>"
    assert [str(n.grad_fn) for n in t.evaluator.nodes] == \
        ["None", "<AbsBackward0 object>", "<AddBackward0 object>", "<DivBackward0 object>"]
    t = ddx.trace("tanhshrink(x)", x=0.5)
    assert [str(n.grad_fn) for n in t.evaluator.nodes] == \
        ["None", "<TanhBackward0 object>", "<SubBackward0 object>"]


def test_new_rows_have_pytorchs_names_and_gradients():
    t = ddx.trace("asinh(x) + acosh(y) + atanh(z)", x=0.5, y=2.0, z=-0.25)
    t.backward()
    assert [t.grads[k] for k in "xyz"] == [1 / math.sqrt(1.25), 1 / math.sqrt(3.0), 1 / 0.9375]
    assert {OPS[n].grad_fn for n in ("asinh", "acosh", "atanh")} == \
        {"AsinhBackward0", "AcoshBackward0", "AtanhBackward0"}
    for alias, name, at in (("arcsinh", "asinh", 0.5), ("arccosh", "acosh", 1.5),
                            ("arctanh", "atanh", 0.5)):
        assert ddx.trace(f"{alias}(x)", x=at).value == ddx.trace(f"{name}(x)", x=at).value \
            == OPS[name].fn(np.float64(at))


def test_float64_one_liner_never_looks_for_mkl():
    code = ("import contextlib, sys, ddx.app.cli; from ddx.ops import vml\n"
            "for e in ('erf(x)', 'sinh(x)+cosh(x)+tanh(x)+atanh(x/2)', 'log1p(x)*asinh(x)'):\n"
            "    sys.argv = ['ddx', e, 'x=0.5', '--json']\n"
            "    with contextlib.suppress(SystemExit):\n        ddx.app.cli.main()\n"
            "print(len(vml._LIB))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env={**os.environ})
    assert run.stdout.splitlines()[-1] == "0", run.stderr


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_division_gradients_are_pytorchs(dtype):
    """DivBackward0: grad / other, and -grad * ((self / other) / other) for the denominator
    (softsign's gradient goes through it)."""
    torch = torch_or_skip()
    rng = np.random.default_rng(8)
    a, b, g = (rng.standard_normal(20_000).astype(dtype) * s for s in (3, 2, 1))
    t = ddx.trace("a / b", {"a": a, "b": b}, dtype=np.dtype(dtype).name)
    t.backward(gradient=g)
    ta, tb = (torch.from_numpy(v.copy()).requires_grad_() for v in (a, b))
    (ta / tb).backward(torch.from_numpy(g.copy()))
    assert same_bits(np.asarray(t.grads["a"]), ta.grad.numpy()).sum() == 0
    assert same_bits(np.asarray(t.grads["b"]), tb.grad.numpy()).sum() == 0
    assert same_bits(-g * (a / b) / b, tb.grad.numpy()).sum() > 1000  # (the old rule)


@pytest.mark.parametrize("name", ["asin", "acos", "log10"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rules_that_read_only_the_input_are_pytorchs(name, dtype):
    """asin's ``grad * (-self * self + 1).rsqrt()``, acos's ``grad * -(...).rsqrt()`` and
    log10's ``grad / (self * 2.3025850929940456)`` (a literal one ulp under ln 10)."""
    torch = torch_or_skip()
    rng = np.random.default_rng(9)
    x = rng.standard_normal(20_000) * 3
    x = (np.tanh(x) if name != "log10" else np.abs(x) + 1e-3).astype(dtype)
    g = rng.standard_normal(x.size).astype(dtype)
    _, want = torch_value_and_grad(torch, name, x, g)
    t = ddx.trace(f"{name}(x)", {"x": x}, dtype=np.dtype(dtype).name)
    t.backward(gradient=g)
    assert same_bits(np.asarray(t.grads["x"]), want).sum() == 0


@pytest.mark.parametrize("text, binding, want", [
    ("sinh(x)", 1000.0, "sinh(x) gives inf (overflow) at SinhBackward0"),
    ("log1p(x)", -1.0, "log1p(x) gives -inf (divide by zero) at Log1PBackward0"),
    ("atanh(x)", 2.0, "atanh(x) gives nan (invalid value) at AtanhBackward0"),
])
@pytest.mark.parametrize("dtype, n", [("float64", 0), ("float32", 40), ("float64", 40)])
def test_the_exact_kernels_still_name_where_inf_or_nan_came_from(text, binding, want, dtype, n):
    """SPEC section 3: a domain problem gives inf or nan with a warning naming the node. The
    SLEEF ports and the C library's functions raise no floating-point flags of their own:
    numpy's are raised for them where the result is not finite (before, the value was
    silent)."""
    x = np.full(n, binding) if n else binding
    for _ in range(2):  # (traced, then replayed)
        t = ddx.trace(text, x=x, dtype=dtype)
        got = t.warnings[0] if t.warnings else None
        assert got is not None and got.startswith(want.split(" gives ")[0] + " gives "), got
        assert want.split(" (")[1] in got
