"""Hostile input: transactional REPL statements, worded errors for everything, linear parsing, limits."""

from __future__ import annotations

import numpy as np

from ddx.journal import Journal
from ddx.session import Session
from ddx.syntax import parse, tables
from ddx.tensor import Tensor

# --- parsing is linear in the input ---------------------------------------------------------

def _repetition_rules():
    tab = tables()
    return [(rule, cb) for rule, cb in zip(tab.data_rules, tab.rules)
            if rule[0].startswith("__") and tuple(rule[2][0]) == (0, True)]


def test_repetitions_grow_their_list_in_place():
    # __items_star: __items_star COMMA expr (and the same for args, statements, subscripts):
    # each step appends to the list it was given; a copy per step made n items cost n^2.
    rules = _repetition_rules()
    assert sorted(rule[0].rsplit("_star", 1)[0] for rule, _ in rules) == [
        "__args", "__items", "__simple_stmts", "__start", "__subscripts"]
    for rule, (size, build, _origin) in rules:
        so_far = ["a", "b"]
        more = [("COMMA", ",", 0, 1), "c"][3 - size:]
        grown = build(so_far, *more)
        assert grown is so_far
        assert grown == ["a", "b", *more], rule


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


# --- a statement completes or changes nothing -------------------------------------------------

def session_run(text: str) -> list[str]:
    """Run a script; stdout lines, and each error's first line in its place."""
    lines: list[str] = []
    session = Session(lines.append, lambda t: lines.append(t.splitlines()[0])
                      if t.startswith("error") else None)
    session.run_script(text)
    return lines


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
    assert out == ["error: '+' needs numbers or tensors, got NoneType on the left", "None",
                   "tensor(3.)"]


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
                   "error: unknown name 'nope'", "None", "tensor([2., 2.])"]


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
    assert out == ["error: assigned grad has data of a different size", "None",
                   "error: assigned grad has data of a different type",
                   "error: assigned grad expected to be a Tensor or None but got grad of type float",
                   "error: can't assign Variable as its own grad", "tensor([5., 6.])", "None"]


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
