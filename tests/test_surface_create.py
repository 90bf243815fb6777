"""Creation functions against PyTorch 2.13: values (bit for bit), dtypes, shapes, requires_grad
and error messages, in one-liners (bare names and torch.X) and in ddx run scripts (the REPL's
surface, with the in-place normal_ and uniform_); the generator's state in REPL transactions and
in replayed programs."""

from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np
import pytest
from conftest import session_run, torch_or_skip

import ddx
from ddx.app.session import Session
from ddx.errors import DdxError
from ddx.graph import calls_create

VALUES = [
    "torch.ones(2, 3)", "torch.ones((2, 3))", "torch.ones([2, 3])", "torch.ones(size=(2, 3))",
    "torch.ones(())", "torch.ones(0)", "torch.zeros(3, dtype=torch.float32)",
    "torch.zeros(2, 2, dtype=torch.int64)", "torch.ones(2, dtype=torch.bool)",
    "torch.full((2, 2), 7)", "torch.full((2,), 1.5)", "torch.full((2,), True)",
    "torch.full((2,), 1.5, dtype=torch.int64)", "torch.full([2, 3], -0.25, requires_grad=True)",
    "torch.full((2,), 1, dtype=torch.float32)", "torch.eye(3)", "torch.eye(2, 3)",
    "torch.eye(3, dtype=torch.int64)", "torch.eye(0)", "torch.eye(n=2, m=1)",
    "torch.arange(5)", "torch.arange(5.0)", "torch.arange(1, 4)", "torch.arange(1, 4, 0.5)",
    "torch.arange(0, 1, 0.1)", "torch.arange(10, 0, -3)", "torch.arange(5, 0, -2.5)",
    "torch.arange(0.3, 100, 0.7)", "torch.arange(-5, 5, 0.013)", "torch.arange(1e-3, 3, 1e-3)",
    "torch.arange(0.3, 100, 0.7, dtype=torch.float32)",
    "torch.arange(-5, 5, 0.013, dtype=torch.float32)", "torch.arange(0, 2.5, dtype=torch.int64)",
    "torch.arange(-2.5, 3, dtype=torch.int64)", "torch.arange(0.5, 3.7, 1.5, dtype=torch.int64)",
    "torch.arange(True)", "torch.arange(start=1, end=3)", "torch.arange(end=3)",
    "torch.arange(0.1, 0.1)", "torch.arange(3.0, requires_grad=True)",
    "torch.arange(3, dtype=torch.float32)", "torch.linspace(0, 1, 5)", "torch.linspace(-1, 1, 11)",
    "torch.linspace(0.3, 7.9, 1000)", "torch.linspace(0.3, 7.9, 1000, dtype=torch.float32)",
    "torch.linspace(1, 0, 77)", "torch.linspace(-3.3, 1000.0, 31)",
    "torch.linspace(0, 10, 4, dtype=torch.int64)", "torch.linspace(-3.5, 3.5, 4, dtype=torch.int64)",
    "torch.linspace(0.5, 9.7, 5, dtype=torch.int64)", "torch.linspace(0, 1, 1)",
    "torch.linspace(0, 1, 0)", "torch.linspace(0, 1, steps=3)",
    "torch.linspace(0, 1, 3, requires_grad=True)", "torch.tensor([1, 2])", "torch.tensor([1.5, 2])",
    "torch.tensor(3, dtype=torch.float32)", "torch.tensor([1., 2.], requires_grad=True)",
    "torch.ones_like(torch.tensor([1, 2]))", "torch.zeros_like(torch.tensor([[1., 2.]]))",
    "torch.ones_like(torch.tensor([1, 2]), dtype=torch.float64)",
    "torch.full_like(torch.tensor([1, 2]), 2.7)", "torch.full_like(torch.tensor([1., 2.]), 2)",
    "torch.zeros_like(torch.ones(2), requires_grad=True)", "torch.ones(2, requires_grad=None)",
    "torch.ones(2, dtype=None)", "torch.ones((2, True))",
    # the generator: manual_seed, then PyTorch's numbers
    "torch.manual_seed(0); torch.rand(3)", "torch.manual_seed(3); torch.randn(2, 3)",
    "torch.manual_seed(3); torch.randn(20, dtype=torch.float32)",
    "torch.manual_seed(3); torch.randn(5, 7)", "torch.manual_seed(42); torch.rand(4, 5)",
    "torch.manual_seed(42); torch.rand((17,), dtype=torch.float32)",
    "torch.manual_seed(1); torch.randint(0, 10, (2, 3))", "torch.manual_seed(1); torch.randint(5, (4,))",
    "torch.manual_seed(1); torch.randint(-4, 4, (3,), dtype=torch.float64)",
    "torch.manual_seed(1); torch.randint(low=1, high=3, size=(5,))",
    "torch.manual_seed(1); torch.randint(high=3, size=(5,))",
    "torch.manual_seed(1); torch.randint(0, 2, (6,), dtype=torch.bool)",
    "torch.manual_seed(2); torch.rand_like(torch.ones(2, 2))",
    "torch.manual_seed(2); torch.randn_like(torch.ones(17))",
    "torch.manual_seed(2); torch.randn_like(torch.ones(3), dtype=torch.float32)",
    "torch.manual_seed(2); torch.randint_like(torch.ones(3), 10)",
    "torch.manual_seed(2); torch.randint_like(torch.ones(3), 3, 10)",
    "torch.manual_seed(2); torch.randint_like(torch.tensor([1, 2]), 10)",
    "torch.manual_seed(5); torch.normal(0.5, 2.0, (3, 7))",
    "torch.manual_seed(5); torch.normal(0.5, 2.0, size=(3,))",
    "torch.manual_seed(5); torch.rand(2, 3, requires_grad=True)",
    "torch.manual_seed(7); torch.randn(3); torch.randn(3)",
    "torch.manual_seed(7); torch.randperm(10)", "torch.manual_seed(7); torch.randperm(1)",
    "torch.manual_seed(7); torch.randperm(1000); torch.rand(3)",
    "torch.manual_seed(7); torch.randperm(5, dtype=torch.float64)",
    "torch.manual_seed(7); torch.rand(700); torch.randn(15)",
    "torch.manual_seed(2**31 + 5); torch.rand(2)", "torch.manual_seed(-1); torch.rand(2)",
    "torch.manual_seed(1.5); torch.rand(2)", "torch.manual_seed(9); torch.initial_seed()",
]


