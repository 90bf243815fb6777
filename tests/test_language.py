"""The language of SPEC §2: literals, precedence, functions, indexing, statements, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ddx
from ddx.errors import DdxError


def value(text, **b):
    return ddx.trace(text, **b).value.tolist()


@pytest.mark.parametrize("text, expected", [
    ("-x^2", -9.0),
    ("2^-1", 0.5),
    ("x^2^2", 81.0),
    ("2**3**2", 512.0),
    ("-2^2", -4.0),
    ("(-2)^2", 4.0),
    ("1 - 2 - 3", -4.0),
    ("8 / 4 / 2", 1.0),
    ("2 + 3 * x", 11.0),
    ("x * -1", -3.0),
    ("--x", 3.0),
    ("+x", 3.0),
    (".5 + 1e-3 + 2.", 2.501),
    ("pi", math.pi),
    ("e", math.e),
])
def test_precedence_and_numbers(text, expected):
    assert value(text, x=3) == pytest.approx(expected, rel=1e-15)


def test_statements_comments_and_newlines():
    text = "# model\ny = w*x   # linear\nz = y + b; z^2"
    assert value(text, w=3, x=2, b=1) == 49.0


def test_assignment_without_variables_makes_a_leaf():
    g = ddx.trace("x = [1, 2]; w = 3; sum(w * x)")
    g.backward()
    assert set(g.grads) == {"x", "w"}
    assert g.grads["x"].tolist() == [3, 3] and float(g.grads["w"]) == 3


def test_vectors_matrices_and_products():
    assert value("A @ v", A="[[1, 2], [3, 4]]", v="[1, 1]") == [3, 7]
    assert value("v @ A", A="[[1, 2], [3, 4]]", v="[1, 1]") == [4, 6]
    assert value("dot(v, v)", v="[1, 2, 3]") == 14
    assert value("transpose(A)", A="[[1, 2], [3, 4]]") == [[1, 3], [2, 4]]
    assert value("[x, 2*x]", x=2) == [2, 4]


def test_indexing_and_slicing():
    A = "[[1, 2, 3], [4, 5, 6]]"
    assert value("A[0, :]", A=A) == [1, 2, 3]
    assert value("A[:, 1]", A=A) == [2, 5]
    assert value("A[1, 1:]", A=A) == [5, 6]
    assert value("A[-1]", A=A) == [4, 5, 6]
    assert value("A[0][::2]", A=A) == [1, 3]


@pytest.mark.parametrize("fn", ["sum", "mean", "max", "min", "norm", "logsumexp"])
def test_reductions_with_and_without_dim(fn):
    A = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
    ref = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min,
           "norm": lambda a, axis=None: np.sqrt(np.sum(a * a, axis=axis)),
           "logsumexp": lambda a, axis=None: np.log(np.sum(np.exp(a), axis=axis))}[fn]
    assert value(f"{fn}(A)", A=A.tolist()) == pytest.approx(ref(A), rel=1e-14)
    pick = "[0]" if fn in ("max", "min") else ""  # (with a dim: PyTorch's (values, indices))
    assert value(f"{fn}(A, dim=0){pick}", A=A.tolist()) == pytest.approx(ref(A, axis=0),
                                                                         rel=1e-14)
    assert value(f"{fn}(A, dim=1){pick}", A=A.tolist()) == pytest.approx(ref(A, axis=1),
                                                                         rel=1e-14)


@pytest.mark.parametrize("text, message", [
    ("sine(x)", "unknown function 'sine'; did you mean 'sin'?"),
    ("x + y", "unknown name 'y'"),
    ("xx + 1", "unknown name 'xx'; did you mean 'x'?"),
    ("sin(x, x)", "sin() takes 1 argument (2 given)"),
    ("pow(x)", "pow() takes 2 arguments (1 given)"),
    ("v + u", "The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
              "dimension 0"),
    ("[[1, 2], [3]]", "ragged literal: items have shapes [1] and [2]"),
    ("v[5]", "index 5 is out of bounds for dimension 0 with size 2"),
    ("sum(v, dim=3)", "Dimension out of range (expected to be in range of [-1, 0], but got 3)"),
    ("M @ u", "size mismatch, got input (2), mat (2x2), vec (3)"),
])
def test_evaluation_errors_are_precise(text, message):
    with pytest.raises(DdxError) as info:
        ddx.trace(text, x=1, v="[1, 2]", u="[1, 2, 3]", M="[[1, 2], [3, 4]]")
    assert info.value.message == message
    assert info.value.exit_code == 1


@pytest.mark.parametrize("text, message, column", [
    ("(w*x+b", "missing ')'", 7),
    ("w*", "missing operand after '*'", 3),
    ("w x", "unexpected 'x': missing an operator before it?", 3),
    ("x)", "unmatched ')'", 2),
    ("[1, 2", "missing ']'", 6),
    ("x $ 2", "unexpected character '$'", 3),
    ("*x", "missing operand before '*'", 1),
])
def test_syntax_errors_point_at_the_column(text, message, column):
    with pytest.raises(DdxError) as info:
        ddx.trace(text, w=1, x=1, b=1)
    assert info.value.message == message
    assert info.value.location() == (1, column)
    assert info.value.exit_code == 2


def test_a_bracket_left_open_before_the_next_line_is_named_as_python_names_it():
    # (the next line's first word is read on inside the list: not "missing an operator")
    with pytest.raises(DdxError) as info:
        ddx.trace("y = [1, 2\nx * y", x=1)
    assert info.value.message == "'[' was never closed"
    assert info.value.location() == (1, 5)
    assert info.value.exit_code == 2


def test_deep_sum_and_nested_parentheses_do_not_recurse():
    n = 100_000
    g = ddx.trace("+".join(["x"] * n), x=1)
    g.backward()
    assert float(g.value) == n and float(g.grads["x"]) == n
    depth = 10_000
    g = ddx.trace("(" * depth + "x" + ")" * depth + "^2", x=3)
    g.backward()
    assert float(g.grads["x"]) == 6
    g = ddx.trace("sin(" * 3000 + "x" + ")" * 3000, x=0.5)
    g.backward()
    assert np.isfinite(g.grads["x"])


def test_parser_tables_are_built_once_then_read_from_the_cache(tmp_path, monkeypatch):
    import os

    from ddx.lang import parser, syntax, tablegen

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(parser, "_TABLES", None)
    built = parser.tables()  # no cache yet: Lark analyses the grammar, the tables are written
    files = os.listdir(tmp_path / "ddx")
    assert len(files) == 1 and files[0].startswith("tables-") and files[0].endswith(".marshal")
    monkeypatch.setattr(parser, "_TABLES", None)
    monkeypatch.setattr(tablegen, "build_tables", lambda grammar: 1 / 0)  # must not be needed
    read = parser.tables()
    assert read.action == built.action and read.goto == built.goto
    program = syntax.parse("y = (w*x + b)^2; y", cache=False)
    assert [s.kind for s in program.stmts] == ["assign", "expr"]
    assert program.stmts[0].value.kind == "bin" and program.stmts[0].value.value == "^"


@pytest.fixture(scope="module")
def plain_scan():
    """The scanner as Lark's order defines it: every blank pattern, then every terminal."""
    import re

    from ddx.lang import parser, tablegen

    data = tablegen.build_tables(parser.grammar_text())
    ignore = set(data["ignore"])
    blanks = [rx for name, rx in data["terminals"] if name in ignore and name != "COMMENT"]
    terms = [rx for name, rx in data["terminals"] if name not in ignore or name == "COMMENT"]
    return re.compile(f"((?:{'|'.join(blanks)})*)(" + "|".join(f"(?:{rx})" for rx in terms)
                      + r"|[\s\S])")


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=" \t\f\r\n\\#.eE+-*/@^:,=()[];_xw019é٣\u00a0\u2003'\"%", max_size=40))
def test_the_scanner_finds_what_lark_order_finds(plain_scan, text):
    """scan_pattern reorders the terminals and rewrites the blanks: the same (blanks, token)
    pairs everywhere, continuations, comments, non-ASCII digits and bad characters included."""
    from ddx.lang import parser

    assert parser.tables().scan.findall(text) == plain_scan.findall(text)


