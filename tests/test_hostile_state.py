"""Hostile input: transactional REPL statements, worded errors for everything, linear parsing, limits."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import session_run

from ddx import limits
from ddx.app.session import Session, chunks
from ddx.graph.journal import Journal
from ddx.graph.tensor import Tensor
from ddx.lang.parser import tables
from ddx.lang.syntax import parse

# --- parsing is linear in the input ---------------------------------------------------------

def _repetition_rules():
    tab = tables()
    return [(rule, cb) for rule, cb in zip(tab.data_rules, tab.rules)
            if rule[0].startswith("__") and tuple(rule[2][0]) == (0, True)]


def test_repetitions_grow_their_list_in_place():
    # __items_star: __items_star COMMA expr (and the same for args, statements, subscripts):
    # each step appends to the list it was given; a copy per step made n items cost n^2.
    rules = _repetition_rules()
    names = {rule[0].rsplit("_star", 1)[0].rsplit("_plus", 1)[0] for rule, _ in rules}
    # (items' `(COMMA expr)*` is testlist's `(COMMA expr)+`: one shared rule)
    assert {"__args", "__simple_stmts", "__start", "__subscripts", "__testlist"} <= names
    for rule, (size, build, _origin) in rules:
        so_far = ["a", "b"]
        more = [("COMMA", ",", 0, 1), "c", ("COLON", ":", 0, 1), "d"][:size - 1]
        grown = build(so_far, *more)
        assert grown is so_far
        kept = [more[i - 1] for i, _ in rule[2][1:]]  # (the children the rule keeps)
        assert grown == ["a", "b", *kept], rule


def test_a_hundred_thousand_items_parse():
    n = 100_000
    vec = parse("[" + ",".join(["1"] * n) + "]", cache=False).stmts[0].value
    assert vec.kind == "vec" and len(vec.kids) == n
    assert vec.kids[-1].start == 2 * n - 1
    call = parse("f(" + ",".join(["2"] * n) + ")", cache=False).stmts[0].value
    assert call.kind == "call" and len(call.kids) == n
    program = parse(";".join(f"x{i} = {i}" for i in range(n)), cache=False)
    assert len(program.stmts) == n
    assert program.stmts[-1].target.value == f"x{n - 1}"
    assert program.stmts[-1].value.value == (n - 1, True)


def test_blank_lines_inside_a_block_are_skipped_in_one_step():
    script = "with no_grad:\n    x = 1" + "\n" * 20_000 + "    y = 2\nz = 3\n\n\nw = 4\n"
    assert list(chunks(script)) == [(0, "with no_grad:\n    x = 1" + "\n" * 20_000 + "    y = 2"),
                                    (20_002, "z = 3"), (20_005, "w = 4")]


# --- a statement completes or changes nothing -------------------------------------------------

def test_a_leaf_never_shares_memory_with_a_cached_literal():
    out = session_run("x = 2.0\nwith no_grad: x.zero_()\nx\nx = 2.0\nx\ny = 2.0\ny")
    assert out == ["tensor(0., requires_grad=True)", "tensor(2., requires_grad=True)",
                   "tensor(2., requires_grad=True)"]


def test_a_number_has_no_settable_attributes():
    assert session_run("(2.0).requires_grad = true\nx = 2.0\nx.requires_grad\n(2.0).grad = None") \
        == ["error: cannot set .requires_grad on a number", "True",
            "error: cannot set .grad on a number"]


def test_a_failing_statement_after_backward_keeps_no_grad_and_frees_nothing():
    out = session_run("b = tensor(2.0, requires_grad=true); s = b*3; s.backward() + 1\n"
                      "b.grad\ns.backward()\nb.grad")
    assert out == ["error: '+' needs numbers or tensors, got NoneType on the left",
                   "tensor(3.)"]  # (b.grad is None: a bare None prints nothing)


def test_a_failing_with_block_undoes_its_earlier_statements():
    script = ("x = tensor([1., 2.])\nwith no_grad:\n    y = 5.0\n    x.zero_()\n    z = x + [1, 2, 3]\n"
              "x\ny")
    assert session_run(script) == [
        "error: The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
        "dimension 0", "tensor([1., 2.])", "error: unknown name 'y'"]


def test_a_failing_statement_keeps_the_old_binding_and_flags():
    out = session_run("w = tensor([1., 2.], requires_grad=true)\nw = w + nope\nw\n"
                      "w.requires_grad_(false) + nope\nw.requires_grad\n"
                      "y = w * 2\ny.retain_grad() + nope\nsum(y).backward()\ny.grad\nw.grad")
    assert out == ["error: unknown name 'nope'", "tensor([1., 2.], requires_grad=True)",
                   "error: unknown name 'nope'", "True",
                   "error: unknown name 'nope'", "tensor([2., 2.])"]  # (y.grad: None)


def test_gradients_zeroed_in_a_failing_statement_come_back():
    out = session_run("x = tensor([1., 2.], requires_grad=true)\nsum(x*x).backward()\n"
                      "x.grad.zero_() + nope\nx.grad\nzero_grad() + 1\nx.grad\n"
                      "with no_grad:\n    x.grad.zero_()\n    x.grad = None\n    x + nope\nx.grad")
    assert out == ["error: unknown name 'nope'", "tensor([2., 4.])",
                   "error: '+' needs numbers or tensors, got NoneType on the left",
                   "tensor([2., 4.])", "error: unknown name 'nope'", "tensor([2., 4.])"]


def test_grad_assignment_checks_type_and_size_as_pytorch():
    out = session_run("x = tensor([1., 2.], requires_grad=true)\nx.grad = tensor([1., 2., 3.])\n"
                      "x.grad\nx.grad = tensor([1, 2])\nx.grad = 2.0\nx.grad = x\n"
                      "x.grad = tensor([5., 6.])\nx.grad\nx.grad = None\nx.grad")
    assert out == ["error: assigned grad has data of a different size",
                   "error: assigned grad has data of a different type",
                   "error: assigned grad expected to be a Tensor or None but got grad of type float",
                   "error: can't assign Variable as its own grad", "tensor([5., 6.])"]


def test_a_grad_assigned_is_a_copy():
    assert session_run("x = tensor([1., 2.], requires_grad=true)\ng = tensor([5., 6.])\n"
                       "x.grad = g\ng.zero_()\nx.grad") == ["tensor([0., 0.])", "tensor([5., 6.])"]


def test_the_undo_log_restores_in_reverse_order():
    journal = Journal()
    env = {"a": 1}
    t = Tensor(np.array([1.0, 2.0]))
    journal.bind(env, "a", 2)
    journal.bind(env, "b", 3)
    journal.bind(env, "a", 4)
    journal.set(t, "grad", np.array([9.0, 9.0]))
    journal.overwrite(t.value)
    t.value[...] = 0
    assert env == {"a": 4, "b": 3}
    journal.rollback()
    assert env == {"a": 1}
    assert t.grad is None and t.value.tolist() == [1.0, 2.0]
    assert journal.undo == []


# --- every error is worded, and a script goes on ----------------------------------------------

def test_every_error_is_reported_and_the_script_goes_on(run):
    script = ("zeros(-1)\nones(1e300)\nones(10^10)\nk = tensor([1, 2])\nk ^ -1\n"
              "tensor(2.0).size(0)\ntensor([1., 2.]).size(-3)\nzeros(2, 3).size(1)\n"
              + "tensor(" + "[" * 65 + "1" + "]" * 65 + ")\nk\n")
    code, out, err = run("run", "-", input=script)
    assert code == 1
    assert out == "3\ntensor([1, 2])\n"  # (x.size(1) is a Python int, as in PyTorch)
    assert [line for line in err.splitlines() if line.startswith("error")] == [
        "error: Trying to create tensor with negative dimension -1: [-1]",
        "error: ones(): 1e+300 elements, over the limit of 10,000,000 (DDX_MAX_ELEMENTS)",
        "error: ones(): 10,000,000,000 elements, over the limit of 10,000,000 (DDX_MAX_ELEMENTS)",
        "error: Integers to negative integer powers are not allowed.",
        "error: Dimension specified as 0 but tensor has no dimensions",
        "error: Dimension out of range (expected to be in range of [-1, 0], but got -3)",
        "error: a literal nests at most 64 brackets deep (a tensor has at most 64 dimensions)"]
    assert "internal error" not in err


def test_bail_stops_at_the_first_error_of_any_kind(run):
    code, out, err = run("run", "--bail", "-", input="1 + 1\nzeros(-1)\n2 + 2\n")
    assert (code, out) == (1, "2\n")  # (1 + 1 of Python ints is 2)
    assert err.splitlines()[0] == "error: Trying to create tensor with negative dimension -1: [-1]"


def test_a_foreign_exception_is_worded_and_undone():
    lines: list[str] = []
    session = Session(lines.append, lines.append)
    session.run("x = 2.0")
    session.evaluator = _exploding(session.evaluator)
    assert session.run("x = 3.0") is False
    assert lines[-1].splitlines()[0] == "error: internal error: KeyError: 'boom'"
    del session.evaluator
    session.run("x")
    assert lines[-1] == "tensor(2., requires_grad=True)"


def _exploding(make):
    def evaluator(program):
        ev = make(program)
        real = ev.make_leaf

        def make_leaf(*args, **kwargs):
            real(*args, **kwargs)
            raise KeyError("boom")
        ev.make_leaf = make_leaf
        return ev
    return evaluator


# --- limits -----------------------------------------------------------------------------------

@pytest.fixture
def limit_env(monkeypatch):
    def set_limit(name: str, value: str) -> None:
        monkeypatch.setenv(name, value)
        limits.reset()
    yield set_limit
    monkeypatch.undo()
    limits.reset()


def test_constructor_and_literal_limits_can_be_raised(limit_env):
    limit_env("DDX_MAX_ELEMENTS", "6")
    assert session_run("ones(2, 3)\nones(7)\nzeros(0, 7)") == [
        "tensor([[1., 1., 1.],\n        [1., 1., 1.]])",
        "error: ones(): 7 elements, over the limit of 6 (DDX_MAX_ELEMENTS)",
        "error: zeros(): 7 elements, over the limit of 6 (DDX_MAX_ELEMENTS)"]
    limit_env("DDX_MAX_ELEMENTS", "100_000")
    big = "[" + ",".join(["1"] * 100_001) + "]"
    assert session_run(f"x = {big}\nsum([1, 2])") == [
        "error: a [..] literal: 100,001 elements, over the limit of 100,000 (DDX_MAX_ELEMENTS)",
        "3"]  # (Python's sum of a list)


def test_jacobian_and_hessian_refuse_large_results_before_computing(run, limit_env):
    x = "x=[" + ",".join(["1"] * 1001) + "]"
    code, out, err = run("sum(x^2)", x, "--hessian")
    assert code == 1
    assert err.splitlines() == [
        "error: --hessian: 1,002,001 entries, over the limit of 1,000,000 (DDX_MAX_MATRIX)",
        "hint: set the environment variable DDX_MAX_MATRIX to raise the limit "
        "(e.g. DDX_MAX_MATRIX=1002001)"]
    limit_env("DDX_MAX_MATRIX", "3")
    code, out, err = run("x^2", "x=[1,2]", "--jacobian")
    assert (code, err.splitlines()[0]) == (
        1, "error: --jacobian: 4 entries, over the limit of 3 (DDX_MAX_MATRIX)")
    limit_env("DDX_MAX_MATRIX", "4")
    code, out, err = run("x^2", "x=[1,2]", "--jacobian", "--json")
    assert code == 0
    assert json.loads(out)["jacobian"] == {"x": [[2.0, 0.0], [0.0, 4.0]]}


def test_a_bad_limit_value_is_a_usage_error(run, limit_env):
    limit_env("DDX_MAX_MATRIX", "lots")
    code, out, err = run("x^2", "x=[1,2]", "--jacobian")
    assert (code, err.splitlines()[0]) == (2, "error: DDX_MAX_MATRIX='lots' is not a whole number")


# --- JSON batch jobs --------------------------------------------------------------------------

@pytest.mark.parametrize(("job", "message"), [
    ('{"expr": "x", "bindings": {"x": {"a": 1}}}',
     '"bindings": x must be a number, a list of numbers or an expression string, not an object'),
    ('{"expr": "x", "bindings": {"x": [1, [2, 3]]}}',
     '"bindings": x is a ragged list: it mixes lists and non-lists'),
    ('{"expr": "x", "bindings": {"x": [[1], [2, 3]]}}',
     '"bindings": x is a ragged list: the items at depth 2 are not all lists of one length'),
    ('{"expr": "x", "bindings": {"x": [1, null]}}',
     '"bindings": x holds null: a list holds numbers only'),
    ('{"expr": "x", "bindings": {"x": 1}, "wrt": 5}',
     '"wrt" must be a string ("a,b") or a list of names, not a number'),
    ('{"expr": "x", "bindings": {"x": 1}, "no_grad": ["x", 5]}',
     '"no_grad" must list names (strings), not a number'),
    ('{"expr": "x", "bindings": {"x": 1}, "forward": "yes"}',
     '"forward" must be true or false, not a string'),
    ('{"expr": "x", "bindings": {"x": 1}, "dtype": 64}',
     '"dtype" must be a string ("float64" or "float32"), not a number'),
    ('{"expr": "x", "bindings": {"x": ' + "[" * 65 + "]" * 65 + "}}",
     '"bindings": x nests more than 64 lists deep (a tensor has at most 64 dimensions)'),
    ('{"expr": "x", "bindings": {"x": ' + "[" * 100_000 + "]" * 100_000 + "}}",
     "bad JSON job: nested too deeply"),
])
def test_bad_json_jobs_are_usage_errors(run, job, message):
    code, out, err = run("batch", "-", input=job + '\n{"expr": "sum(x*2)", "bindings": {"x": [1, 2]}}\n')
    first, second = (json.loads(line) for line in out.splitlines())
    assert code == 1
    assert first == {"line": 1, "error": {"type": "UsageError", "message": message,
                                          "line": None, "column": None}}
    assert (second["line"], second["value"], second["gradients"]) == (2, 6.0, {"x": [2.0, 2.0]})


# --- the state after a failing statement is the state before it ------------------------------

MUTATIONS = ["sum(y).backward()", "sum(y).backward(retain_graph=true)", "x.grad.zero_()",
             "zero_grad()", "x.requires_grad_(false)", "y.retain_grad()", "x.data.zero_()",
             "k.zero_()", "b.detach().zero_()"]


def _state(session: Session) -> dict:
    """Everything a statement could change, as plain values."""
    from ddx.graph.record import ancestors

    out: dict = {}
    for name, value in session.env.items():
        out[name] = id(value)
        for t in ancestors(value):
            out[id(t)] = (t.value.tolist(), str(t.value.dtype), t.requires_grad, t.retains_grad,
                          t.name, None if t.grad is None else np.asarray(t.grad).tolist(),
                          None if t.grad_fn is None else t.grad_fn.freed)
    return out


@pytest.mark.parametrize("mutation", MUTATIONS)
@pytest.mark.parametrize("failure", ["nope", "(ones(2) @ ones(3))"])
def test_a_mutation_then_a_failure_changes_nothing(mutation, failure):
    session = Session(lambda t: None, lambda t: None)
    assert session.run_script("x = tensor([1., 2.], requires_grad=true)\ny = x * 2\n"
                              "sum(y).backward(retain_graph=true)\nk = tensor([1, 2])\n"
                              "b = 2.0\n") == 0
    before = _state(session)
    assert session.run(f"{mutation} + {failure}") is False
    assert _state(session) == before
    block = f"with no_grad:\n    {mutation}\n    x = 5.0\n    {mutation}\n    y + {failure}"
    assert session.run(block) is False
    assert _state(session) == before
    assert session.run(mutation) is True  # and the same statement alone does change something
    assert _state(session) != before


def test_a_broadcast_that_would_make_too_many_elements_is_refused(run, monkeypatch):
    from ddx import limits

    monkeypatch.setitem(limits._VALUES, "DDX_MAX_ELEMENTS", 1000)
    out = session_run("a = ones(100)\nb = ones(100, 1)\nc = a + b\nprint(1)\nd = a + a\nd.shape")
    assert out == ["error: '+' of shapes [100] and [100, 1]: 10,000 elements, over the limit of "
                   "1,000 (DDX_MAX_ELEMENTS)", "1", "torch.Size([100])"]
    code, _, err = run("x + y", "x=" + str([1.0] * 100), "y=" + str([[1.0]] * 100), "--json")
    assert code == 1 and "10,000 elements, over the limit of 1,000 (DDX_MAX_ELEMENTS)" in err


@pytest.mark.parametrize("value, message", [
    (10**400, "binding x: the number is too large for a float (at most about 1.8e308)"),
    ([1, [2]], "binding x: a ragged list (its items have different shapes)"),
    ({"a": 1}, "binding x: expected a number, a list of numbers or an array, not dict"),
])
def test_library_bindings_that_are_not_numbers_are_worded(value, message):
    import ddx
    from ddx.errors import DdxUsageError

    with pytest.raises(DdxUsageError) as err:
        ddx.trace("x * 2", x=value)
    assert err.value.message == message