@contextmanager
def script_defaults(torch):
    """PyTorch as a ddx run script mirrors it: float32 the default dtype (the REPL's, as
    PyTorch's; one-liners default to float64, so the other tests run torch in float64)."""
    torch.set_default_dtype(torch.float32)
    try:
        yield
    finally:
        torch.set_default_dtype(torch.float64)


def torch_eval(torch, text: str):
    """The statements of a case, run by PyTorch: the last one's value."""
    scope = {"torch": torch, "inf": math.inf}
    value = None
    for stmt in text.split("; "):
        value = eval(stmt, scope)  # (the test's own constant texts)
    return value


def ddx_eval(text: str, *, bare: bool = False):
    """The same text as a one-liner (torch.X, or the bare name X): its output tensor."""
    if bare:
        text = text.replace("torch.", "").replace("dtype=", "dtype=torch.").replace(
            "torch.None", "None")
    trace = ddx.trace(text)
    return trace.output


def script_eval(text: str):
    """The same statements in a ddx run script: the last one's value."""
    stmts = text.split("; ")
    session = Session(lambda t: None, lambda t: None)
    assert session.run_script("\n".join(stmts[:-1] + ["out = " + stmts[-1]])) == 0
    return session.env["out"]


def ways(torch, text: str) -> list:
    """Every way to run a case, with PyTorch's answer for it: ddx run (float32 by default, as
    PyTorch), and one-liners (float64) unless an integer literal is in it (a one-liner's
    [1, 2] is float, its language's rule)."""
    with script_defaults(torch):
        out = [(script_eval(text), torch_eval(torch, text))]
    if "tensor([1, 2])" not in text:
        theirs = torch_eval(torch, text)
        out += [(ddx_eval(text), theirs), (ddx_eval(text, bare=True), theirs)]
    return out


