"""Shape ops against PyTorch 2.13: reshape view flatten squeeze unsqueeze expand repeat cat
stack split chunk flip roll gather index_select masked_fill tril triu clone detach contiguous;
value, gradients and the whole grad_fn graph PyTorch records (a view, or a clone and an
_unsafe_view, by the strides), in float64 and float32, through each spelling; PyTorch's
error texts; and where PyTorch has each function."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import session_run, torch_or_skip
from test_surface_linalg import agree, values_for

import ddx
from ddx.errors import DdxError
from ddx.graph.functions import NAMED, NAMED_SPACES
from ddx.ops import OPS

X23 = {"x": (2, 3)}
CASES = [
    # (ddx source, torch source, shapes)
    ("reshape(x, 3, 2)", "torch.reshape(x, (3, 2))", X23),
    ("reshape(x, (3, -1))", "x.reshape(3, -1)", X23),
    ("x.reshape(-1)", "x.reshape(-1)", X23),
    ("torch.reshape(x, [6, 1])", "torch.reshape(x, [6, 1])", X23),
    ("reshape(x.T, 6)", "x.T.reshape(6)", X23),
    ("reshape(x.T, 3, 1, 2)", "x.T.reshape(3, 1, 2)", X23),
    ("x.view(3, 2)", "x.view(3, 2)", X23),
    ("x.view((-1,))", "x.view((-1,))", X23),
    ("x.T.view(3, 2)", "x.T.view(3, 2)", X23),
    ("flatten(x)", "torch.flatten(x)", {"x": (2, 3, 2)}),
    ("x.flatten(1)", "x.flatten(1)", {"x": (2, 3, 2)}),
    ("x.flatten(0, 1)", "x.flatten(0, 1)", {"x": (2, 3, 2)}),
    ("x.flatten(start_dim=1, end_dim=-1)", "x.flatten(start_dim=1, end_dim=-1)",
     {"x": (2, 3, 2)}),
    ("transpose(x, 0, 1).flatten()", "x.transpose(0, 1).flatten()", X23),
    ("flatten(x) * 2", "torch.flatten(x) * 2", {"x": ()}),
    ("x.flatten(1, 1) * 2", "x.flatten(1, 1) * 2", {"x": (2, 3, 2)}),
    ("squeeze(x)", "torch.squeeze(x)", {"x": (2, 1, 3, 1)}),
    ("x.squeeze(1)", "x.squeeze(1)", {"x": (2, 1, 3, 1)}),
    ("x.squeeze(0)", "x.squeeze(0)", {"x": (2, 1, 3, 1)}),
    ("x.squeeze(-1)", "x.squeeze(-1)", {"x": (2, 1, 3, 1)}),
    ("torch.squeeze(x, (1, 3))", "torch.squeeze(x, (1, 3))", {"x": (2, 1, 3, 1)}),
    ("x.squeeze(dim=1)", "x.squeeze(dim=1)", {"x": (2, 1, 3, 1)}),
    ("unsqueeze(x, 0)", "torch.unsqueeze(x, 0)", X23),
    ("x.unsqueeze(-1)", "x.unsqueeze(-1)", X23),
    ("x.unsqueeze(dim=1)", "x.unsqueeze(dim=1)", X23),
    ("x.expand(4, 2, 3)", "x.expand(4, 2, 3)", X23),
    ("x.expand(2, -1, 3)", "x.expand(2, -1, 3)", {"x": (2, 1, 3)}),
    ("x.expand((2, 3))", "x.expand((2, 3))", {"x": (3,)}),
    ("x.expand_as(y)", "x.expand_as(y)", {"x": (3,), "y": (2, 3)}),
    ("x.repeat(2, 3)", "x.repeat(2, 3)", X23),
    ("x.repeat(2, 1, 2)", "x.repeat(2, 1, 2)", X23),
    ("x.repeat((2,))", "x.repeat((2,))", {"x": (3,)}),
    ("cat([x, y])", "torch.cat([x, y])", {"x": (2, 3), "y": (1, 3)}),
    ("torch.cat([x, y, x], dim=1)", "torch.cat([x, y, x], dim=1)", {"x": (2, 3), "y": (2, 1)}),
    ("torch.concat([x, y], -1)", "torch.concat([x, y], -1)", {"x": (2, 3), "y": (2, 2)}),
    ("torch.concatenate((x, y))", "torch.concatenate((x, y))", {"x": (3,), "y": (2,)}),
    ("stack([x, y])", "torch.stack([x, y])", {"x": (2, 3), "y": (2, 3)}),
    ("torch.stack([x, y], dim=1)", "torch.stack([x, y], dim=1)", {"x": (2, 3), "y": (2, 3)}),
    ("torch.stack([x, y, x], -1)", "torch.stack([x, y, x], -1)", {"x": (2, 3), "y": (2, 3)}),
    ("split(x, 2)[1]", "torch.split(x, 2)[1]", {"x": (3, 2)}),
    ("x.split(2, 1)[0][:, :1] * x.split(2, 1)[1]", "x.split(2, 1)[0][:, :1] * x.split(2, 1)[1]",
     {"x": (2, 3)}),
    ("torch.split(x, [1, 2], dim=1)[1]", "torch.split(x, [1, 2], dim=1)[1]", X23),
    ("x.split((2, 1))[0]", "x.split((2, 1))[0]", {"x": (3, 2)}),
    ("chunk(x, 2)[0]", "torch.chunk(x, 2)[0]", {"x": (3, 2)}),
    ("x.chunk(3, dim=1)[2]", "x.chunk(3, dim=1)[2]", X23),
    ("flip(x, 0)", "torch.flip(x, (0,))", X23),
    ("x.flip(0, 1)", "x.flip(0, 1)", X23),
    ("torch.flip(x, [-1])", "torch.flip(x, [-1])", X23),
    ("roll(x, 1)", "torch.roll(x, 1)", X23),
    ("x.roll(1, 1)", "x.roll(1, 1)", X23),
    ("torch.roll(x, (1, -1), (0, 1))", "torch.roll(x, (1, -1), (0, 1))", X23),
    ("x.roll(shifts=2, dims=-1)", "x.roll(shifts=2, dims=-1)", X23),
    ("gather(x, 1, tensor([[0, 0], [2, 1]]))",
     "torch.gather(x, 1, torch.tensor([[0, 0], [2, 1]]))", X23),
    ("x.gather(0, tensor([[1, 0, 1]]))", "x.gather(0, torch.tensor([[1, 0, 1]]))", X23),
    ("index_select(x, 1, tensor([2, 0, 2]))", "torch.index_select(x, 1, torch.tensor([2, 0, 2]))",
     X23),
    ("x.index_select(0, tensor([1]))", "x.index_select(0, torch.tensor([1]))", X23),
    ("masked_fill(x, x > 0, 0.5)", "torch.masked_fill(x, x > 0, 0.5)", X23),
    ("x.masked_fill(x < 0, -1)", "x.masked_fill(x < 0, -1)", X23),
    ("tril(x)", "torch.tril(x)", {"x": (3, 3)}),
    ("x.tril(-1)", "x.tril(-1)", {"x": (3, 4)}),
    ("x.triu(diagonal=1)", "x.triu(diagonal=1)", {"x": (2, 3, 3)}),
    ("torch.triu(x)", "torch.triu(x)", X23),
    ("clone(x)", "torch.clone(x)", X23),
    ("x.T.clone()", "x.T.clone()", X23),
    ("x.clone() * x.detach()", "x.clone() * x.detach()", X23),
    ("x * torch.detach(x)", "x * torch.detach(x)", X23),
    ("x.T.contiguous()", "x.T.contiguous()", X23),
    ("x.contiguous() * 2", "x.contiguous() * 2", X23),
    ("x[:, None]", "x[:, None]", X23),
    ("x.masked_fill(x > 0, y)", "x.masked_fill(x > 0, y)", {"x": (2, 3), "y": ()}),
    ("torch.masked_fill(x, x < 0, sum(y))", "torch.masked_fill(x, x < 0, y.sum())",
     {"x": (2, 3), "y": (2,)}),
    ("unbind(x)[1]", "torch.unbind(x)[1]", X23),
    ("x.unbind(1)[0] * x.unbind(1)[2]", "x.unbind(1)[0] * x.unbind(1)[2]", X23),
    ("x.narrow(1, 1, 2)", "x.narrow(1, 1, 2)", X23),
    ("torch.narrow(x, 0, -1, 1)", "torch.narrow(x, 0, -1, 1)", X23),
    ("torch.movedim(x, 0, 2)", "torch.movedim(x, 0, 2)", {"x": (2, 3, 4)}),
    ("x.moveaxis((0, 1), (2, 0))", "x.moveaxis((0, 1), (2, 0))", {"x": (2, 3, 4)}),
    ("x.view_as(y)", "x.view_as(y)", {"x": (2, 3), "y": (3, 2)}),
    ("x.T.reshape_as(y)", "x.T.reshape_as(y)", {"x": (2, 3), "y": (6,)}),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("source, torch_src, shapes", CASES, ids=[c[0] for c in CASES])
def test_shape_ops_match_pytorch(source, torch_src, shapes, dtype):
    torch = torch_or_skip()
    fn = eval(f"lambda {', '.join(shapes)}: {torch_src}", {"torch": torch})  # noqa: S307
    agree(source, fn, values_for(shapes, source), dtype)


@pytest.mark.parametrize("source, torch_src, shapes", [
    ("sum(x.view(3, 2) @ y)", "(x.view(3, 2) @ y).sum()", {"x": (2, 3), "y": (2,)}),
    ("sum(stack([x, y]) @ x.T)", "(torch.stack([x, y]) @ x.T).sum()", {"x": (2, 3), "y": (2, 3)}),
    ("sum(cat([x, y], 1).flatten())", "torch.cat([x, y], 1).flatten().sum()",
     {"x": (2, 3), "y": (2, 1)}),
    ("sum(x.unsqueeze(0).expand(3, 2, 3) * y)", "(x.unsqueeze(0).expand(3, 2, 3) * y).sum()",
     {"x": (2, 3), "y": (3, 1, 1)}),
    ("sum(tanh(x.reshape(-1)) ^ 2)", "(torch.tanh(x.reshape(-1)) ** 2).sum()", {"x": (2, 3)}),
    ("sum(x.repeat(2, 1) ^ 3)", "(x.repeat(2, 1) ** 3).sum()", {"x": (2, 3)}),
    ("sum(flip(x, 0) * x)", "(torch.flip(x, (0,)) * x).sum()", {"x": (2, 3)}),
    ("sum(roll(x, 1, 1) * x)", "(torch.roll(x, 1, 1) * x).sum()", {"x": (2, 3)}),
    ("sum(x.gather(1, tensor([[0, 0], [2, 1]])) ^ 2)",
     "(x.gather(1, torch.tensor([[0, 0], [2, 1]])) ** 2).sum()", {"x": (2, 3)}),
    ("sum(x.split(1, 1)[0] * x.split(1, 1)[2])", "(x.split(1, 1)[0] * x.split(1, 1)[2]).sum()",
     {"x": (2, 3)}),
    ("sum(tril(x) * x)", "(torch.tril(x) * x).sum()", {"x": (3, 3)}),
])
def test_hessians_through_shape_ops_match_pytorch(source, torch_src, shapes):
    torch = torch_or_skip()
    values = values_for(shapes, source)
    g = ddx.trace(source, **values)
    result = g.backward().hessian()
    assert result["check"]["ok"], source
    fn = eval(f"lambda {', '.join(shapes)}: {torch_src}", {"torch": torch})  # noqa: S307
    theirs = torch.autograd.functional.hessian(fn, tuple(torch.tensor(v) for v in values.values()))
    for i, a in enumerate(shapes):
        for j, b in enumerate(shapes):
            np.testing.assert_allclose(result["hessian"][a][b], theirs[i][j].numpy(), rtol=1e-9,
                                       atol=1e-10, err_msg=f"{source} H[{a}][{b}]")


def test_one_liners_take_the_index_as_a_literal(run_json):
    code, doc, err = run_json("sum(gather(x, 1, [[0, 0], [2, 1]]) * index_select(x, 1, [1, 2]))",
                              "x=[[1,2,3],[4,5,6]]")
    assert code == 0, err
    # gather picks [[1, 1], [6, 5]], index_select [[2, 3], [5, 6]]
    assert doc["value"] == 1 * 2 + 1 * 3 + 6 * 5 + 5 * 6
    assert doc["gradients"]["x"] == [[5.0, 1.0, 1.0], [0.0, 6.0 + 6.0, 5.0 + 5.0]]


def test_split_and_chunk_give_every_part():
    torch = torch_or_skip()
    lines = session_run("x = tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)\n"
                        "x.split(2, 1)\n"
                        "torch.chunk(x, 2)\n"
                        "torch.split(x, [1, 2], 1)[1]\n")
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    assert lines[0] == repr(x.split(2, 1))
    assert lines[1] == repr(torch.chunk(x, 2))
    assert lines[2] == repr(torch.split(x, [1, 2], 1)[1])


def test_ddx_run_script_matches_pytorch():
    torch = torch_or_skip()
    lines = session_run("x = tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], requires_grad=True)\n"
                        "y = x.T.reshape(-1)\n"
                        "y\n"
                        "z = torch.cat([x.view(6), y.flip(0)]).unsqueeze(0).squeeze()\n"
                        "w = (z * torch.arange(12.0)).sum() + x.masked_fill(x < 0, 0.0).sum()\n"
                        "w.backward()\n"
                        "x.grad\n"
                        "y.grad_fn.next_functions\n")
    x = torch.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], requires_grad=True)
    y = x.T.reshape(-1)
    z = torch.cat([x.view(6), y.flip(0)]).unsqueeze(0).squeeze()
    w = (z * torch.arange(12.0)).sum() + x.masked_fill(x < 0, 0.0).sum()
    w.backward()
    assert lines[0] == repr(y)
    assert lines[1] == repr(x.grad)
    assert lines[2].startswith("((<CloneBackward0 object at ")


@pytest.mark.parametrize("source, bindings, message", [
    ("x.view(4)", X23, "shape '[4]' is invalid for input of size 6"),
    ("x.view(-1, 4)", X23, "shape '[-1, 4]' is invalid for input of size 6"),
    ("x.view(-1, -1)", X23, "only one dimension can be inferred"),
    ("x.T.view(6)", X23, "view size is not compatible with input tensor's size and stride (at "
                         "least one dimension spans across two contiguous subspaces). Use "
                         ".reshape(...) instead."),
    ("x.reshape(4)", X23, "shape '[4]' is invalid for input of size 6"),
    ("x.reshape(0, -1)", X23, "shape '[0, -1]' is invalid for input of size 6"),
    ("x.flatten(2)", X23, "Dimension out of range (expected to be in range of [-2, 1], but got "
                          "2)"),
    ("x.flatten(1, 0)", X23, "flatten() has invalid args: start_dim cannot come after end_dim"),
    ("x.squeeze(2)", X23, "Dimension out of range (expected to be in range of [-2, 1], but got "
                          "2)"),
    ("x.unsqueeze(3)", X23, "Dimension out of range (expected to be in range of [-3, 2], but "
                            "got 3)"),
    ("x.expand(3, 3)", X23, "The expanded size of the tensor (3) must match the existing size "
                            "(2) at non-singleton dimension 0.  Target sizes: [3, 3].  Tensor "
                            "sizes: [2, 3]"),
    ("x.expand(3)", X23, "expand(torch.DoubleTensor{[2, 3]}, size=[3]): the number of sizes "
                         "provided (1) must be greater or equal to the number of dimensions in "
                         "the tensor (2)"),
    ("x.repeat(2)", X23, "Number of dimensions of repeat dims can not be smaller than number of "
                         "dimensions of tensor"),
    ("torch.cat([x, y])", {"x": (2, 3), "y": (3,)}, "Tensors must have same number of "
                                                     "dimensions: got 2 and 1"),
    ("torch.cat([x, y])", {"x": (2, 3), "y": (2, 2)}, "Sizes of tensors must match except in "
                                                       "dimension 0. Expected size 3 but got "
                                                       "size 2 for tensor number 1 in the list."),
    ("torch.cat([x, x], 2)", X23, "Dimension out of range (expected to be in range of [-2, 1], "
                                  "but got 2)"),
    ("torch.stack([x, y])", {"x": (2, 3), "y": (3,)}, "stack expects each tensor to be equal "
                                                       "size, but got [2, 3] at entry 0 and [3] "
                                                       "at entry 1"),
    ("torch.stack([x, x], 3)", X23, "Dimension out of range (expected to be in range of [-3, "
                                    "2], but got 3)"),
    ("x.split(0)", X23, "split_size can only be 0 if dimension size is 0, but got dimension size "
                        "of 2"),
    ("x.chunk(0)", X23, "chunk expects `chunks` to be greater than 0, got: 0"),
    ("x.roll(1, 2)", X23, "Dimension out of range (expected to be in range of [-2, 1], but got "
                          "2)"),
    ("x.flip(2)", X23, "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ("x.flip(0, 0)", X23, "dim 0 appears multiple times in the list of dims"),
    ("x.tril()", {"x": (3,)}, "tril: input tensor must have at least 2 dimensions"),
    ("x.narrow(1, 2, 2)", X23, "start (2) + length (2) exceeds dimension size (3)."),
    ("x.masked_fill(x[:, 0] > 0, 0.0)", {"x": (3, 2)}, "The size of tensor a (3) must match "
                                                        "the size of tensor b (2) at "
                                                        "non-singleton dimension 1"),
])
def test_shape_errors_in_pytorchs_words(source, bindings, message):
    torch = torch_or_skip()
    values = {k: np.ones(s) for k, s in bindings.items()}
    with pytest.raises(DdxError) as info:
        ddx.trace(source, **values)
    assert info.value.message == message
    with pytest.raises((RuntimeError, IndexError)) as theirs:
        eval(source, {"torch": torch,  # noqa: S307 - the test's own text
                      **{k: torch.ones(s, dtype=torch.float64) for k, s in bindings.items()}})
    assert str(theirs.value) == message


def test_the_index_errors_name_the_index():
    torch = torch_or_skip()
    x = torch.ones(2, 3)
    for source, message in (
            ("x.gather(1, tensor([[3]]))", "index 3 is out of bounds for dimension 1 with size 3"),
            ("x.gather(1, tensor([0]))", "Index tensor must have the same number of dimensions as "
                                         "input tensor"),
            ("x.index_select(1, tensor([5]))", "INDICES element is out of DATA bounds, id=5 "
                                               "axis_dim=3"),
            ("x.masked_fill(tensor([1.0, 0.0, 1.0], dtype=torch.float64), 0)",
             "masked_fill_ only supports boolean masks, but got mask with dtype double"),
            ("x.masked_fill(tensor([1.0, 0.0, 1.0], dtype=torch.float32), 0)",
             "masked_fill_ only supports boolean masks, but got mask with dtype float")):
        lines = session_run(f"x = ones(2, 3)\n{source}\n")
        assert lines == [f"error: {message}"], source
        with pytest.raises(RuntimeError) as theirs:
            eval(source.replace("tensor(", "torch.tensor("), {"torch": torch, "x": x})  # noqa: S307
        assert str(theirs.value) == message


SHAPE_ROWS = ["view", "clone", "unsqueeze", "squeeze", "expand", "repeat", "permute", "flip",
              "roll", "gather", "index_select", "masked_fill", "tril", "triu", "transpose", "t",
              "dot", "mv", "mm", "bmm", "trace", "diagonal", "det", "inv", "inverse", "solve",
              "cholesky"]


@pytest.mark.parametrize("name", SHAPE_ROWS)
def test_rows_live_where_pytorch_has_them(name):
    torch = torch_or_skip()
    for alias in OPS[name].names:
        want = tuple(s for s, m in (("torch", torch), ("Tensor", torch.Tensor),
                                    ("linalg", torch.linalg)) if hasattr(m, alias))
        assert tuple(s for s in OPS[name].spaces if s != "F") == want, alias


@pytest.mark.parametrize("name", ["unbind", "narrow", "movedim", "moveaxis", "view_as",
                                  "reshape_as", "einsum",
                                  "reshape", "flatten", "contiguous", "detach", "expand_as",
                                  "cat", "concat", "concatenate", "stack", "split", "chunk",
                                  "matmul", "outer", "ger", "diag", "adjoint"])
def test_functions_live_where_pytorch_has_them(name):
    torch = torch_or_skip()
    assert name in NAMED
    want = tuple(s for s, m in (("torch", torch), ("Tensor", torch.Tensor),
                                ("linalg", torch.linalg)) if hasattr(m, name))
    assert NAMED_SPACES.get(name, ("torch",)) == want


# PyTorch's layouts: which of these reshapes is a view depends on the strides every op before
# it leaves (a transpose, an elementwise op of differently laid out inputs, a roll, ...)
LAYOUTS = ["(x.T * 2).reshape(6)", "(x.T + y).reshape(6)", "(y + x.T).reshape(6)",
           "exp(x.T).reshape(6)", "(x.T * v).reshape(6)", "(v * x.T).reshape(6)",
           "(x.T @ x).reshape(9)", "x.T[1:].reshape(4)", "x[:, 1:].T.reshape(4)",
           "b.transpose(0, 1) @ y", "(b.transpose(0, 1) * 2) @ y", "b.permute(2, 0, 1).reshape(3, 8)",
           "(b.permute(2, 0, 1) + 1).reshape(3, 8)", "x.T.unsqueeze(0).reshape(6)",
           "x.unsqueeze(1).mT.reshape(6)", "x.expand(4, 2, 3).reshape(8, 3)", "v.expand(3, 2).reshape(6)",
           "x.T.contiguous().view(6)", "x.T.flatten()", "b.mT @ b", "b @ b.mT", "y.T @ b.mT",
           "torch.stack([x.T, y]).reshape(12)", "torch.cat([x.T, y], 1).reshape(12)",
           "x.T.clone().reshape(6)", "x.T.flip(0).reshape(6)", "x.T.roll(1, 0).reshape(6)",
           "x.T.tril().reshape(6)", "x.T.masked_fill(x.T > 0, 0.0).reshape(6)", "(x.T ** 2).reshape(6)",
           "tanh(b.permute(2, 1, 0)).reshape(-1)", "x.T.repeat(1, 2).reshape(12)",
           "x.t().squeeze().reshape(6)", "x.T.squeeze(0).reshape(6)", "b[:, 0] @ y", "b[..., 0].reshape(8)",
           "(x.T + y.T.T).reshape(6)", "(y * 1 + x.T).flatten()", "(x.T - y).contiguous()"]


@pytest.mark.parametrize("source", LAYOUTS)
def test_reshapes_view_where_pytorchs_strides_allow(source):
    torch = torch_or_skip()
    values = values_for({"x": (2, 3), "y": (3, 2), "v": (2,), "b": (4, 2, 3)}, source)
    used = {k: v for k, v in values.items()
            if re.search(rf"\b{k}\b", source.replace("x.T", "x .T"))}
    fn = eval(f"lambda {', '.join(used)}: {source}",  # noqa: S307 - the test's own text
              {"torch": torch, "exp": torch.exp, "tanh": torch.tanh})
    agree(source, fn, used)


@pytest.mark.parametrize("source", ["torch.cat(x)", "torch.stack(x)", "torch.cat([1, 2])",
                                    "torch.stack([x, 2.0])", "torch.cat(3)"])
def test_lists_of_tensors_in_pytorchs_words(source):
    torch = torch_or_skip()
    with pytest.raises(DdxError) as info:
        ddx.trace(source, x=np.ones(2))
    with pytest.raises(TypeError) as theirs:
        eval(source, {"torch": torch, "x": torch.ones(2)})  # noqa: S307 - the test's own text
    assert info.value.message == str(theirs.value)


@pytest.mark.parametrize("source", ["sum(x.expand(100000, 100000, 2))",
                                    "sum(x.repeat(100000, 100000))",
                                    "y = x.repeat(2000); sum(einsum('i,j,k->ijk', y, y, y))",
                                    "y = x.repeat(20000); sum(outer(y, y))",
                                    "sum(x.expand(3000, 1, 1, 2) @ x.expand(1, 3000, 2, 2))"])
def test_big_results_are_refused_before_they_are_made(run, source):
    code, _, err = run(source, "x=[1,2]")
    assert code == 1
    assert "over the limit of 10,000,000 (DDX_MAX_ELEMENTS)" in err.splitlines()[0]
