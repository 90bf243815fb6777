"""Everyday PyTorch pasted into `ddx run` (issue 15, round 7): the examples of PyTorch's own
documentation in torch/_torch_docs.py and torch/_tensor_docs.py (stacking and splitting,
logical and bitwise functions, creation functions, indexing in place, addcmul/addcdiv,
copysign, fmax/fmin, addmv/addr), with torch.manual_seed(0) and the results printed, then the
same functions on tensors that require grad. Each script in tests/pyscripts/doc7_*.py runs
through ddx and through Python with PyTorch; the outputs must be equal line for line. Then
bits against torch for the functions whose arithmetic is ATen's own (addcmul's fused
multiply-add, addr's fused rows, logspace's double steps)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import ddx_and_python, ddx_run, torch_or_skip

import ddx

SCRIPTS = sorted((Path(__file__).parent / "pyscripts").glob("doc7_*.py"))
SIZES = (1, 3, 7, 8, 9, 16, 17, 1000, 20000)


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_doc7_example_prints_as_pytorch(path, tmp_path):
    torch_or_skip()
    ours, theirs = ddx_and_python(path.read_text(), tmp_path)
    assert ours == theirs


def _values(rng, n: int, dtype: str) -> np.ndarray:
    """Normal values over six decades, with 0, -0, tiny and huge ones among them."""
    x = rng.standard_normal(n) * rng.choice([1e-3, 1.0, 1e3], n)
    x[:4] = [0.0, -0.0, 1e-30, 1e30][:min(n, 4)] if n >= 4 else x[:4]
    return x.astype(dtype)


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_addcmul_and_addcdiv_give_atens_bits(name, dtype):
    """addcmul is ATen's fmadd(value * t1, t2, self), one rounding (the plain formula differs
    in ~10% of values); addcdiv is self + value * t1 / t2."""
    torch = torch_or_skip()
    rng = np.random.default_rng(7)
    for n in SIZES:
        x, y, z = (_values(rng, n, dtype) for _ in range(3))
        z[z == 0] = 1.0
        ours = ddx.trace(f"{name}(x, y, z, value=0.1)", x=x, y=y, z=z, dtype=dtype).output.value
        theirs = getattr(torch, name)(*map(torch.tensor, (x, y, z)), value=0.1).numpy()
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(_bits(ours), _bits(theirs), err_msg=f"{name} n={n}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_addr_gives_atens_bits(dtype):
    """addr_kernel's rows: blocks of 16 float32 (8 float64) elements fused, the rest plain."""
    torch = torch_or_skip()
    rng = np.random.default_rng(8)
    for m, n in [(1, 1), (3, 3), (7, 9), (16, 17), (100, 50), (30, 1000), (5, 1), (1, 40)]:
        mat, v1, v2 = (_values(rng, k, dtype) for k in (m * n, m, n))
        mat = mat.reshape(m, n)
        ours = ddx.trace("addr(x, y, z)", x=mat, y=v1, z=v2, dtype=dtype).output.value
        theirs = torch.addr(*map(torch.tensor, (mat, v1, v2))).numpy()
        np.testing.assert_array_equal(_bits(ours), _bits(theirs), err_msg=f"addr {m}x{n}")


def test_logspace_gives_atens_values(tmp_path):
    """pow(base, start + step * i) in double for the first half, pow(base, end - step *
    (steps - 1 - i)) for the second, then cast: the same float32 and float64 bits as torch."""
    torch = torch_or_skip()
    cases = [(-10, 10, 5, 10.0), (0.1, 1.0, 5, 10.0), (0.1, 1.0, 1, 10.0), (2, 2, 1, 2.0),
             (-3.3, 7.1, 101, 10.0), (0, 1, 1000, 2.0), (1.5, -2.5, 17, 3.0)]
    lines, want = ["import torch"], []
    for dtype in ("float32", "float64"):
        for start, end, steps, base in cases:
            lines.append(f"print(torch.logspace({start}, {end}, {steps}, base={base}, "
                         f"dtype=torch.{dtype}).tolist())")
            want.append(str(torch.logspace(start, end, steps, base=base,
                                           dtype=getattr(torch, dtype)).tolist()))
    got = ddx_run(tmp_path, "\n".join(lines) + "\n")
    assert got.stderr == ""
    assert got.stdout.splitlines() == want


