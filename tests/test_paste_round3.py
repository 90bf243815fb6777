"""Everyday PyTorch pasted into `ddx run` (issue 15, round 3): range's repr, element_size and
data_ptr, det's last bit, gradgradcheck. Each script runs through ddx and through Python with
PyTorch; the outputs must be equal line for line. And ddx's det against torch.det bit for bit."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from conftest import ddx_and_python, torch_or_skip

SCRIPTS = {
    "range_repr": """
print(range(3))
print(repr(range(1, 5, 2)))
print(range(0, 10, 3), list(range(1, 5, 2)), len(range(2, 9, 3)), 4 in range(1, 5, 3))
print([range(2)], f"{range(4)}", str(range(-1, -5, -2)))
for i in range(2):
    print(i)
r = range(3)
print(type(r), r[1], r[-1], list(r[:2]), list(reversed(r)), sum(r), max(r), [x * 2 for x in r])
""",
    "memory_methods": """
import torch
x = torch.ones(3, 4)
print(x.element_size(), torch.ones(2, dtype=torch.float64).element_size(),
      torch.ones(2, dtype=torch.int64).element_size(), torch.ones(2, dtype=torch.bool).element_size())
print(x.data_ptr() == x.view(12).data_ptr(), x.data_ptr() == x.clone().data_ptr(),
      isinstance(x.data_ptr(), int))
print(x.data_ptr() == x[0].data_ptr(), x[1].data_ptr() - x.data_ptr(),
      x.reshape(4, 3).data_ptr() == x.data_ptr())
""",
    "det_prints": """
import torch
A = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
print(torch.det(A), torch.linalg.det(A), A.det())
print(torch.det(torch.tensor([[2.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.1, 0.4, 5.0]])))
print(torch.det(torch.tensor([[4.0, 3.0], [6.0, 3.0]], dtype=torch.float64)))
B = torch.tensor([[2.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.1, 0.4, 5.0]], requires_grad=True)
d = torch.det(B)
print(d)
d.backward()
print(B.grad)
""",
    "gradgradcheck": """
import torch
from torch.autograd import gradgradcheck
torch.manual_seed(0)
x = torch.randn(3, dtype=torch.double, requires_grad=True)
w = torch.randn(3, dtype=torch.double, requires_grad=True)
print(torch.autograd.gradgradcheck(lambda a, b: (a.sin() * b).sum(), (x, w)))
print(torch.rand(2))
print(gradgradcheck(lambda a: a.sin() * 2, (x,), eps=0.5, raise_exception=False))
print(gradgradcheck(lambda a: (a ** 3).sum(), x, grad_outputs=torch.tensor(2.0, dtype=torch.double)))
try:
    gradgradcheck(lambda a: a.exp().sum(), (x,), eps=0.5)
except RuntimeError as e:
    print(type(e).__name__, str(e).splitlines()[0])
print(torch.rand(2))
""",
    "script_preamble": """# -*- coding: utf-8 -*-
\"\"\"
A tutorial's title
==================
\"\"\"
import torch
import math
import time
import timeit
import matplotlib.pyplot as plt
######################################################################
# A markdown block
#
dtype = torch.float
device = torch.device("cpu")
print(isinstance(torch.__version__, str))
t0 = time.time()
start = timeit.default_timer()
x = torch.linspace(-math.pi, math.pi, 5, device=device, dtype=dtype)
print(time.time() - t0 >= 0, timeit.default_timer() - start >= 0, isinstance(time.time_ns(), int))
print(time.perf_counter() <= time.perf_counter(), __name__)
if __name__ == "__main__":
    print("main", x)
torch.set_default_device("cpu")
print(torch.ones(2).device)
""",
    "linear_regression_gradient": """
import torch
torch.manual_seed(0)
X = torch.randn(200, 3)
y = torch.randn(200, 1)
w = torch.randn(3, 1, requires_grad=True)
loss = ((X @ w - y) ** 2).mean()
loss.backward()
print(w.grad.view(-1).tolist())
g = 2 * (X @ w - y) / 200
print((X.t() @ g).view(-1).tolist(), (X[:, :2].t() @ torch.randn(200, 20)).sum().item())
""",
    "torch_func": """
import torch
from torch.func import grad, jacrev, jacfwd, grad_and_value
torch.manual_seed(0)
x = torch.randn(3)
y = torch.randn(3)
print(grad(lambda x: x.sin().sum())(x))
print(torch.func.grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, y))
print(grad(lambda a, b: (a * b.exp()).sum(), argnums=1)(x, y))
print(jacrev(torch.sin)(x))
print(jacfwd(lambda t: t ** 2)(x))
print(grad_and_value(lambda t: (t ** 2).sum())(x))
g, aux = grad(lambda t: ((t ** 2).sum(), t.mean()), has_aux=True)(x)
print(g, aux)
try:
    grad(lambda t: t * 2)(x)
except RuntimeError as e:
    print(e)
