"""The language that PyTorch's operators need (issue 14): comparisons giving bool tensors that
need no grad, string literals, tuples and unpacking, None/.../integer/boolean indexing, and
every spelling of a function (bare, torch.X, x.X(), F.X, torch.nn.functional.X), each
checked against PyTorch 2.13 running the same script; and the messages for what is missing."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import session_run, torch_or_skip

import ddx
from ddx.app.session import Session
from ddx.graph.tensor import Tensor


def ours(script: str) -> dict:
    errors: list[str] = []
    session = Session(lambda text: None, errors.append)
    session.run_script(script)
    assert not [e for e in errors if not e.startswith("warning:")], errors
    return session.env


def theirs(script: str) -> dict:
    torch = torch_or_skip()
    import torch.nn.functional as F

    scope = {"torch": torch, "F": F, "true": True, "false": False}
    exec(compile(script, "<oracle>", "exec"), scope)  # noqa: S102 - the test's own script
    return scope


def same(script: str, names: list[str], grads: tuple[str, ...] = ()) -> None:
    """Each name's value, dtype, requires_grad and grad_fn name, and each leaf's .grad, as
    PyTorch computes them for the same script."""
    mine, torch_scope = ours(script), theirs(script)
    for name in names:
        a, b = mine[name], torch_scope[name]
        if isinstance(b, bool):
            assert a is b, name
            continue
        assert isinstance(a, Tensor), name
        np.testing.assert_allclose(a.value, b.detach().numpy(), rtol=1e-12, err_msg=name)
        assert a.value.dtype.name == str(b.dtype).replace("torch.", ""), name
        assert a.requires_grad == b.requires_grad, name
        assert (a.grad_fn.name if a.grad_fn else None) == (b.grad_fn.name() if b.grad_fn
                                                            else None), name
    for name in grads:
        want = torch_scope[name].grad
        if want is None:  # (not used: no gradient reaches it)
            assert mine[name].grad is None, name
            continue
        np.testing.assert_allclose(mine[name].grad, want.numpy(), rtol=1e-9, atol=1e-15,
                                   err_msg=f"{name}.grad")


X = "x = torch.tensor([[1., -2., 3.], [4., 0.5, -6.]], dtype=torch.float64, requires_grad=True)\n"


@pytest.mark.parametrize("expr", ["x > 0", "x >= 0.5", "x < x * 2", "x <= 1", "x == 3",
                                  "x != 3", "0 < x", "3 >= x", "torch.gt(x, 0)",
                                  "x.lt(1)", "torch.ne(x, x)", "torch.greater_equal(x, 0.5)"])
def test_comparisons_give_bool_tensors_that_need_no_grad(expr):
    same(X + f"c = {expr}\n", ["c"])


def test_plain_numbers_compare_as_python():
    assert session_run("1 < 2\n2 == 2.0\n3 != 3") == ["True", "True", "False"]


@pytest.mark.parametrize("expr", [
    "torch.where(x > 0, x * x, 0.)", "torch.where(x > 0, x, -x)", "torch.clamp(x, min=0.5)",
    "torch.clamp(x, -1, 1)", "x.clamp(max=0.5)", "torch.clip(x, 0, 2)",
    "torch.clamp_min(x, 0)", "torch.clamp_max(x, 1)", "torch.clamp(x, min=x * 0.5)",
    "torch.clamp(x, x - 1, x * 0 + 1)", "torch.clamp_min(x, x * 0)",
    "torch.lerp(x, x * x, 0.25)", "torch.lerp(x, x * 2, torch.sigmoid(x))",
    "torch.nan_to_num(torch.log(x))"])
def test_selection_ops_match_pytorch_with_gradients(expr):
    same(X + f"y = {expr}\ny.sum().backward()\n", ["y"], ("x",))


@pytest.mark.parametrize("expr", [
    "x[None]", "x[:, None]", "x[..., 0]", "x[0, ..., 1]", "x[..., None]", "x[None, 0]",
    "x[[0, 1, 1]]", "x[x > 0]", "x[0, [1, 2]]", "x[:, [0, 2]]", "x[:, [0, 2], None]",
    "x[torch.tensor([1, 0, 1])]", "x[[1, 0], [2, 2]]", "x[x[:, 0] > 2]", "x[::2, 1:]",
    "x[-1, -2]", "x[:]", "x[:, :]", "x[...]", "x[0:2]", "x[:, 0:3]", "x[0:5, :]"])
def test_indexing_matches_pytorch_with_gradients(expr):
    same(X + f"y = {expr}\n(y * y).sum().backward()\n", ["y"], ("x",))


def test_a_repeated_index_accumulates_its_gradient():
    g = ddx.trace("sum(x[[0, 2, 0, 0]] * w)", x=[1.0, 2.0, 3.0], w=[1.0, 2.0, 3.0, 4.0])
    g.backward()
    assert g.grads["x"].tolist() == [1 + 3 + 4, 0, 2]


@pytest.mark.parametrize("script, message", [
    (X + "x[[0, 5]]", "error: index 5 is out of bounds for dimension 0 with size 2"),
    (X + "x[x[0] > 0]", "error: The shape of the mask [3] at index 0 does not match the shape "
                        "of the indexed tensor [2, 3] at index 0"),
    (X + "x[x]", "error: tensors used as indices must be long, int, byte or bool tensors"),
    (X + "x[0, 0, 0]", "error: too many indices for tensor of dimension 2"),
    (X + "x[..., ...]", "error: an index can only have a single ellipsis ('...')"),
])
def test_index_errors_in_pytorchs_words(script, message):
    assert session_run(script)[-1] == message


def test_tuples_and_unpacking():
    out = session_run("t = (1, 2, 3)\nt\n()\n(4,)\na, b = 5, 6\nprint(b)\n"
                      "v = tensor([7., 8.])\np, q = v\nprint(q)\nm, (n, k) = 1, (2, 3)\nprint(k)")
    assert out == ["(1, 2, 3)", "()", "(4,)", "6", "tensor(8.)", "3"]  # (ints stay ints)
    assert session_run("w = tensor([7., 8.], requires_grad=true)\np, q = w\nq")[-1] == \
        "tensor(8., grad_fn=<UnbindBackward0>)"  # (unpacking iterates: unbind)
    assert session_run("a, b = 1, 2, 3")[-1] == "error: too many values to unpack (expected 2)"
    assert session_run("a, b, c = 1, 2")[-1] == \
        "error: not enough values to unpack (expected 3, got 2)"


def test_string_literals_and_their_escapes():
    assert session_run("print('a', \"b c\")\n'it\\'s'\n\"tab\\there\"") == [
        "a b c", "\"it's\"", "'tab\\there'"]


@pytest.mark.parametrize("spelling", ["F.softplus(x, beta=2)",
                                      "torch.nn.functional.softplus(x, beta=2)"])
def test_functional_spellings_in_the_repl(spelling):
    same(X + f"y = {spelling}\ny.sum().backward()\n", ["y"], ("x",))


@pytest.mark.parametrize("spelling", ["torch.sin(x)", "x.sin()", "torch.tanh(x)", "F.tanh(x)",
                                      "x.exp()", "torch.nn.functional.relu(x)", "F.relu(x)",
                                      "torch.special.expm1(x)", "torch.clamp(x, min=0.5)"])
def test_one_liners_take_every_pytorch_spelling(run_json, spelling):
    code, doc, _ = run_json(f"sum({spelling})", "x=[0.25,1,2]")
    assert code == 0, doc
    torch = torch_or_skip()
    import torch.nn.functional as F

    x = torch.tensor([0.25, 1.0, 2.0], dtype=torch.float64, requires_grad=True)
    y = eval(f"({spelling}).sum()", {"torch": torch, "F": F, "x": x})  # noqa: S307 - test text
    y.backward()
    assert doc["value"] == pytest.approx(y.item(), rel=1e-12)
    assert doc["gradients"]["x"] == pytest.approx(x.grad.tolist(), rel=1e-12)


@pytest.mark.parametrize("source, message", [
    ("F.sin(x)", "error: module 'torch.nn.functional' has no attribute 'sin'"),
    ("torch.fft.fft(x)", "error: module 'torch' has no attribute 'fft'"),
    ("torch.nanmedian(x)", "error: 'torch.nanmedian' is not supported by ddx"),
    ("F.grid_sample(x)", "error: 'torch.nn.functional.grid_sample' is not supported by ddx"),
    ("nanmedian(x)", "error: 'nanmedian' is not supported by ddx"),
    ("x.sinn()", "error: 'Tensor' object has no attribute 'sinn'; did you mean 'sin'?"),
    ("torch.sinn(x)", "error: module 'torch' has no attribute 'sinn'; did you mean 'sin'?"),
    ("nope(x)", "error: unknown function 'nope'"),
    ("sqr(x)", "error: unknown function 'sqr'; did you mean 'sqrt'?"),
])
def test_missing_functions_are_worded_and_never_suggest_far_names(source, message):
    assert session_run(X + source)[-1] == message


def test_did_you_mean_stays_within_a_couple_of_edits():
    assert session_run("x = 1\nnope + x")[-1] == "error: unknown name 'nope'"
    assert session_run("x = 1\nsoftmx(x)")[-1] in (
        "error: unknown function 'softmx'", "error: unknown function 'softmx'; did you mean "
                                            "'softmax'?")


Y = "y = torch.tensor([[0.5, 3., -1.], [2., -0.25, 1.5]], dtype=torch.float64, requires_grad=True)\n"


@pytest.mark.parametrize("expr", [
    "torch.add(x, y, alpha=2)", "x.add(y, alpha=0.5)", "torch.sub(x, y, alpha=2)",
    "torch.add(x, 2, alpha=3)", "torch.rsub(x, y)", "torch.rsub(x, 2)", "torch.rsub(x, y, alpha=2)",
    "torch.fmod(x, 2)", "torch.remainder(x, 2)", "x.fmod(y)", "torch.remainder(x, y)",
    "F.gelu(x, approximate='tanh')", "F.gelu(x)", "torch.maximum(x, y)", "torch.atan2(x, y)"])
def test_arithmetic_by_name_matches_pytorch(expr):
    same(X + Y + f"z = {expr}\nz.sum().backward()\n", ["z"], ("x", "y"))


def test_functions_of_tensors_refuse_a_number_as_pytorch_does_but_the_bare_name_takes_it():
    assert session_run(X + "torch.maximum(x, 2)")[-1] == \
        "error: maximum(): argument 'other' (position 2) must be Tensor, not int"
    assert session_run(X + "torch.fmod(2, x)")[-1].startswith(
        "error: fmod() received an invalid combination of arguments - got (int, Tensor)")
    g = ddx.trace("sum(maximum(x, 0))", x=[1.5, -2.0])
    g.backward()
    assert g.grads["x"].tolist() == [1.0, 0.0]
