"""The calculator's input forms (issue 16): each rewritten into ddx's language and giving the
same numbers as the explicit form; each ambiguous form refused with a message naming both
readings and a caret at the user's own text; the one-liner's first tries of a newcomer."""

from __future__ import annotations

import json

import numpy as np
import pytest
from exprgen import exprs, to_text
from hypothesis import given, settings
from hypothesis import strategies as st

import ddx
from ddx.errors import DdxError
from ddx.lang.calculator import rewrite

FORMS = [  # (what a user types, ddx's language)
    ("2x", "2*x"), ("2 x", "2*x"), ("2(x+1)", "2*(x+1)"), ("(a+b)(a-b)", "(a+b)*(a-b)"),
    ("3x^2", "3*x^2"), ("x y", "x*y"), ("(x+1)x", "(x+1)*x"), ("2sin(x)", "2*sin(x)"),
    ("sin x", "sin(x)"), ("ln 2", "ln(2)"), ("sin x + 1", "sin(x) + 1"),
    ("sin x cos x", "sin(x)*cos(x)"), ("2 sin x", "2*sin(x)"), ("sin²x", "sin(x)^2"),
    ("sin^2(x+1)", "sin(x+1)^2"), ("cos³ x", "cos(x)^3"),
    ("x × y", "x * y"), ("x·y", "x*y"), ("x − y", "x - y"), ("x ÷ 2", "x / 2"),
    ("x²", "x^2"), ("x³ + y²", "x^3 + y^2"), ("(x+1)²", "(x+1)^2"), ("x⁻¹", "x^-1"),
    ("x¹⁰", "x^10"), ("2x²", "2*x^2"), ("√x", "sqrt(x)"), ("√(x+1)", "sqrt(x+1)"),
    ("2√x", "2*sqrt(x)"), ("π", "pi"), ("2πr", "2*pi*r"), ("θ^2", "theta^2"),
    ("sin θ", "sin(theta)"), ("α*β", "alpha*beta"), ("αβ", "alpha*beta"), ("λ", "lambda_"),
    ("x = 2; 3x", "x = 2; 3*x"), ("x  +  y # sum", "x  +  y # sum"),
    ("sum(x, dim=0)", "sum(x, dim=0)"), ("x.sum()", "x.sum()"), ("x[0]", "x[0]"),
    ("2e-3x", "2e-3*x"), ("(w*x+b)^2", "(w*x+b)^2"),
]


@pytest.mark.parametrize("typed,ddx_text", FORMS)
def test_forms_are_rewritten(typed, ddx_text):
    r = rewrite(typed)
    assert r.text == ddx_text
    assert not r.derivative


DERIVATIVES = [  # (typed, the expression, wrt)
    ("d/dx x^3", "x^3", [("x", 1)]), ("d/dx(x^3)", "(x^3)", [("x", 1)]),
    ("d/dθ sin θ", "sin(theta)", [("theta", 1)]), ("d/d x x^2", "x^2", [("x", 1)]),
    ("d²/dx² x^5", "x^5", [("x", 2)]), ("d^2/dx^2 x^5", "x^5", [("x", 2)]),
    ("∂/∂y x*y", "x*y", [("y", 1)]), ("∂²/∂x∂y x^2*y^2", "x^2*y^2", [("x", 1), ("y", 1)]),
    ("diff(x^3, x)", "x^3", [("x", 1)]), ("diff(x^5, x, 2)", "x^5", [("x", 2)]),
    ("diff(x^2*y^2, x, y)", "x^2*y^2", [("x", 1), ("y", 1)]),
    ("diff(2x, x)", "2*x", [("x", 1)]), ("grad(x*y)", "x*y", None),
]


@pytest.mark.parametrize("typed,expr,wrt", DERIVATIVES)
def test_derivative_forms(typed, expr, wrt):
    r = rewrite(typed)
    assert (r.text.strip(), r.wrt, r.derivative) == (expr, wrt, True)


AMBIGUOUS = [  # (typed, message, hint, the span the caret marks)
    ("1/2x", "'1/2x' is ambiguous",
     "write 1/(2*x) for a product below the line, or (1/2)*x", (0, 4)),
    ("x^2y", "'x^2y' is ambiguous", "write x^(2*y) for a power of the product, or x^2*y",
     (0, 4)),
    ("sin x^2", "'sin x^2' is ambiguous", "write sin(x^2) or sin(x)^2", (0, 7)),
    ("sin x²", "'sin x²' is ambiguous", "write sin(x^2) or sin(x)^2", (0, 6)),
    ("sin x y", "'sin x y' is ambiguous", "write sin(x*y) or sin(x)*y", (0, 7)),
    ("sin 2x", "'sin 2x' is ambiguous", "write sin(2*x) or sin(2)*x", (0, 6)),
    ("x 2", "a number right after 'x' is ambiguous",
     "write x*2 for a product, x^2 for a power, or x2 for one name", (0, 3)),
    ("2 3", "a number right after a number is ambiguous", "write 2*3 for a product", (0, 3)),
    ("sin^-1 x", "'sin^-1' is ambiguous",
     "write asin(x) for the inverse function, or 1/sin(x) for the reciprocal", (0, 6)),
    ("²", "a superscript with nothing before it", "write a power after its base: x², (x + 1)²",
     (0, 1)),
    ("√", "'√' needs an argument", "write sqrt(x), or sqrt x for a single name or number",
     (0, 1)),
    ("dy/dx", "'dy/dx' names no expression", "write d/dx EXPR, e.g. d/dx (y^2)", (0, 5)),
    ("d/dx", "'d/dx' needs an expression after it", "write d/dx (x^3), or diff(x^3, x)",
     (0, 4)),
    ("2*diff(x^2, x)", "diff(...) is a whole expression here",
     'write diff(...) alone, e.g. ddx "diff(x^3, x)", and use its formula in a larger '
     "expression", (2, 6)),
    ("diff(x^2, 2)", "diff's order comes after the variable", "e.g. diff(x^5, x, 2)", (10, 11)),
    ("diff(x^2, x, 11)", "a derivative's order is a whole number from 1 to 10, not 11",
     "e.g. diff(x^5, x, 2)", (13, 15)),
    ("diff(x^2, x+1)", "diff's arguments after the expression are names and orders",
     "e.g. diff(x^3, x), diff(x^5, x, 2), diff(x^2*y^2, x, y)", (10, 13)),
    ("grad(x, y)", "grad(EXPR) takes one expression: the gradient is with respect to every "
     "variable", "for one variable write diff(EXPR, x)", (6, 10)),
    ("d²/dx x", "the orders above and below the line differ (2 and 1)",
     "write d²/dx², or ∂²/∂x∂y", (0, 5)),
    ("x ∂ y", "'∂' only starts a derivative: ∂/∂x EXPR", "write ∂/∂x (x^2*y), or d/dx", (2, 3)),
]