@pytest.mark.parametrize("text", VALUES)
def test_values_dtypes_and_requires_grad_match_pytorch(text):
    torch = torch_or_skip()
    for k, (ours, theirs) in enumerate(ways(torch, text)):
        if isinstance(theirs, int):
            assert ours.value.item() == theirs
            continue
        want = theirs.detach().numpy()
        assert ours.value.dtype == want.dtype, (text, k)
        assert ours.value.shape == want.shape, (text, k)
        assert ours.value.tobytes() == want.tobytes(), (text, k, ours.value, want)
        assert ours.requires_grad == theirs.requires_grad
        assert ours.is_leaf


@pytest.mark.parametrize("text", ["torch.empty(2, 3)", "torch.empty((4,), dtype=torch.int64)",
                                  "torch.empty_like(torch.ones(2, 3))",
                                  "torch.empty_like(torch.tensor([1, 2]))"])
def test_empty_is_zeros_of_pytorchs_shape_and_dtype(text):
    torch = torch_or_skip()
    for ours, theirs in ways(torch, text):
        ours = ours.value
        assert ours.shape == tuple(theirs.shape) and ours.dtype == theirs.numpy().dtype
        assert not ours.any()


ERRORS = [
    "torch.ones(-1)", "torch.ones(2, -3)", "torch.ones(True)",
    "torch.ones(2, 3.5)", "torch.ones(2, foo=1)", "torch.zeros(size=2)", "torch.ones()",
    "torch.ones('a')", "torch.full(2, 3)", "torch.full((2,))", "torch.full([2, 2], 7, requires_grad=True)",
    "torch.ones(2, dtype=torch.int64, requires_grad=True)", "torch.ones(2, dtype=3)",
    "torch.ones(2, requires_grad=1)", "torch.ones([2.5])", "torch.ones(size=[2.5])",
    "torch.full([2.5], 1)", "torch.full(size=(2.5,), fill_value=1)",
    "torch.eye(-1)", "torch.eye(2, -1)", "torch.eye(2.5)", "torch.arange(5, 1)",
    "torch.arange(1, 5, -1)", "torch.arange(0, 1, 0)", "torch.arange(0, inf)",
    "torch.arange(3, requires_grad=True)", "torch.arange(0, 5, dtype=torch.bool)",
    "torch.linspace(0, 1, -1)", "torch.linspace(0, 1, 3, dtype=torch.bool)",
    "torch.rand(2, dtype=torch.int64)", "torch.randn(2, dtype=torch.int64)",
    "torch.rand(2, dtype=torch.bool)", "torch.rand(-1)", "torch.randint(10, 3, (2,))",
    "torch.randint(5, 5, (2,))", "torch.randint(2.5, (2,))",
    "torch.randint(0, 10, (2,), requires_grad=True)", "torch.ones_like(3)",
    "torch.rand_like(torch.tensor([1, 2]))", "torch.randn_like(torch.tensor([1, 2]))",
    "torch.manual_seed(2**64)", "torch.manual_seed('a')", "torch.randperm(-1)",
    "torch.randperm(2.5)", "torch.randint(0, 2**70, (2,))", "torch.randint(0, 2**63, (2,))",
    "torch.arange(0, 1e308, 1e-308)", "torch.arange(-1e308, 1e308, 1e307)",
    "torch.randperm(3, requires_grad=True)",
]


@pytest.mark.parametrize("text", ERRORS)
def test_errors_in_pytorchs_words(text):
    torch = torch_or_skip()
    with pytest.raises(Exception) as theirs:
        torch_eval(torch, text)
    want = str(theirs.value).splitlines()[0]
    if "tensor([1, 2])" not in text:
        with pytest.raises(DdxError) as ours:
            ddx_eval(text)
        assert ours.value.message == want
    assert session_run(text) == ["error: " + want]


def test_whole_numbers_from_arithmetic_are_sizes():
    """ddx's arithmetic on numbers gives floats (2*3 is 6.0): a whole one is an int, as
    Python's 2*3 is for PyTorch."""
    torch = torch_or_skip()
    assert ddx_eval("ones(2*3)").value.shape == (6,)
    assert ddx_eval("eye(2^2)").value.shape == (4, 4)
    torch.manual_seed(0)
    want = torch.randint(0, 16, (3,)).numpy()
    assert ddx_eval("manual_seed(0); randint(0, 2^4, (3,))").value.tobytes() == want.tobytes()


