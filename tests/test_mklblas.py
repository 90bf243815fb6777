"""Matrix products as PyTorch's CPU build computes them (ddx/ops/mklblas.py): MKL's gemm, gemv
and dot called as ATen calls them, for every shape, layout and view offset, compared with torch
bit for bit; float64 where PyTorch is spoken (the REPL), numpy's elsewhere."""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest
from conftest import ddx_and_python, torch_or_skip
from hypothesis import given, settings
from hypothesis import strategies as st
from test_vml import mkl_or_skip

from ddx.ops import kernels_gemm, mklblas, vml

SHAPES = [(1, 1, 1), (1, 5, 1), (4, 10, 5), (4, 3, 1), (1, 7, 3), (3, 1, 4), (16, 100, 10),
          (33, 65, 15), (7, 13, 12), (64, 64, 64), (2, 300, 1), (100, 1, 1), (5, 2, 40),
          (128, 256, 130)]
LAYOUTS = ("contiguous", "column-major", "slice")


def laid_out(torch, x: np.ndarray, layout: str):
    """The same matrix as a numpy array and as a torch tensor, both laid out as asked (a slice:
    a view into a larger matrix, at an offset that is not a multiple of 64 bytes)."""
    if layout == "contiguous":
        return x.copy(), torch.from_numpy(x.copy())
    if layout == "column-major":
        return np.asfortranarray(x), torch.from_numpy(x.copy()).t().contiguous().t()
    r, c = x.shape
    big = np.zeros((r + 3, c + 5), x.dtype)
    big[1:1 + r, 2:2 + c] = x
    return big[1:1 + r, 2:2 + c], torch.from_numpy(big)[1:1 + r, 2:2 + c]


@pytest.fixture
def spoken():
    """float64 as the REPL computes it (the products of PyTorch's MKL)."""
    token = vml.torch_float64()
    yield
    vml.reset_float64(token)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, k, n", SHAPES)
def test_mm_and_addmm_are_pytorchs_for_every_layout(m, k, n, dtype, spoken):
    torch = torch_or_skip()
    mkl_or_skip()
    rng = np.random.default_rng(m * 10_000 + k * 100 + n)
    a0, b0 = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
    biases = [rng.standard_normal(s).astype(dtype) for s in ((n,), (m, n), (1, n), (m, 1))]
    for la, lb in itertools.product(LAYOUTS, LAYOUTS):
        (a, ta), (b, tb) = laid_out(torch, a0, la), laid_out(torch, b0, lb)
        got, want = kernels_gemm.mm(a, b), torch.mm(ta, tb).numpy()
        assert got.dtype == dtype and got.tobytes() == want.tobytes(), (la, lb)
        for bias in biases:
            got = kernels_gemm.addmm(bias, a, b)
            want = torch.addmm(torch.from_numpy(bias), ta, tb).numpy()
            assert got.tobytes() == want.tobytes(), (la, lb, bias.shape)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mv_and_dot_are_pytorchs(dtype, spoken):
    torch = torch_or_skip()
    mkl_or_skip()
    rng = np.random.default_rng(7)
    for m, k in [(1, 1), (5, 10), (100, 1000), (3, 7), (64, 64), (1, 9), (9, 1)]:
        a0, x = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal(k).astype(dtype)
        for layout in LAYOUTS:
            a, ta = laid_out(torch, a0, layout)
            want = torch.mv(ta, torch.from_numpy(x)).numpy()
            assert kernels_gemm.mv(a, x).tobytes() == want.tobytes(), (m, k, layout)
        grid = rng.standard_normal((k, 3)).astype(dtype)  # (a strided vector: a column)
        want = torch.mv(torch.from_numpy(a0), torch.from_numpy(grid)[:, 1]).numpy()
        assert kernels_gemm.mv(a0, grid[:, 1]).tobytes() == want.tobytes()
    for k in (1, 3, 16, 100, 1000, 10007):
        x, y = rng.standard_normal(k).astype(dtype), rng.standard_normal(k).astype(dtype)
        want = torch.dot(torch.from_numpy(x), torch.from_numpy(y)).numpy()
        assert np.asarray(kernels_gemm.dot(x, y)).tobytes() == want.tobytes(), k