@pytest.mark.parametrize("typed,message,hint,span", AMBIGUOUS)
def test_ambiguous_forms_name_both_readings(typed, message, hint, span):
    with pytest.raises(DdxError) as info:
        rewrite(typed)
    exc = info.value
    assert (exc.message, exc.hint, (exc.start, exc.end)) == (message, hint, span)
    assert exc.exit_code == 2


@pytest.mark.parametrize("typed,explicit", [
    ("2x + 3x^2", "2*x + 3*x^2"), ("(x+1)(x-1)", "(x+1)*(x-1)"), ("sin x · cos x", "sin(x)*cos(x)"),
    ("x² − 2x ÷ 4", "x^2 - 2*x/4"), ("√x + ln x", "sqrt(x) + log(x)"), ("2πx", "2*pi*x"),
])
def test_forms_give_the_explicit_forms_numbers(run, typed, explicit):
    code, out, err = run(typed, "x=0.7", "--json")
    assert code == 0, err
    mine = json.loads(out)
    theirs = json.loads(run(explicit, "x=0.7", "--json")[1])
    assert np.isclose(mine["value"], theirs["value"])
    assert np.isclose(mine["gradients"]["x"], theirs["gradients"]["x"])


def test_a_caret_points_at_the_users_text(run):
    code, out, err = run("sin θ + 2x + (x", "θ=1", "x=2")
    assert code == 2
    assert err.splitlines()[1:3] == ["  sin θ + 2x + (x", "                 ^"]
    code, out, err = run("1/2x", "x=1")
    assert code == 2 and err.splitlines()[:3] == ["error: '1/2x' is ambiguous", "  1/2x", "  ^^^^"]


def test_unicode_bindings(run):
    code, out, err = run("θ^2", "θ=−3", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["value"] == 9.0 and doc["gradients"] == {"theta": -6.0}


NEWCOMER = [  # (argv, exit code, what the output shows)
    (["x^3"], 0, "d/dx = 3*x^2"),
    (["d/dx x^3"], 0, "d/dx = 3*x^2"),
    (["diff(x^3, x)"], 0, "d/dx = 3*x^2"),
    (["2x", "x=1"], 0, "2"),
    (["sin x", "x=1"], 0, "0.540302"),
    (["ln(x)"], 0, "d/dx = 1/x"),
    (["x × 2 − π"], 0, "d/dx = 2"),
    (["x=−3"], 0, None),
    (["θ^2"], 0, "d/dtheta = 2*theta"),
    (["sin x^2"], 2, "error: 'sin x^2' is ambiguous"),
]


@pytest.mark.parametrize("argv,code,shows", NEWCOMER)
def test_a_newcomers_first_tries(run, argv, code, shows):
    got, out, err = run(*argv, "--no-color")
    assert got == code, (out, err)
    assert "Traceback" not in out + err
    if shows is not None:
        assert shows in out + err


def test_library_reads_the_forms_too():
    assert ddx.derivative("3x^2 + 2x", "x") == "6*x + 2"
    assert ddx.derivative("d/dθ sin θ") == "cos(theta)"
    with pytest.raises(DdxError, match="ambiguous"):
        ddx.derivative("1/2x", "x")


def test_a_call_of_an_unknown_function_hints_at_the_product(run):
    code, out, err = run("x(x+1)", "x=2")
    assert code == 1
    assert err.splitlines()[-1] == "hint: for a product write x*(...); ddx reads x(...) as a call"


@settings(max_examples=200, deadline=None)
@given(exprs, st.booleans())
def test_ddx_text_is_left_as_it_is(tree, parens):
    """Whatever ddx's language already reads means the same: the front end leaves it alone."""
    text = to_text(tree, parens)
    r = rewrite(text)
    assert r.text == text and not r.derivative
    assert r.where[:len(text)] == list(range(len(text)))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="xy2 .()+-*/^²√πθ×−sinlogd/,diff", max_size=24))
def test_any_text_is_rewritten_or_refused_in_words(text):
    try:
        r = rewrite(text)
    except DdxError as exc:
        assert exc.exit_code == 2 and exc.message and exc.source == text
        assert exc.start is None or 0 <= exc.start < max(len(text), 1)
        return
    assert r.text.isascii()
    assert len(r.where) == len(r.text) + 1
    assert all(0 <= w <= len(text) for w in r.where)