def test_errors_exit_codes_in_the_one_liner(run):
    code, out, err = run("randint(10, 3, (2,))")
    assert code == 1
    assert err.splitlines()[0] == ("error: random_ expects 'from' to be less than 'to', but got "
                                   "from=10 >= to=3")
    assert "Traceback" not in err


def test_one_liner_with_creation_and_gradients(run_json):
    code, doc, _ = run_json("sum(x*arange(3))", "x=[1,2,3]")
    assert code == 0
    assert doc["value"] == 8.0 and doc["gradients"] == {"x": [0.0, 1.0, 2.0]}
    code, doc, _ = run_json("w = ones(3, requires_grad=True); sum(w*x)", "x=[1,2,3]")
    assert doc["gradients"] == {"x": [1.0, 1.0, 1.0], "w": [1.0, 2.0, 3.0]}


def test_one_liner_float32_streams(run_json):
    torch = torch_or_skip()
    torch.manual_seed(4)
    want = torch.randn(20, dtype=torch.float32)
    code, doc, _ = run_json("manual_seed(4); randn(20)", "--dtype", "float32")
    assert code == 0 and doc["dtype"] == "float32"
    assert np.array_equal(np.array(doc["value"], np.float32), want.numpy())


SCRIPT = """torch.manual_seed(11)
w = torch.empty(3, 4)
w.normal_(0, 0.02)
b = torch.zeros(17, dtype=torch.float32)
b.uniform_(-1, 1)
c = torch.ones(5).normal_(mean=2.0, std=3.0)
d = torch.ones(20).uniform_(to=2)
e = torch.randn(2, 2)
"""


def test_in_place_normal_and_uniform_in_a_script():
    torch = torch_or_skip()
    session = Session(lambda t: None, lambda t: None)
    assert session.run_script(SCRIPT) == 0
    with script_defaults(torch):
        want = in_place_reference(torch)
    for name, t in want.items():
        got = session.env[name].value
        assert got.dtype == t.numpy().dtype and got.tobytes() == t.numpy().tobytes(), name


def in_place_reference(torch) -> dict:
    torch.manual_seed(11)
    return {"w": torch.empty(3, 4).normal_(0, 0.02),
            "b": torch.zeros(17, dtype=torch.float32).uniform_(-1, 1),
            "c": torch.ones(5).normal_(mean=2.0, std=3.0), "d": torch.ones(20).uniform_(to=2),
            "e": torch.randn(2, 2)}


NEW = ["x.new_ones(2, 3)", "x.new_ones((2,))", "y.new_zeros(3)", "y.new_full((2,), 7)",
       "x.new_full((2,), 2.5)", "y.new_tensor([1, 2])", "x.new_tensor([1.5])", "y.new_empty(2)",
       "y.new_ones(2, requires_grad=True)", "y.new_ones(2, dtype=torch.int64)"]


def test_new_tensor_methods_take_the_tensors_dtype():
    torch = torch_or_skip()
    lines = ["x = torch.tensor([1, 2])", "y = torch.ones(2, dtype=torch.float32)"]
    session = Session(lambda t: None, lambda t: None)
    assert session.run_script("\n".join(lines + [f"r{k} = {c}" for k, c in enumerate(NEW)])) == 0
    scope = {"torch": torch, "x": torch.tensor([1, 2]), "y": torch.ones(2, dtype=torch.float32)}
    for k, text in enumerate(NEW):
        want, got = eval(text, scope), session.env[f"r{k}"]
        assert got.value.dtype == want.detach().numpy().dtype, text
        assert got.shape == tuple(want.shape), text
        assert got.requires_grad == want.requires_grad, text
        if "empty" not in text:
            assert got.value.tobytes() == want.detach().numpy().tobytes(), text


BOUNDS = ["z.uniform_(-1e308, 1e308)", "z.uniform_(0, inf)", "z.uniform_(-3e38, 3e38)",
          "d.uniform_(-1e308, 1e308)", "d.uniform_(-inf, 0)"]


