"""Activation functions bit for bit with PyTorch's CPU kernels (ddx/ops/kernels_act.py): values
and gradients, float32 and float64, over tens of thousands of values and the sizes where ATen's
vector bodies and scalar tails meet, through the kernels and through ddx.trace."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import torch_or_skip

import ddx
from ddx.ops import act_loop, kernels_act, sleef, sleef64

SELU = (1.6732632423543772848170429916717, 1.0507009873554804934193349852946)
SPECIAL = [0.0, -0.0, 1e-30, -1e-30, 1e-40, -1e-40, 1e-7, -1e-7, 3.0, -3.0, 8.7, -8.7, 15.0,
           -15.0, 19.99, 20.0, 20.01, -20.0, 30.0, -30.0, 88.0, -88.0, 89.0, -89.0, 104.0, -104.0,
           110.0, -110.0, 1e30, -1e30, 3e38, -3e38, math.inf, -math.inf, math.nan]
SIZES = [1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 1000]

# name: (our forward, our VJP (g, out, x), PyTorch's function of a tensor)
CASES = {
    "sigmoid": (kernels_act.sigmoid, kernels_act.sigmoid_vjp, lambda t, v: t.sigmoid(v)),
    "silu": (kernels_act.silu, kernels_act.silu_vjp, lambda t, v: t.nn.functional.silu(v)),
    "mish": (kernels_act.mish, kernels_act.mish_vjp, lambda t, v: t.nn.functional.mish(v)),
    "softplus": (kernels_act.softplus, kernels_act.softplus_vjp,
                 lambda t, v: t.nn.functional.softplus(v)),
    "softplus(beta=0.7, threshold=1.3)": (
        lambda x: kernels_act.softplus(x, 0.7, 1.3),
        lambda g, o, x: kernels_act.softplus_vjp(g, o, x, 0.7, 1.3),
        lambda t, v: t.nn.functional.softplus(v, 0.7, 1.3)),
    "elu": (kernels_act.elu, kernels_act.elu_vjp, lambda t, v: t.nn.functional.elu(v)),
    "elu(alpha=1.5)": (lambda x: kernels_act.elu(x, 1.5),
                       lambda g, o, x: kernels_act.elu_vjp(g, o, x, 1.5),
                       lambda t, v: t.nn.functional.elu(v, 1.5)),
    "selu": (lambda x: kernels_act.elu(x, *SELU), lambda g, o, x: kernels_act.elu_vjp(g, o, x, *SELU),
             lambda t, v: t.selu(v)),
    "celu(alpha=0.3)": (lambda x: kernels_act.celu(x, 0.3),
                        lambda g, o, x: kernels_act.celu_vjp(g, o, x, 0.3),
                        lambda t, v: t.celu(v, 0.3)),
    "logsigmoid": (kernels_act.logsigmoid, kernels_act.logsigmoid_vjp,
                   lambda t, v: t.nn.functional.logsigmoid(v)),
    "gelu": (kernels_act.gelu, kernels_act.gelu_vjp, lambda t, v: t.nn.functional.gelu(v)),
    "gelu(approximate='tanh')": (kernels_act.gelu_tanh, kernels_act.gelu_tanh_vjp,
                                 lambda t, v: t.nn.functional.gelu(v, approximate="tanh")),
}


def values(n: int, dtype, seed: int) -> np.ndarray:
    """Normal * 3 (where these functions bend), a few wide ones, and SPECIAL spread in."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 3
    wide = rng.random(n) < 0.1
    x[wide] = rng.uniform(-120, 120, int(wide.sum()))
    at = rng.choice(n, min(n, len(SPECIAL)), replace=False)
    x[at] = SPECIAL[:len(at)]
    return x.astype(dtype)