def test_the_scanner_tries_cheap_terminals_first_where_no_other_could_match():
    from ddx.lang import tablegen

    terms = [("NUMBER", r"\d+(?:\.\d*)?|\.\d+"), ("NAME", "[a-z][a-z0-9]*"), ("POW", r"\*\*"),
             ("MUL", r"\*|/"), ("DOT", r"\."), ("LPAR", r"\(")]
    order = [terms[i][0] for i in tablegen.scan_order(terms)]
    # single characters first, then what starts with a literal or a set, the fewest first
    # characters first; '*' keeps POW before MUL, '.' NUMBER before DOT (".5" is a number)
    assert order == ["LPAR", "POW", "MUL", "NAME", "NUMBER", "DOT"]
    assert tablegen.scan_pattern([r"[ \t]+", r"\\\n"], terms) == (
        r"([ \t]*(?:(?:\\\n)[ \t]*)*)([\(]|(?:\*\*)|[\*/]|(?:[a-z][a-z0-9]*)|"
        r"(?:\d+(?:\.\d*)?|\.\d+)|[\.]|[\s\S])")
    assert tablegen.one_char(r"\*|/") == frozenset("*/") and tablegen.one_char(r"\*\*") is None
    assert tablegen.one_char(r"\d") is None  # (non-ASCII digits too)
    assert tablegen.first_chars(r"(?:\r?\n|#[^\n]*)+") == (frozenset(map(ord, "\r\n#")), False)
    assert tablegen.first_chars("a*b") == (frozenset(map(ord, "ab")), False)
    assert tablegen.first_chars("x?") == (frozenset(range(128)), True)  # may match nothing
    assert tablegen.first_chars("[^a]") == (frozenset(range(128)), True)
    assert tablegen.first_chars("(?i)a") == (frozenset(range(128)), True)  # 'A' too
    assert tablegen.one_char("(?i)a") is None and tablegen.one_char("(?i:a)") is None


def test_parser_tables_work_without_a_writable_cache(tmp_path, monkeypatch):
    from ddx.lang import parser, syntax

    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    monkeypatch.setattr(parser, "_TABLES", None)
    assert syntax.parse("2 * x", cache=False).stmts[0].value.value == "*"