def test_in_place_errors_in_a_script():
    torch = torch_or_skip()
    lines = session_run("x = torch.zeros(2, requires_grad=True)\nx.normal_()\n"
                        "y = torch.tensor([1, 2])\ny.uniform_()\nz = torch.ones(3)\n"
                        "z.normal_(0, -1)\nz.uniform_(2, 1)\n"
                        "d = torch.ones(3, dtype=torch.float64)\n" + "\n".join(BOUNDS))
    texts = []
    scope = {"torch": torch, "inf": math.inf, "z": torch.ones(3, dtype=torch.float32),
             "d": torch.ones(3, dtype=torch.float64)}
    for stmt in ["torch.zeros(2, requires_grad=True).normal_()", "torch.tensor([1, 2]).uniform_()",
                 "torch.ones(3).normal_(0, -1)", "torch.ones(3).uniform_(2, 1)", *BOUNDS]:
        with pytest.raises(Exception) as exc:
            eval(stmt, scope)
        texts.append("error: " + str(exc.value).splitlines()[0])
    assert [line for line in lines if line.startswith("error")] == texts


def test_in_place_fills_under_no_grad_and_inside_a_graph():
    torch = torch_or_skip()
    session = Session(lambda t: None, lambda t: None)
    assert session.run_script("torch.manual_seed(1)\nw = torch.zeros(3, requires_grad=True)\n"
                              "with torch.no_grad():\n    w.normal_()\n") == 0
    with script_defaults(torch):
        torch.manual_seed(1)
        want = torch.zeros(3).normal_().numpy()
    assert session.env["w"].value.tobytes() == want.tobytes()
    assert session.env["w"].requires_grad and session.env["w"].is_leaf
    lines = session_run("w = torch.zeros(3, requires_grad=True)\ny = w * 2\ny.uniform_()\n")
    assert lines == ["error: uniform_() of a tensor inside a graph is not supported by ddx "
                     "(PyTorch makes it a node whose gradient is zero)"]


def test_a_failed_statement_leaves_the_generator_as_it_was():
    torch = torch_or_skip()
    session = Session(lambda t: None, lambda t: None)
    session.run_script("torch.manual_seed(0)\na = torch.rand(2)\nb = torch.rand(2) + nope\n"
                       "c = torch.rand(2)\n")
    torch.manual_seed(0)
    torch.rand(2, dtype=torch.float32)
    want = torch.rand(2, dtype=torch.float32).numpy()
    assert session.env["c"].value.tobytes() == want.tobytes()
    assert "b" not in session.env


def test_a_program_that_draws_is_never_replayed():
    """The same text again draws new numbers (a recorded graph would freeze them); with its
    own manual_seed it gives PyTorch's numbers each time."""
    values = set()
    for _ in range(3):
        g = ddx.trace("sum(x*rand(3))", x=[1, 2, 3])
        g.backward()
        values.add(float(g.value))
    assert len(values) == 3
    torch = torch_or_skip()
    torch.manual_seed(0)
    want = float((torch.tensor([1.0, 2, 3]) * torch.rand(3)).sum())
    for _ in range(2):
        g = ddx.trace("manual_seed(0); sum(x*rand(3))", x=[1, 2, 3])
        g.backward()
        assert float(g.value) == want


def test_batch_jobs_draw_new_numbers(run):
    jobs = '"sum(x*rand(2))" x=[1,2]\n' * 3 + '"manual_seed(3); sum(x*rand(2))" x=[1,2]\n' * 2
    code, out, _ = run("batch", "-", input=jobs)
    import json

    values = [json.loads(line)["value"] for line in out.splitlines()]
    assert code == 0 and len(set(values[:3])) == 3 and values[3] == values[4]


def test_spellings_are_where_pytorch_has_them():
    torch = torch_or_skip()
    for name, spaces in calls_create.NAMED_SPACES.items():
        assert spaces == ("torch",)
        assert hasattr(torch, name), name
        assert not hasattr(torch.Tensor, name), name
    for name in calls_create.TENSOR_METHODS:
        assert hasattr(torch.Tensor, name) and not hasattr(torch, name), name


def test_manual_seed_returns_the_generator_in_the_repl():
    lines = session_run("torch.manual_seed(0)\ntorch.initial_seed()\n")
    assert lines[0].startswith("<torch._C.Generator object at 0x")
    assert lines[1] == "0"