def same_bits(ours, theirs) -> int:
    """How many elements differ: bits where PyTorch's is a number, nan-ness where it is nan."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    nan = np.isnan(theirs)
    width = np.int32 if theirs.dtype == np.float32 else np.int64
    return int(np.sum(nan != np.isnan(ours)) +
               np.sum(ours[~nan].view(width) != theirs[~nan].view(width)))


def torch_value_and_grad(torch, fn, x, g):
    tx = torch.from_numpy(x.copy()).requires_grad_()
    y = fn(torch, tx)
    y.backward(torch.from_numpy(g.copy()))
    return y.detach().numpy(), tx.grad.numpy()


def check(name, dtype, sizes, seed=0):
    torch = torch_or_skip()
    ours_fn, ours_vjp, theirs = CASES[name]
    for i, n in enumerate(sizes):
        x = values(n, dtype, seed + i)
        g = np.random.default_rng(seed + 100 + i).standard_normal(n).astype(dtype)
        y, grad = torch_value_and_grad(torch, theirs, x, g)
        with np.errstate(all="ignore"):
            out = ours_fn(x)
            assert same_bits(out, y) == 0, (name, n, "value")
            assert same_bits(ours_vjp(g, out, x), grad) == 0, (name, n, "gradient")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", CASES)
def test_values_and_gradients_are_pytorchs(name, dtype):
    # 20,000 values in one tensor, and the sizes around a vector step (32 float32, 16 float64)
    check(name, dtype, [20_000, *SIZES])


@pytest.mark.parametrize("name, dtype", [
    (name, dtype) for name in ("sigmoid", "mish", "gelu(approximate='tanh')")
    for dtype in (np.float32, np.float64)] + [("gelu", np.float32), ("gelu", np.float64)])
def test_past_grain_size_the_threads_chunks_have_tails(name, dtype, monkeypatch):
    # past 32,768 elements (16,384 for gelu) ATen splits the loop between threads, and each
    # thread's chunk ends in a scalar tail (float64 that long takes numpy's functions unless
    # asked: below)
    monkeypatch.setattr(act_loop, "EXACT64_LIMIT", 10 ** 6)
    check(name, dtype, [40_000, 70_001], seed=7)


@pytest.mark.parametrize("name", CASES)
def test_long_float64_takes_numpys_functions_within_an_ulp_or_two(name):
    # past EXACT64_LIMIT elements float64 keeps ATen's formulas but not Sleef's last bits
    torch = torch_or_skip()
    n = act_loop.EXACT64_LIMIT + 1000
    x = np.random.default_rng(13).standard_normal(n) * 3
    g = np.random.default_rng(14).standard_normal(n)
    y, grad = torch_value_and_grad(torch, CASES[name][2], x, g)
    ours_fn, ours_vjp, _ = CASES[name]
    out = ours_fn(x)
    ulp = 2.0 ** -52  # (errors measured against the size of what cancels: at most 2.7 ulps)
    assert np.all(np.abs(out - y) <= 4 * ulp * (np.abs(y) + np.abs(x)))
    scale = np.abs(grad) + np.abs(g) * (1 + np.abs(x))
    assert np.all(np.abs(ours_vjp(g, out, x) - grad) <= 4 * ulp * scale)


@pytest.mark.parametrize("name", CASES)
def test_float64_numpy_scalars_are_pytorchs(name):
    # a 0-d tensor runs the scalar lambda: libm's functions, which ddx calls through math
    torch = torch_or_skip()
    ours_fn, ours_vjp, theirs = CASES[name]
    for v in [*SPECIAL, *values(300, np.float64, 3)]:
        x, g = np.float64(v), np.float64(-0.75)
        y, grad = torch_value_and_grad(torch, theirs, np.array(x), np.array(g))
        with np.errstate(all="ignore"):
            out = ours_fn(x)
            assert type(out) is np.float64
            assert same_bits(out, y) == 0, (name, v, "value")
            assert same_bits(ours_vjp(g, out, x), grad) == 0, (name, v, "gradient")


def test_sleef_expm1_and_log1p_are_pytorchs_vector_ones():
    # torch.expm1 (and torch.log1p of float64) run Sleef over their vector bodies
    torch = torch_or_skip()
    x = values(32 * 1000, np.float32, 11)
    assert same_bits(sleef.expm1f(x), torch.expm1(torch.from_numpy(x)).numpy()) == 0
    x = values(16 * 2000, np.float64, 12)
    assert same_bits(sleef64.expm1d(x), torch.expm1(torch.from_numpy(x)).numpy()) == 0
    x = np.abs(x)
    assert same_bits(sleef64.log1pd(x), torch.log1p(torch.from_numpy(x)).numpy()) == 0


def test_the_scalar_tail_is_the_c_librarys_not_sleefs():
    # where the C library and Sleef round differently, a 17-element tensor (all scalar lambda)
    # takes the C library's value and a 32-element one Sleef's; ddx follows both
    torch = torch_or_skip()
    x = values(17 * 32 * 20, np.float32, 5)
    vector = kernels_act.sigmoid(x)
    scalar = np.concatenate([kernels_act.sigmoid(part) for part in x.reshape(-1, 17)])
    differ = np.flatnonzero(vector != scalar)
    assert differ.size > 0
    v = x[differ[0]]
    for n in (17, 32):
        t = np.full(n, v, np.float32)
        assert same_bits(kernels_act.sigmoid(t), torch.sigmoid(torch.from_numpy(t)).numpy()) == 0
    assert kernels_act.sigmoid(np.full(17, v))[0] != kernels_act.sigmoid(np.full(32, v))[0]


def test_tails_follow_atens_split():
    assert act_loop.tails(17, 32) == [(0, 17)]
    assert act_loop.tails(33, 32) == [(32, 33)]
    assert act_loop.tails(64, 32) == []


TRACED = [
    ("sigmoid(x)", "sigmoid"), ("silu(x)", "silu"), ("mish(x)", "mish"),
    ("softplus(x)", "softplus"), ("elu(x, alpha=1.5)", "elu(alpha=1.5)"), ("selu(x)", "selu"),
    ("celu(x, 0.3)", "celu(alpha=0.3)"), ("logsigmoid(x)", "logsigmoid"),
    ("gelu(x, approximate='tanh')", "gelu(approximate='tanh')"), ("gelu(x)", "gelu"),
]


@pytest.mark.parametrize("text, name, dtype", [
    (*case, dtype) for case in TRACED for dtype in ("float32", "float64")])
def test_through_trace_is_pytorchs(text, name, dtype):
    torch = torch_or_skip()
    x = values(1000, dtype, 21)
    g = np.random.default_rng(22).standard_normal(1000).astype(dtype)
    y, grad = torch_value_and_grad(torch, CASES[name][2], x, g)
    t = ddx.trace(text, x=x, dtype=dtype).backward(gradient=g)
    assert same_bits(t.value, y) == 0 and same_bits(t.grads["x"], grad) == 0


def test_the_hessian_still_differentiates_the_formula():
    # dual numbers take the plain formula: sigmoid'' = s (1 - s) (1 - 2 s)
    s = 1 / (1 + math.exp(-0.5))
    h = ddx.trace("sigmoid(x)", x=0.5).backward().hessian()["hessian"]["x"]["x"]
    assert float(h) == pytest.approx(s * (1 - s) * (1 - 2 * s), rel=1e-14)
    h = ddx.trace("silu(x)", x=0.5).backward().hessian()["hessian"]["x"]["x"]
    assert float(h) == pytest.approx(s * (1 - s) * (2 + 0.5 * (1 - 2 * s)), rel=1e-12)


def test_pfma_rounds_once():
    # 1 + 2^-30, squared: the 2^-60 term is lost in a*b + c rounded twice, kept by one rounding
    a = 1 + 2.0 ** -30
    assert act_loop.pfma(a, a, -1.0) == 2.0 ** -29 + 2.0 ** -60
    assert a * a - 1.0 == 2.0 ** -29
    # and where the product is subnormal (Dekker's error term would underflow)
    tiny = 2.0 ** -1000 * a
    assert act_loop.pfma(tiny, a, 0.0) == float(sleef.fma_f64(np.float64(tiny), a, 0.0))
    assert act_loop.pfma(tiny, a, 0.0) == 2.0 ** -1000 * (1 + 2.0 ** -29)


def test_nn_activation_modules_print_and_compute_as_pytorchs():
    # the REPL's float32: nn.SiLU, nn.GELU(approximate=...), nn.Softplus(beta, threshold), ...
    # print as PyTorch's modules do, and their outputs and gradients print PyTorch's digits
    import subprocess
    import sys

    from conftest import session_run

    torch_or_skip()
    source = """import torch