""",
}


def _ddx_run(path, text: str) -> subprocess.CompletedProcess:
    """``ddx run`` of a script with this text, in a new process."""
    path.write_text(text)
    return subprocess.run([sys.executable, "-m", "ddx", "run", str(path)], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_script_prints_as_pytorch(name, tmp_path):
    torch_or_skip()
    ours, theirs = ddx_and_python(SCRIPTS[name], tmp_path)
    assert ours == theirs


def test_matplotlib_call_is_one_clear_line(tmp_path):
    """A notebook's %matplotlib inline is nothing; importing pyplot and ticker works (tutorials
    import them and may never draw); drawing is one line of ddx's error, and the script goes
    on."""
    torch_or_skip()
    got = _ddx_run(tmp_path / "plot.py", "%matplotlib inline\nimport matplotlib.pyplot as plt\n"
                   "import matplotlib.ticker as ticker\nplt.plot([1, 2], [3, 4])\n"
                   "print('after')\n")
    assert got.stdout == "after\n"
    assert len([s for s in got.stderr.splitlines() if s.startswith("error:")]) == 1
    assert got.stderr.splitlines()[0] == ("error: ddx does not draw with matplotlib: plt.plot(...) "
                                          "is not available (ddx plot draws a function's curves)")
    assert "Traceback" not in got.stderr


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_det_is_torch_det_bit_for_bit(dtype):
    """Random matrices of sizes 1-16 (MKL's small and unblocked paths), a transposed view,
    singular, integer-valued and non-finite ones: the same bits as torch.det."""
    torch = torch_or_skip()
    from ddx.ops.kernels_lu import det

    rng = np.random.default_rng(7)
    for n in (*range(1, 10), 12, 16):
        a = rng.standard_normal((500, n, n)).astype(dtype)
        a[:50] = rng.integers(-3, 4, (50, n, n))
        if n > 1:
            a[50:60, 1] = a[50:60, 0]  # singular
            a[60, 0, 0], a[61, -1, -1], a[62, 0, -1] = np.inf, np.nan, 0.0
        want = torch.det(torch.from_numpy(a)).numpy()
        assert det(a).tobytes() == want.tobytes(), n
        at = np.swapaxes(a, -1, -2)  # a column-major view, as torch's mT
        assert det(at).tobytes() == torch.det(torch.from_numpy(a).mT).numpy().tobytes(), n


ERROR_LINES = [
    # an error in the body of a function an earlier chunk defined: the body's own line
    ("import torch\n\n\ndef f():\n    y = 2\n    return torch.ones(2).foo()\n\nf()\n",
     "  6 |     return torch.ones(2).foo()"),
    # an error without a span of its own, in a with inside a for: the innermost statement's
    ("import torch\na = torch.ones(2, requires_grad=True)\nfor t in range(2):\n"
     "    with torch.no_grad():\n        a.grad, b = 0., 1\n",
     "  5 |         a.grad, b = 0., 1"),
    # equal texts at two places: each error on its own line
    ("import torch\nx = torch.ones(2).foo()\nx = torch.ones(2).foo()\n",
     "  3 | x = torch.ones(2).foo()"),
]


@pytest.mark.parametrize("script, line", ERROR_LINES)
def test_error_is_on_its_own_line(script, line, tmp_path):
    """The published polynomial tutorial's `a.grad, b.grad, ... = 0., ...` fails in PyTorch at
    its own line (37) inside `for` and `with`; ddx said line 23 (the `for`). Errors in a
    function's body were numbered from the calling statement."""
    got = _ddx_run(tmp_path / "s.py", script)
    shown = [s for s in got.stderr.splitlines() if " | " in s]
    assert shown[-1] == line, got.stderr


def test_forward_ad_and_vmap_run(tmp_path):
    """torch.autograd.forward_ad (pyforward_ad.py) and torch.func.vmap (pyvmap.py): a dual
    level with nothing in it, and torch.dot mapped over rows."""
    got = _ddx_run(tmp_path / "s.py", "import torch\nimport torch.autograd.forward_ad as fwAD\n"
                   "from torch.func import vmap\nwith fwAD.dual_level():\n    pass\n"
                   "print(vmap(torch.dot)(torch.ones(2, 3), torch.ones(2, 3)))\nprint('end')\n")
    assert got.stderr == ""
    assert got.stdout == "tensor([3., 3.])\nend\n"


def test_transposed_times_matrix_is_torch_mm_bit_for_bit():
    """X.t() @ g (a column-major A: a linear model's weight gradient; also of a column slice
    X[:, :m], whose leading dimension is wider) with N = 1 or M < 4: MKL
    adds the rounded products in k order; ddx's mm gives torch's bits (it was numpy's order,
    1 ulp off for most elements). M >= 4 with 1 < N < 12 was already modelled."""
    torch = torch_or_skip()
    from ddx.ops.kernels_gemm import mm

    rng = np.random.default_rng(11)
    for m in (1, 2, 3, 4, 7, 16, 33):
        for n in (1, 2, 3, 5, 16, 17, 40) if m < 4 else (1,):
            for k in (2, 4, 7, 9, 100, 1000):
                x = rng.standard_normal((k, m)).astype(np.float32)
                g = rng.standard_normal((k, n)).astype(np.float32)
                x[0, 0], g[-1, 0] = 0.0, -0.0
                want = (torch.from_numpy(x).t() @ torch.from_numpy(g)).numpy()
                assert mm(x.T, g).tobytes() == want.tobytes(), (m, k, n)
                wide = rng.standard_normal((k, m + 2)).astype(np.float32)  # X[:, :m].t()
                want = (torch.from_numpy(wide)[:, :m].t() @ torch.from_numpy(g)).numpy()
                assert mm(wide[:, :m].T, g).tobytes() == want.tobytes(), (m, k, n)
