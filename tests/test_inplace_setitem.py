"""In-place tensor methods and item assignment in the REPL (issue 15): values against PyTorch
for random data (hypothesis), grad_fn and gradients after an in-place op in grad mode, and a
failing statement that changes nothing."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import session_run, torch_or_skip
from hypothesis import given, settings
from hypothesis import strategies as st

from ddx.ops import vml

# (+ 0.0: no -0.0, where ddx's relu gives 0.0 and PyTorch's -0.0, a difference of the op row)
FLOATS = st.lists(st.floats(-3, 3, allow_nan=False, width=32).map(lambda v: v + 0.0),
                  min_size=4, max_size=4)
EXACT = ["relu_", "abs_", "neg_", "floor_", "square_", "sign_"]  # no rounding of their own
UNARY = EXACT + ["exp_", "cos_", "sin_", "tanh_", "sigmoid_", "log1p_", "sqrt_"]
BINARY = [("add_", "{v}, alpha=2"), ("sub_", "{v}"), ("mul_", "{v}"), ("clamp_", "min=-0.5"),
          ("clamp_", "max=0.5"), ("masked_fill_", "x0 > 0, 9.0")]


def _torch_values(code: str, name: str) -> list[float]:
    import torch

    env = {"torch": torch}
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)  # (the REPL's default; conftest sets float64)
    try:
        exec(code, env)  # (the test's own text, never user input)
    finally:
        torch.set_default_dtype(before)
    return env[name].tolist()


@settings(max_examples=25, deadline=None)
@given(FLOATS, st.sampled_from(UNARY))
def test_an_in_place_op_is_its_op_written_into_the_tensor(xs, unary):
    out = [line for line in session_run(
        f"x = torch.tensor({xs!r})\nalias = x\nwant = x.{unary[:-1]}()\n_ = x.{unary}()\n"
        f"print(alias.tolist())\nprint(want.tolist())\nprint(x is alias)")
        if not line.startswith("warning")]  # (log1p(-2): nan, and ddx says where)
    assert out[0] == out[1] and out[2] == "True"


@settings(max_examples=25, deadline=None)
@given(FLOATS, FLOATS, st.sampled_from(EXACT), st.sampled_from(BINARY))
def test_in_place_ops_give_pytorchs_values(xs, ys, unary, binary):
    torch_or_skip()
    name, args = binary
    code = (f"x = torch.tensor({xs!r})\nx0 = x.clone()\ny = torch.tensor({ys!r})\n"
            f"_ = x.{unary}()\n_ = x.{name}({args.format(v='y')})\n")
    want = _torch_values(code, "x")
    got = session_run(code + "print(x.tolist())")
    assert got == [repr(want)]


@settings(max_examples=25, deadline=None)
@given(FLOATS, st.floats(-2, 2, allow_nan=False, width=32))
def test_mask_assignment_gives_pytorchs_values(xs, fill):
    torch_or_skip()
    code = (f"x = torch.tensor({xs!r})\ng = x.clone()\ng[x < {fill!r}] = 0\n"
            f"g[1] = {fill!r}\n")
    want = _torch_values(code, "g")
    assert session_run(code + "print(g.tolist())") == [repr(want)]


def test_in_place_in_grad_mode_records_the_op_and_its_gradient():
    # y = cos(2x): dy/dx = -2 sin(2x); every name that held y sees the new node
    out = session_run("x = torch.tensor([0.5, 1.0], requires_grad=True)\ny = x * 2\n"
                      "alias = y\n_ = y.cos_()\nprint(alias.grad_fn, y is alias)\n"
                      "y.sum().backward()\nprint(x.grad.tolist())")
    # (float32 sin as ddx computes it: PyTorch's MKL one with the mkl extra, else numpy's)
    want = (-2 * vml.sin(2 * np.array([0.5, 1.0], dtype=np.float32))).tolist()
    assert out[0].startswith("<CosBackward0 object at ") and out[0].endswith(" True")
    assert out[1] == repr([float(np.float32(v)) for v in want])


def test_in_place_on_a_view_in_grad_mode_is_refused_rather_than_half_done():
    # PyTorch changes the base too (grad_fn=<CopySlices>); ddx says it does not record that
    out = session_run("x = torch.ones(2, requires_grad=True)\ny = x * 2\nv = y[0]\n"
                      "v.mul_(3)\nprint(y)")
    assert out[0].startswith("error: mul_() on a view of another tensor, recorded for "
                             "autograd, is not supported by ddx")
    assert out[1] == "tensor([2., 2.], grad_fn=<MulBackward0>)"


def test_in_place_on_a_leaf_that_requires_grad_is_refused_and_changes_nothing():
    out = session_run("w = torch.ones(2, requires_grad=True)\nw.add_(1)\nw[0] = 5.0\n"
                      "w[w > 0] = 5.0\nprint(w)")
    assert out == ["error: a leaf Variable that requires grad is being used in an in-place "
                   "operation.",
                   "error: a view of a leaf Variable that requires grad is being used in an "
                   "in-place operation.",
                   "error: a leaf Variable that requires grad is being used in an in-place "
                   "operation.",
                   "tensor([1., 1.], requires_grad=True)"]


def test_a_failing_statement_undoes_its_item_assignments():
    out = session_run("d = {}\nl = ['a']\nx = torch.zeros(2)\nif True:\n    d['k'] = 1\n"
                      "    l[0] = 'b'\n    x[0] = 3.0\n    x[9] = 1\nprint(d, l, x)")
    assert out[0].startswith("error: index 9 is out of bounds for dimension 0 with size 2")
    assert out[1] == "{} ['a'] tensor([0., 0.])"


@pytest.mark.parametrize("code, message", [
    ("i = torch.zeros(2, dtype=torch.long)\ni.add_(0.5)",
     "error: result type Float can't be cast to the desired output type Long"),
    ("x = torch.zeros(2)\nx.add_(torch.ones(3))",
     "error: The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
     "dimension 0"),
    ("x = torch.zeros(2)\nx.add_(torch.ones(2, 2))",
     "error: output with shape [2] doesn't match the broadcast shape [2, 2]"),
    ("x = torch.zeros(2, 3)\nx[:1] = torch.ones(4)",
     "error: The expanded size of the tensor (3) must match the existing size (4) at "
     "non-singleton dimension 1.  Target sizes: [1, 3].  Tensor sizes: [4]"),
    ("n = None\nn[0] = 1", "error: 'NoneType' object does not support item assignment"),
    ("t = torch.tensor(2.)\nt[0]", "error: invalid index of a 0-dim tensor. Use `tensor.item()` "
     "in Python or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"),
])
def test_pytorchs_and_pythons_words(code, message):
    assert session_run(code)[-1] == message
