"""float32 elementwise functions as PyTorch's CPU build computes them (ddx/ops/vml.py): MKL's
VML in high-accuracy mode with the `mkl` extra, numpy's otherwise; float64 too where PyTorch is
spoken (the REPL and ddx run), numpy's in the one-liner and the library."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import ddx_and_python, torch_or_skip

import ddx
from ddx.ops import kernels_unary, vml

FUNCTIONS = ["sin", "cos", "tan", "exp", "log", "log2", "log10", "tanh", "sqrt", "asin", "acos",
             "atan"]
NUMPY = {"asin": "arcsin", "acos": "arccos", "atan": "arctan"}


def mkl_or_skip():
    """MKL's runtime for the bit-for-bit tests; CI installs the extra (DDX_REQUIRE_MKL=1)."""
    if vml.library() is None:
        if os.environ.get("DDX_REQUIRE_MKL"):
            raise AssertionError("the mkl extra is required here: pip install '.[mkl]'")
        pytest.skip("MKL not installed (pip install '.[mkl]'; CI installs it)")


def inputs(name: str, n: int = 20_000, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal(n) * 3
    if name in ("log", "log2", "log10", "sqrt"):
        x = np.abs(x) + 1e-3
    if name in ("asin", "acos"):
        x = np.tanh(x)
    return x.astype(np.float32)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_float32_is_pytorchs_to_the_last_bit(name):
    torch = torch_or_skip()
    mkl_or_skip()
    x = inputs(name)
    theirs = getattr(torch, name)(torch.from_numpy(x)).numpy()
    ours = getattr(vml, NUMPY.get(name, name))(x)
    assert ours.dtype == np.float32 and ours.view(np.int32).tolist() == \
        theirs.view(np.int32).tolist()
    # and through the op table, forward and backward, as a REPL user gets it
    t = ddx.trace(f"sum({name}(x))", {"x": x[:64]}, dtype="float32")
    t.backward()
    tx = torch.from_numpy(x[:64].copy()).requires_grad_()
    ty = getattr(torch, name)(tx).sum()
    ty.backward()
    assert np.asarray(t.value).tobytes() == ty.detach().numpy().tobytes()
    if name in ("sin", "cos", "exp", "sqrt", "log", "tan"):  # (rules computed as PyTorch does:
        # tanh's is not: ATen fuses 1 - y*y)
        assert t.grads["x"].tobytes() == tx.grad.numpy().tobytes()


def test_numpy_differs_so_the_test_above_can_fail():
    torch = torch_or_skip()
    x = inputs("sin")
    theirs = torch.sin(torch.from_numpy(x)).numpy()
    assert (np.sin(x).view(np.int32) != theirs.view(np.int32)).sum() > 100


@pytest.mark.parametrize("name", ["sin", "exp", "sqrt"])
def test_float64_scalars_out_and_layouts(name):
    mkl_or_skip()
    f, ref = getattr(vml, name), getattr(np, name)
    x64 = inputs(name).astype(np.float64) * 1.1
    assert f(x64).tobytes() == ref(x64).tobytes()  # float64: numpy's, as before
    x = inputs(name, 300)
    whole = f(x)
    s = f(np.float32(x[7]))
    assert type(s) is np.float32 and s == whole[7]
    grid = x[:300].reshape(20, 15)
    assert f(grid.T).tobytes() == whole.reshape(20, 15).T.copy().tobytes()  # non-contiguous
    out = np.empty_like(grid)
    assert f(grid, out=out) is out and out.tobytes() == whole.tobytes()
    assert f(x[:0]).shape == (0,)


def test_without_mkl_numpy_computes_and_nothing_loads_it():
    code = ("import numpy as np, sys; from ddx.ops import kernels_unary, vml; x = np.float32([0.5, 1.5]);"
            "print(vml.sin(x).tobytes() == np.sin(x).tobytes(), vml.library() is None)")
    off = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "DDX_MKL": "0"}, timeout=60)
    assert off.stdout.split() == ["True", "True"], off.stderr
    looked = ("import sys, contextlib, ddx.app.cli; from ddx.ops import kernels_unary, vml; "
              "sys.argv = ['ddx', 'sin(x)', 'x=1', '--json', {dtype}]\n"
              "with contextlib.suppress(SystemExit):\n    ddx.app.cli.main()\n"
              "print(len(vml._LIB))")
    for dtype, times in (("'--dtype', 'float64'", "0"), ("'--dtype', 'float32'", "1")):
        one = subprocess.run([sys.executable, "-c", looked.format(dtype=dtype)],
                             capture_output=True, text=True, timeout=60)
        assert one.stdout.splitlines()[-1] == times, one.stderr  # (float64: never looked for)


@pytest.mark.parametrize("name", FUNCTIONS + ["erf", "erfc"])
def test_float64_where_pytorch_is_spoken_is_pytorchs_and_numpys_elsewhere(name):
    torch = torch_or_skip()
    mkl_or_skip()
    x = inputs(name).astype(np.float64) * (1 + 1 / 3)
    if name in ("asin", "acos"):
        x = np.clip(x, -1, 1)
    fn = getattr(kernels_unary, name + "_value") if name.startswith("erf") else \
        getattr(vml, NUMPY.get(name, name))
    theirs = getattr(torch, name)(torch.from_numpy(x)).numpy()
    token = vml.torch_float64()
    try:
        ours = fn(x)
        one = fn(x[3])  # (a numpy float64: a 0-d tensor's value)
    finally:
        vml.reset_float64(token)
    assert ours.dtype == np.float64 and ours.tobytes() == theirs.tobytes()
    assert type(one) is np.float64 and one == theirs[3]
    outside = fn(x)  # (the one-liner's and the library's: numpy's, or the C library's erf)
    reference = [getattr(__import__("math"), name)(v) for v in x.tolist()] \
        if name.startswith("erf") else getattr(np, NUMPY.get(name, name))(x).tolist()
    assert outside.tolist() == reference


SCRIPT64 = """
import torch
x = torch.linspace(0.01, 3.0, 400, dtype=torch.float64, requires_grad=True)
for name in ["sin", "cos", "tan", "exp", "log", "log2", "log10", "tanh", "sqrt", "atan", "erf",
             "erfc"]:
    y = getattr(torch, name)(x)
    y.sum().backward()
    print(name, y.tolist(), x.grad.tolist())
    x.grad = None
z = torch.linspace(-0.99, 0.99, 300, dtype=torch.float64, requires_grad=True)
for name in ["asin", "acos"]:
    y = getattr(torch, name)(z)
    y.sum().backward()
    print(name, y.tolist(), z.grad.tolist())
    z.grad = None
print(torch.tensor(0.7, dtype=torch.float64).exp().item(), (x ** 0.5).tolist())
"""


def test_a_float64_script_prints_pytorchs_last_digits(tmp_path):
    torch = torch_or_skip()
    mkl_or_skip()
    ours, theirs = ddx_and_python(SCRIPT64, tmp_path)
    assert len(ours) == 15 and ours == theirs
    x = torch.linspace(0.01, 3.0, 400, dtype=torch.float64)  # (numpy's would print otherwise)
    assert torch.tanh(x).tolist() != np.tanh(x.numpy()).tolist()
