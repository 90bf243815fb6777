"""torch.autograd.grad (create_graph: second derivatives), torch.autograd.backward and
torch.autograd.functional in the REPL's Python: what ddx prints against what PyTorch prints
for the same code, and PyTorch's error texts."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import session_run, torch_or_skip
from hypothesis import given, settings
from hypothesis import strategies as st

HEAD = "import torch\nfrom torch.autograd.functional import jacobian, hessian, vjp, jvp, hvp\n"


def torch_prints(source: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", HEAD + source], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def same_as_torch(source: str) -> list[str]:
    torch_or_skip()
    ours = session_run(HEAD + source)
    assert ours == torch_prints(source)
    return ours


@pytest.mark.parametrize("f", ["x**3", "torch.sin(x)", "torch.exp(x)", "x*x", "3*x**2+2*x+1",
                               "torch.tanh(x)", "torch.sigmoid(x)", "torch.log(x)", "x+1",
                               "1/x", "torch.sqrt(x)*x"])
def test_second_derivative_through_create_graph(f):
    same_as_torch(f"""x = torch.tensor(1.5, requires_grad=True)
y = {f}
dy = torch.autograd.grad(y, x, create_graph=True)[0]
print(dy, dy.requires_grad)
if dy.requires_grad:
    print(torch.autograd.grad(dy, x))
""")


def test_a_gradient_penalty_backpropagates_through_the_gradient():
    lines = same_as_torch("""v = torch.tensor([1.0, 2.0], requires_grad=True)
w = torch.tensor([0.5, -1.0], requires_grad=True)
loss = (torch.tanh(w * v) ** 2).sum()
gw, = torch.autograd.grad(loss, w, create_graph=True)
pen = (gw ** 2).sum() + loss
pen.backward()
print(w.grad)
print(v.grad)
""")
    assert len(lines) == 2


@settings(max_examples=8, deadline=None)
@given(st.lists(st.integers(-5, 5), min_size=2, max_size=5), st.integers(-3, 3))
def test_second_derivative_of_a_polynomial(coeffs, at):
    """d2/dx2 of sum c_k x^k is sum k (k-1) c_k x^(k-2): by hand, in float64."""
    terms = " + ".join(f"{c}.0 * x ** {k}" for k, c in enumerate(coeffs))
    lines = session_run(f"""import torch
x = torch.tensor({at}.0, dtype=torch.float64, requires_grad=True)
y = {terms}
g, = torch.autograd.grad(y, x, create_graph=True)
h, = torch.autograd.grad(g, x, allow_unused=True)
print(g.item())
print(0.0 if h is None else h.item())""")
    want_g = sum(k * c * at ** (k - 1) for k, c in enumerate(coeffs) if k >= 1)
    want_h = sum(k * (k - 1) * c * at ** (k - 2) for k, c in enumerate(coeffs) if k >= 2)
    assert float(lines[0]) == pytest.approx(want_g, abs=1e-9)
    assert float(lines[1]) == pytest.approx(want_h, abs=1e-9)


def test_grads_errors_are_pytorchs():
    same_as_torch("""x = torch.tensor(2.0, requires_grad=True)
v = torch.tensor([1.0, 2.0], requires_grad=True)
for f in [lambda: torch.autograd.grad(x*2, [x, v]),
          lambda: torch.autograd.grad(x*2, [x, torch.tensor(1.0)]),
          lambda: torch.autograd.grad(v*2, v),
          lambda: torch.autograd.grad(torch.tensor(1.0), x),
          lambda: torch.autograd.grad(v*2, v, torch.ones(3))]:
    try:
        f()
    except RuntimeError as e:
        print(e)
y = x * x
print(torch.autograd.grad(y, x))
try:
    torch.autograd.grad(y, x)
except RuntimeError as e:
    print(e)