def test_numpy_differs_so_the_tests_above_can_fail():
    torch = torch_or_skip()
    rng = np.random.default_rng(1)
    differ = 0
    for m, k, n in [(16, 100, 10), (64, 64, 64), (7, 300, 1)]:
        a, b = rng.standard_normal((m, k)).astype(np.float32), \
            rng.standard_normal((k, n)).astype(np.float32)
        differ += int((np.matmul(a, b) != torch.mm(torch.from_numpy(a),
                                                   torch.from_numpy(b)).numpy()).sum())
    assert differ > 10


def test_outside_the_repl_float64_products_are_numpys_and_never_load_mkl():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((16, 100)), rng.standard_normal((100, 10))
    assert mklblas.gemm(a, b) is None and kernels_gemm.mm(a, b).tobytes() == \
        np.matmul(a, b).tobytes()
    code = ("import sys, contextlib, ddx.app.cli; from ddx.ops import vml; "
            "sys.argv = ['ddx', 'sum(A @ B)', 'A=[[1,2],[3,4]]', 'B=[[5,6],[7,8]]', '--json']\n"
            "with contextlib.suppress(SystemExit):\n    ddx.app.cli.main()\n"
            "print(len(vml._LIB))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.splitlines()[-1] == "0", done.stderr  # (MKL never looked for)
    assert '"value": 134.0' in done.stdout


TRAINING = """
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(10, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3))
x = torch.randn(4, 10)
y = torch.randn(4, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(50):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print(step, loss.item())
print(model[0].weight.grad)
A = torch.randn(7, 13, requires_grad=True)
v = torch.randn(13, requires_grad=True)
out = A @ v
out.sum().backward()
print(out.tolist(), v.grad.tolist(), A.grad[0].tolist())
print(torch.dot(v, v).item(), torch.mv(A, v).tolist(), (v @ A.t()).tolist())
B = torch.randn(13, 12, dtype=torch.float64, requires_grad=True)
C = torch.randn(5, 13, dtype=torch.float64)
r = (C @ B).sum()
r.backward()
print((C @ B).tolist()[0], B.grad.tolist()[0], (C[1:4, 2:9] @ B[2:9, 1:3]).tolist())
"""


def test_a_small_training_loop_prints_pytorchs_losses(tmp_path):
    torch_or_skip()
    mkl_or_skip()
    ours, theirs = ddx_and_python(TRAINING, tmp_path)
    assert len(ours) == 18 and ours == theirs


BATCHES = [(2, 3, 4, 5), (4, 2, 2, 2), (3, 7, 13, 12), (2, 16, 100, 10), (5, 1, 50, 1),
           (2, 20, 20, 1), (3, 64, 64, 64), (1, 5, 80, 1), (2, 3, 1, 200)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bs, m, k, n", BATCHES)
def test_bmm_is_pytorchs_small_and_large_plain_and_transposed(bs, m, k, n, dtype, spoken):
    """Below 400 products a matrix ATen's own kernel (each element's products added one by one),
    at and above it MKL's batched gemm as baddbmm_with_gemm_ calls it."""
    torch = torch_or_skip()
    mkl_or_skip()
    rng = np.random.default_rng(bs * 1000 + m * 100 + k + n)
    a0, b0 = rng.standard_normal((bs, m, k)).astype(dtype), \
        rng.standard_normal((bs, k, n)).astype(dtype)
    for ta_, tb_ in itertools.product((False, True), repeat=2):
        a = np.ascontiguousarray(a0.transpose(0, 2, 1)).transpose(0, 2, 1) if ta_ else a0
        b = np.ascontiguousarray(b0.transpose(0, 2, 1)).transpose(0, 2, 1) if tb_ else b0
        want = torch.bmm(torch.from_numpy(a0.copy()) if not ta_ else
                         torch.from_numpy(np.ascontiguousarray(a0.transpose(0, 2, 1)))
                         .transpose(1, 2),
                         torch.from_numpy(b0.copy()) if not tb_ else
                         torch.from_numpy(np.ascontiguousarray(b0.transpose(0, 2, 1)))
                         .transpose(1, 2)).numpy()
        assert kernels_gemm.bmm(a, b).tobytes() == want.tobytes(), (ta_, tb_)


BATCHED = """
import torch
torch.manual_seed(0)
a = torch.randn(3, 7, 13, requires_grad=True)
b = torch.randn(3, 13, 12, requires_grad=True)
c = torch.bmm(a, b)
c.sum().backward()
print(c[1].tolist()[2], a.grad[0].tolist()[1], b.grad[2].tolist()[3])
x = torch.randn(2, 4, 5, requires_grad=True)
y = torch.randn(2, 5, 3)
z = (x @ y) ** 2
z.sum().backward()
print(z.tolist(), x.grad.tolist())
q = torch.randn(4, 20, 20, dtype=torch.float64, requires_grad=True)
w = torch.randn(4, 20, 1, dtype=torch.float64)
(q @ w).sum().backward()
print((q @ w).tolist()[1], q.grad.tolist()[0][0])
"""


def test_batched_products_and_their_gradients_print_pytorchs_digits(tmp_path):
    torch_or_skip()
    mkl_or_skip()
    ours, theirs = ddx_and_python(BATCHED, tmp_path)
    assert len(ours) == 3 and ours == theirs


@settings(max_examples=120, deadline=None)
@given(m=st.integers(1, 40), k=st.integers(1, 70), n=st.integers(1, 40),
       la=st.sampled_from(LAYOUTS), lb=st.sampled_from(LAYOUTS), bias=st.booleans(),
       seed=st.integers(0, 2**31))
def test_any_float32_product_is_pytorchs(m, k, n, la, lb, bias, seed):
    torch = torch_or_skip()
    mkl_or_skip()
    rng = np.random.default_rng(seed)
    (a, ta), (b, tb) = laid_out(torch, rng.standard_normal((m, k)).astype(np.float32), la), \
        laid_out(torch, rng.standard_normal((k, n)).astype(np.float32), lb)
    if bias:
        c = rng.standard_normal(n).astype(np.float32)
        got, want = kernels_gemm.addmm(c, a, b), torch.addmm(torch.from_numpy(c), ta, tb)
    else:
        got, want = kernels_gemm.mm(a, b), torch.mm(ta, tb)
    assert got.tobytes() == want.numpy().tobytes()


LINEAR_RANKS = """
import torch
torch.manual_seed(0)
lin = torch.nn.Linear(300, 20)
x = torch.randn(2, 3, 300, requires_grad=True)
y = lin(x)
y.sum().backward()
print(y.grad_fn.name(), [f[0].name() for f in y.grad_fn.next_functions])
print(y.tolist()[1][2][:5], x.grad.tolist()[0][1][:5], lin.weight.grad.tolist()[0][:5])
for x in (torch.randn(300), torch.randn(300, 4).t(), torch.randn(2, 2, 2, 300),
          torch.randn(3, 300, 2).transpose(1, 2)):
    y = lin(x)
    print(y.grad_fn.name(), [f[0].name() for f in y.grad_fn.next_functions if f[0]],
          y.reshape(-1).tolist()[:4])
print(torch.nn.functional.linear(x, lin.weight).grad_fn.name())
"""


def test_linear_of_every_rank_records_and_computes_what_pytorch_does(tmp_path):
    """at::linear: addmm for a 2-d input, a contiguous input flattened to 2-d, addmm'd and
    viewed back, any other a matmul and the bias added after."""
    torch_or_skip()
    mkl_or_skip()
    ours, theirs = ddx_and_python(LINEAR_RANKS, tmp_path)
    assert len(ours) == 7 and ours == theirs
    assert theirs[0] == "ViewBackward0 ['AddmmBackward0']" and theirs[5].startswith("AddBackward0")
