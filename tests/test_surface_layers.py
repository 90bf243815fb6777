"""torch.nn.functional.linear and torch.addmm (issue 14's layers): PyTorch's values, gradients
and recorded nodes for every input rank, with and without a bias."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import torch_or_skip

from ddx.app.session import Session


def _names(fn) -> list[str]:
    out, stack, seen = [], [fn], set()
    while stack:
        f = stack.pop()
        if f is None or f in seen:
            continue
        seen.add(f)
        out.append(f.name())
        stack.extend(g for g, _ in f.next_functions)
    return out


def _ddx_names(t) -> list[str]:
    out, stack, seen = [], [t.grad_fn], set()
    while stack:
        f = stack.pop()
        if f is None or id(f) in seen:
            continue
        seen.add(id(f))
        out.append(f.name)
        stack.extend(g for g, _ in f.next_functions)
    return out


@pytest.mark.parametrize("shape", [(4, 2), (2,), (5, 4, 2), (3, 1, 2)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_records_what_pytorch_records(shape, bias):
    torch = torch_or_skip()
    import torch.nn.functional as F

    script = (f"W = torch.randn(3, 2, requires_grad=True)\nb = torch.randn(3, requires_grad=True)"
              f"\nx = torch.randn{shape}.requires_grad_()\n"
              f"y = F.linear(x, W{', b' if bias else ''})\n(y * y).sum().backward()")
    session = Session(lambda t: None, lambda t: None)
    session.run_script("_ = torch.manual_seed(3)\n" + script)
    env = session.env
    torch.set_default_dtype(torch.float32)  # (the REPL's default, as PyTorch's)
    torch.manual_seed(3)
    W = torch.randn(3, 2, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    x = torch.randn(*shape).requires_grad_()
    y = F.linear(x, W, b) if bias else F.linear(x, W)
    (y * y).sum().backward()
    torch.set_default_dtype(torch.float64)  # (conftest's, for the other tests)
    np.testing.assert_allclose(env["y"].value, y.detach().numpy(), rtol=1e-5)
    for name, t in (("W", W), ("x", x)) + ((("b", b),) if bias else ()):
        np.testing.assert_allclose(env[name].grad, t.grad.numpy(), rtol=1e-4, atol=1e-6)
    assert sorted(_ddx_names(env["y"])) == sorted(
        n.replace("torch::autograd::", "") for n in _names(y.grad_fn))


def test_addmm_and_its_errors():
    out: list[str] = []
    s = Session(out.append, out.append)
    s.run_script("a = tensor([[1., 2.], [3., 4.]], requires_grad=True)\n"
                 "b = tensor([1., -1.], requires_grad=True)\n"
                 "y = torch.addmm(b, a, a)\nprint(y)\ny.sum().backward()\nprint(a.grad, b.grad)\n"
                 "torch.addmm(b, a, tensor([[1., 2., 3.]]))")
    assert out[:4] == ["tensor([[ 8.,  9.],", "        [16., 21.]], grad_fn=<AddmmBackward0>)",
                       "tensor([[ 7., 11.],", "        [ 9., 13.]]) tensor([2., 2.])"]
    assert out[4].startswith("error: mat1 and mat2 shapes cannot be multiplied (2x2 and 1x3)")