def test_copysign_gradient_is_zero_at_zero_and_other_gets_zeros():
    """derivatives.yaml: grad * (result / self), 0 where self is 0; other: zeros_like (+0)."""
    torch = torch_or_skip()
    x = torch.tensor([0.0, -1.5, 2.0, -0.0], requires_grad=True)
    y = torch.tensor([-1.0, 1.0, -0.0, 3.0], requires_grad=True)
    (torch.copysign(x, y) * torch.tensor([1.0, -2.0, 3.0, 4.0])).sum().backward()
    g = ddx.trace("sum(copysign(x, y) * w)", x=np.array([0.0, -1.5, 2.0, -0.0]),
                  y=np.array([-1.0, 1.0, -0.0, 3.0]), w=np.array([1.0, -2.0, 3.0, 4.0]),
                  dtype="float32")
    g.backward()
    for var, t in (("x", x), ("y", y)):
        assert _bits(np.asarray(g.grads[var], dtype=np.float64)).tolist() == \
            _bits(t.grad.double().numpy()).tolist(), var


def test_ldexp_gradient_with_an_integer_exponent_is_pytorchs_integer_power(tmp_path):
    """PyTorch's grad * pow(2, other) with an integer other is an integer power: 2 ** -1 is 0."""
    torch = torch_or_skip()
    w = torch.tensor([1.5, -2.0, 0.25], requires_grad=True)
    torch.ldexp(w, torch.tensor([3, -1, 0])).sum().backward()
    got = ddx_run(tmp_path, "import torch\nw = torch.tensor([1.5, -2.0, 0.25], "
                             "requires_grad=True)\ntorch.ldexp(w, torch.tensor([3, -1, 0]))"
                             ".sum().backward()\nprint(w.grad.tolist())\n")
    assert got.stdout.strip() == str(w.grad.tolist()) == "[8.0, 0.0, 1.0]"


def test_a_python_int_from_a_method_slices_a_tensor(tmp_path):
    """w[:n] with n = out.numel() (a Python int): "indices must be integers" before."""
    got = ddx_run(tmp_path, "import torch\nw = torch.arange(6.0)\nout = w.reshape(2, 3)\n"
                             "n = out.numel()\nprint(w[:n - 2], w[:out.shape[0]])\n")
    assert got.stderr == ""
    assert got.stdout.strip() == "tensor([0., 1., 2., 3.]) tensor([0., 1.])"


@pytest.mark.parametrize("text, first", [
    ("x = torch.tensor([1.0, 0.0], requires_grad=True)\ntorch.heaviside(x, torch.tensor([0.5]))",
     "error: the derivative for 'heaviside' is not implemented."),
    ("torch.diag_embed(torch.ones(2, 3))",
     "error: torch.diag_embed of a batch of vectors is not supported by ddx (of one vector, "
     "it is)"),
    ("torch.masked_select(torch.ones(3), torch.ones(2, 3) > 0)",
     "error: masked_select where the mask broadcasts the input to a larger shape is not "
     "supported by ddx"),
    ("torch.addmv(torch.ones(2), torch.ones(2, 3), torch.ones(3), beta=2)",
     "error: addmv with beta other than 1 is not supported by ddx"),
    ("torch.fliplr(torch.ones(3))", "error: Input must be >= 2-d."),
    ("from torch.utils.data import DataLoader, TensorDataset\n"
     "DataLoader(TensorDataset(torch.ones(3)), 2, collate_fn=len)",
     "error: DataLoader(collate_fn=...) is not supported by ddx: it takes dataset, batch_size, "
     "shuffle, drop_last and generator"),
    ("torch.hsplit(torch.ones(3, 5), 2)",
     "error: torch.hsplit attempted to split along dimension 1, but the size of the dimension "
     "5 is not divisible by the split_size 2!"),
])
def test_what_ddx_does_not_have_is_one_clear_line(tmp_path, text, first):
    got = ddx_run(tmp_path, "import torch\n" + text + "\n")
    assert got.stderr.splitlines()[0] == first
    assert "Traceback" not in got.stderr
