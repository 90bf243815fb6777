"""Hostile input: transactional REPL statements, worded errors for everything, linear parsing, limits."""

from __future__ import annotations

from ddx.syntax import parse, tables

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
