"""Python's numbers and PyTorch's small objects in `ddx run`, as Python with PyTorch prints
them: arithmetic on .item(), .numel() and len() results, x.ndim, dtype and device
comparisons, type(), torch.__version__, isclose/allclose, casts, is_contiguous/stride.
Each script runs through ddx and through Python with PyTorch 2.13; the outputs must be equal
line for line."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import ddx_and_python, session_run, torch_or_skip

SCRIPTS = {
    "item_and_numel_arithmetic": """
import torch
x = torch.ones(3)
a = x.sum().item()
print(a * 2, a + 1, -a, a > 0, a / 2, a // 2, a ** 2)
n = x.numel()
print(n + 1, n * 2.5, n > 2, n == 3, float(n), int(a))
print(x * a)
print(abs(a), max(a, 5), min(n, 2))
print(x.ndim, x.ndim + 1, x.dim())
total = 0
for i in range(3):
    total += x[i].item()
print(total)
print(sum(t.numel() for t in [x, x]), len([1, 2]) * a)
zero = torch.zeros(1).sum().item()
print("yes" if zero else "no", "empty" if not torch.ones(0).numel() else "full", bool(n))
""",
    "dtype_device_and_type": """
import torch
x = torch.ones(2)
print(x.dtype == torch.float32, x.dtype != torch.float64, x.dtype is torch.float32)
print(x.dtype is not torch.float64, x.dtype == torch.float64)
print(x.device == torch.device("cpu"), x.device == "cpu", torch.device("cpu"))
print(x.device, x.device.type, x.is_cuda, f"{x.device}", [x.device])
if x.dtype == torch.float32:
    print("float32")
print(type(x), type(x.shape), type(x.sum().item()), type(x.numel()), type(x.dtype))
print(type("a"), type([1]), type(x.device), type(None), type(2.0), type(2))
print(torch.__version__)
""",
    "close_casts_strides": """
import torch
torch.manual_seed(0)
x = torch.randn(4, 3)
print(torch.isclose(x, x + 1e-9), torch.allclose(x, x + 1e-9), x.allclose(x * 2))
print(torch.isclose(x, x * (1 + 1e-4)).all(), x.isclose(x, atol=0.0, rtol=0.0).all())
print(x.is_contiguous(), x.t().is_contiguous(), x.stride(), x.t().stride(), x.stride(1))
print(x.expand(2, 4, 3).stride(), x.nelement())
print(x.long().dtype, x.int().dtype, x.bool().dtype, (x > 0).long().sum())
print(x.long())
""",
    "dimension_errors_are_index_errors": """
import torch
x = torch.ones(2, 3)
for f in (lambda: x.sum(dim=5), lambda: x.transpose(0, 4), lambda: torch.cat([x, x], dim=3),
          lambda: x.softmax(dim=-3), lambda: x.unsqueeze(5), lambda: x.stride(4)):
    try:
        f()
    except IndexError as e:
        print(type(e).__name__, e)
""",
    "type_names_and_errors": """
import torch
x = torch.ones(2, 3, requires_grad=True)
for f in (lambda: x @ x, lambda: x.view(4), lambda: x[5], lambda: (x * 2).backward(),
          lambda: torch.nn.functional.celu(x, alpha=0.0)):
    try:
        f()
    except Exception as e:
        print(type(e).__name__, type(e) is RuntimeError, "|", str(e).splitlines()[0])
def square(t):
    return t * t
class Net(torch.nn.Module):
    pass
print(square.__name__, Net.__name__, type(Net()).__name__, type(x).__name__)
print(type(x.shape).__name__, type(1.5).__name__, type(x.sum().item()).__name__)
""",
    "isinstance_and_classes": """
import torch
from torch import nn
class A(nn.Module):
    pass
class B(A):
    pass
b = B()
print(isinstance(b, nn.Module), isinstance(b, A), isinstance(b, B), isinstance(b, (int, A)))
print(isinstance(nn.Linear(2, 3), nn.Linear), isinstance(nn.Linear(2, 3), nn.Module))
print(isinstance(nn.ReLU(), nn.Linear), isinstance(nn.Sequential(), nn.Sequential))
x = torch.ones(2)
print(isinstance(3, int), isinstance(True, int), isinstance(x.numel(), int), isinstance(2.5, float))
print(isinstance(x.sum().item(), float), isinstance(3, float), isinstance(x, torch.Tensor))
print(isinstance(x, nn.Module), isinstance(3, torch.Tensor), torch.Tensor([1, 2]), torch.Tensor)
def f(t: torch.Tensor) -> torch.Tensor:
    return t * 2
print(f(x))
""",
    "sizes_and_containers": """
import torch
x = torch.arange(6.).reshape(2, 3)
print({"a": x, "n": 3}, [x[0], 1.5], (x.shape, x.dtype))
print(x.shape[0] * 2, len(x.shape), x.shape == (2, 3), x.shape != (3, 2), tuple(x.shape))
print(list(x.size()), x.size(1), x.shape == torch.Size([2, 3]), x.shape[-1], x.shape[1:])
print(torch.Size([4]), x.shape.numel(), hasattr(x.shape, "numel"), [1, (2, 3)] == [1, (2, 3)])
rows, cols = x.shape
print(rows, cols, max(x.shape), sum(x.shape), isinstance(x.shape, torch.Size))
print(*x.shape, sep="x")
a, b = x
print(a, b, [row.sum().item() for row in x])
print(x.max(dim=1)[0:1], x.unbind(0), torch.chunk(x, 2, dim=1), x.split(1))
""",
    "torch_functions_of_two_numbers": """
import torch
print(torch.add(1, 2), torch.mul(2, 3), torch.sub(5, 2.5), torch.div(1, 2))
print(torch.add(1, 2).dtype, torch.mul(2.0, 3).dtype, torch.true_divide(3, 2))
print(torch.add(1.5, 2), torch.sub(1, 2), torch.mul(True, 3), torch.add(1, 2, alpha=3))
print(torch.div(7, 2, rounding_mode='floor'), torch.divide(1, 4), torch.multiply(2.5, 2))
print(torch.add(0.1, 0.2).item(), torch.mul(0.1, 3).item(), torch.div(1, 3).item())
print(torch.sub(0.1, 0.7, alpha=0.3).item(), torch.add(1, 2).requires_grad)
torch.set_default_dtype(torch.float64)
print(torch.add(0.1, 0.2).item(), torch.mul(0.1, 3).item(), torch.div(1, 3).item())
x = torch.tensor(2.0, requires_grad=True)
print(torch.add(x, 1), torch.mul(2, x), torch.add(1, 2) * x)
""",
    "torch_functions_refuse_a_plain_number_input": """
import torch
try:
    print(torch.sin(1))
except TypeError as e:
    print("TypeError:", e)
try:
    print(torch.exp(2.0))
except TypeError as e:
    print("TypeError:", e)
try:
    print(torch.sum(3))
except TypeError as e:
    print("TypeError:", e)
try:
    print(torch.mean(2.5))
except TypeError as e:
    print("TypeError:", e)
print(torch.tensor(2.0).add(1), torch.pow(torch.tensor(2.0), 3), torch.sin(torch.tensor(1.0)))
f, g = torch.sin, torch.add  # (taken as values, they are still torch's)
try:
    f(1)
except TypeError as e:
    print("TypeError:", e)
print(g(1, 2), f(torch.tensor([0.5, 1.0])))
""",
    "dict_views_compare_as_pythons": """
d = {"a": 1, "b": 2}
e = {"b": 2, "a": 1}
print(d.keys() == ["a", "b"], d.keys() == {"a", "b"}, list(d.keys()) == ["a", "b"])
print(d.keys() == e.keys(), d.items() == e.items(), d.values() == e.values())
print(d.keys() != ["a", "b"], d.items() == {("a", 1), ("b", 2)}, d.keys() == ("a", "b"))
v = d.values()
print(v == v, v != v, d.keys() == {"a"}, len(d.keys()), "a" in d.keys())
""",
}


def _python(text: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", text], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_script_prints_what_python_with_pytorch_prints(name, tmp_path):
    torch_or_skip()
    ours, theirs = ddx_and_python(SCRIPTS[name], tmp_path)
    assert ours == theirs


def test_stride_of_a_dim_out_of_range_is_pytorchs_error():
    assert session_run("import torch\nx = torch.ones(2, 3)\nx.stride(2)\n") == [
        "error: Dimension out of range (expected to be in range of [-2, 1], but got 2)"]


@pytest.mark.parametrize("attr", ["x.__class__", "type(x).__mro__", "square.__globals__",
                                  "type(x).__name__.__class__", "square.__code__"])
def test_other_dunders_stay_out_of_reach(attr):
    """__name__ is a name ddx gave (a str); every other dunder is still refused."""
    got = session_run(f"import torch\nx = torch.ones(2)\ndef square(t):\n    return t\n{attr}\n")
    dunder = attr.rsplit(".", 1)[1]
    assert len(got) == 1 and got[0].startswith("error: ") and dunder in got[0]
    assert "is not available in ddx" in got[0] or "has no attribute" in got[0]


SCRIPTS_NO_TORCH = {
    "triple_quoted_strings": '''
"""
A module docstring, as every tutorial file opens: brackets ( [ { and # are text here.
"""
s = """two
lines"""
t = \'\'\'single \'quotes\' # not a comment\'\'\'
print(s, t, """one line""", len("""abc"""))
def f():
    """A docstring."""
    return """x ) y"""
print(f())
''',
    "chained_comparisons_and_any_all": """
x = 0.5
print(1 < 2 < 3, 3 > 2 > 2, 0 < x < 1, 0 <= x <= 0.4, 1 == 1.0 == 1, (1 < 2) < 3)
print(any([False, True]), all([]), any([0, 0.0]), all(v > 0 for v in [1, 2]))
""",
    "dict_views": """
d = {"a": 1, "b": 2.5}
print(d.keys(), d.values(), d.items(), list(d.items()), "a" in d.keys(), sorted(d.keys()))
for k, v in d.items():
    print(k, v)
print(len(d.values()), [k for k in d.keys()])
""",
    "numpy_arrays": """
import numpy as np
import math
np.random.seed(0)
a = np.array([1.0, 2.0, 3.0])
print(a, a * 2, a + a, a - 1, a / 2, a ** 2, -1 * a, a > 1.5)
print(a.shape, a.ndim, a.size, a.dtype, a.sum(), a.mean(), a.max(), a[0], a[1:], a.tolist())
print(np.zeros(3), np.ones((2, 2)), np.arange(3), np.linspace(0, 1, 3))
print(np.sin(a), np.exp(a).sum(), np.square(a - 1).sum(), np.sqrt(a))
print(np.random.randn(), np.random.rand(2))
x = np.linspace(-math.pi, math.pi, 5)
print(2.0 * np.sin(x) + x ** 3 * 0.5)
""",
}


@pytest.mark.parametrize("name", sorted(SCRIPTS_NO_TORCH))
def test_a_python_script_prints_what_python_prints(name, tmp_path):
    ours, theirs = ddx_and_python(SCRIPTS_NO_TORCH[name], tmp_path)
    assert ours == theirs


def test_numpy_arrays_go_to_torch_and_back():
    torch_or_skip()
    text = ("import torch\nimport numpy as np\nb = np.array([1.0, 2.0])\n"
            "print(torch.tensor(b), torch.as_tensor(b), torch.from_numpy(b))\n"
            "t = torch.from_numpy(b)\nb *= 1\nx = torch.ones(2)\na = x.numpy()\n"
            "print(a, type(a), a * 2, torch.tensor(a).dtype, torch.tensor(np.arange(3)))\n")
    assert session_run(text) == _python(text)


def test_a_triple_quoted_string_keeps_the_prompt_waiting_until_it_closes():
    from ddx.app.session import chunks, needs_more

    assert needs_more(['s = """one', "two ( #"])
    assert not needs_more(['s = """one', 'two ( # """'])
    assert not needs_more(["x = '#(' + \"[\""])
    text = '"""\nDoc ( [\n"""\nx = 1\ny = """a\nb"""\nprint("#", x)\n'
    assert [start for start, _ in chunks(text)] == [0, 3, 4, 6]