from torch import nn
x = torch.linspace(-4, 4, 37, requires_grad=True)
for m in [nn.SiLU(), nn.Mish(), nn.Softplus(), nn.Softplus(beta=2, threshold=3.0), nn.ELU(),
          nn.ELU(alpha=2), nn.SELU(), nn.CELU(0.5), nn.LogSigmoid(), nn.GELU(),
          nn.GELU(approximate='tanh'), nn.Sigmoid()]:
    print(m)
    y = m(x)
    y.sum().backward()
    print(y.tolist())
    print(x.grad.tolist())
    x.grad = None
"""
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert session_run(source) == done.stdout.splitlines()


def test_floating_point_events_are_the_results_not_the_kernels():
    # ddx reports where a nan or an inf arises by numpy's floating-point events: the kernels'
    # inner infinities (exp(1e30) inside softplus's gradient, Sleef's range reduction) raise
    # none; a result that is nan from a number, or inf from a finite one, raises one, as the
    # plain formula's did (gelu's tanh gradient at 1e30 is 0 * inf, in PyTorch too)
    def raises(fn, *args) -> bool:
        try:
            with np.errstate(all="raise"):
                fn(*args)
        except FloatingPointError:
            return True
        return False

    def made(r, v) -> bool:
        return bool(np.any(np.isnan(r)) or np.isfinite(v) and np.any(np.isinf(r)))

    for dt in (np.float32, np.float64):
        for n in (1, 40):
            for v in (1e30, -1e30, 50.0, -50.0, 0.0, -np.inf):
                x = np.full(n, v, dt) if n > 1 else dt(v)
                for name, (fn, vjp, _) in CASES.items():
                    with np.errstate(all="ignore"):
                        out = fn(x)
                        grad = vjp(np.ones_like(x), out, x)
                    assert raises(fn, x) == made(out, v), (name, dt, n, v)
                    assert raises(vjp, np.ones_like(x), out, x) == made(grad, v), (name, dt, n, v)
    assert raises(kernels_act.silu, np.float64(-np.inf))  # (-inf / inf)
    assert not raises(kernels_act.softplus_vjp, np.float64(1), np.float64(1e300), np.float64(1e300))


def test_on_avx2_the_vector_steps_and_onednns_gelu_are_avx2s():
    # ATEN_CPU_CAPABILITY=avx2 and ONEDNN_MAX_CPU_ISA=AVX2 make torch run what an AVX2 machine
    # runs (16 float32 or 8 float64 a step; oneDNN's gelu by Abramowitz and Stegun's erf);
    # ddx reads the same variables
    import os
    import subprocess
    import sys

    torch_or_skip()
    script = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import test_act_exact as T
from ddx.ops import act_loop, onednn
import torch
assert torch.backends.cpu.get_cpu_capability() == "AVX2"
assert not act_loop.avx512() and not onednn.avx512_core()
for name in T.CASES:
    for dt in (np.float32, np.float64):
        T.check(name, dt, [1000, 8, 9, 16, 17, 33])
print("ok")
"""
    env = {**os.environ, "ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
    done = subprocess.run([sys.executable, "-c", script, os.path.dirname(__file__)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.split() == ["ok"], done.stderr[-3000:]