print(torch.autograd.grad(x*2, [x, v], allow_unused=True))
print(torch.autograd.grad(x*2, [x, v], allow_unused=True, materialize_grads=True))
print(torch.autograd.grad(v*2, v, torch.ones(2)))
print(torch.autograd.grad([v*2, v.sum()], [v], [torch.ones(2), None]))
y = x ** 3
print(torch.autograd.grad(y, x, retain_graph=True), torch.autograd.grad(y, x))
h = x * 3
print(torch.autograd.grad(h ** 2, [h, x]))
""")


def test_autograd_backward_accumulates():
    same_as_torch("""v = torch.tensor([1.0, 2.0], requires_grad=True)
torch.autograd.backward([(v*v).sum(), (3*v).sum()])
print(v.grad)
torch.autograd.backward(v * 2, torch.tensor([1.0, -1.0]))
print(v.grad)
""")


def test_functional_jacobian_hessian_vjp_jvp():
    same_as_torch("""v = torch.tensor([1.0, 2.0])
w = torch.tensor([0.5, 3.0])
def f(a):
    return a ** 2 * 3
def g(a, b):
    return a * b.exp(), (a + b).sum()
def s(a):
    return (a ** 3).sum()
def s2(a, b):
    return (a ** 2 * b).sum()
print(jacobian(f, v))
print(jacobian(g, (v, w)))
print(hessian(s, v))
print(hessian(s2, (v, w)))
print(vjp(f, v, torch.ones(2)))
print(jvp(f, v, torch.tensor([1.0, -1.0])))
print(vjp(s, v))
print(hvp(s, v, torch.ones(2)))
print(torch.autograd.functional.jacobian(lambda t: t.exp(), torch.tensor([0.0, 1.0])))
print(jacobian(lambda t: t.sum() * 0 + 1.0, v))
for bad in [lambda: vjp(f, v), lambda: jvp(f, v), lambda: hessian(f, v)]:
    try:
        bad()
    except RuntimeError as e:
        print(e)
""")


@pytest.mark.parametrize("f", ["x ** 3", "torch.sin(x) * x", "torch.exp(2 * x)", "torch.tanh(x)",
                               "3 * x ** 2 + 2 * x + 1"])
def test_backward_with_create_graph_leaves_a_differentiable_grad(f):
    lines = same_as_torch(f"""x = torch.tensor(0.75, requires_grad=True)
y = {f}
y.backward(create_graph=True)
print(x.grad)
g = x.grad
x.grad = None
g.backward()
print(x.grad)
""")
    assert "grad_fn=<CopyBackwards>" in lines[0]


def test_a_gradient_penalty_through_backward_create_graph():
    same_as_torch("""w = torch.tensor([1.0, -0.5], requires_grad=True)
loss = (w.sin() * w).sum()
loss.backward(create_graph=True)
print(w.grad)
penalty = (w.grad ** 2).sum()
print(torch.autograd.grad(penalty, w))
a = torch.tensor(3.0, requires_grad=True)
(2 * a).backward(create_graph=True)
print(a.grad, a.grad.requires_grad)
""")


def test_backward_with_create_graph_warns_as_pytorch_does_once():
    from ddx.app import pyautograd
    from ddx.app.session import Session

    pyautograd.WARNED.clear()
    errs: list[str] = []
    session = Session(lambda t: None, errs.append)
    session.run_script("import torch\nx = torch.tensor(2.0, requires_grad=True)\n"
                       "(x ** 3).backward(create_graph=True)\n(x ** 2).backward(create_graph=True)\n")
    assert errs == ["warning: " + pyautograd.CREATE_GRAPH_WARNING]


def test_a_hook_registered_by_a_failed_statement_is_undone():
    from ddx.app.session import Session

    out: list[str] = []
    session = Session(out.append, out.append)
    session.run("import torch\nx = torch.tensor([1.], requires_grad=True)\n"
                "hs = [x.register_hook(lambda g: g * 100), nope]")
    session.run("y = torch.tensor([3.], requires_grad=True)\nh = y.register_hook(lambda g: g * 5)")
    session.run("(x * 2 + y).sum().backward()\nprint(x.grad, y.grad)\nh.remove()\n"
                "y.grad = None\n(y * 1).sum().backward()\nprint(y.grad)")
    assert out[-2:] == ["tensor([2.]) tensor([5.])", "tensor([1.])"]
