"""Fuzzer (issue 18): valid, mutated and random inputs through the one-liner, `ddx run -` and
`ddx batch -`. Every input must give exit code 0, 1 or 2, no traceback, no "internal error", no raw
control character on stdout or stderr, one JSON object under --json, one batch output line per job
line in input order, and a failing REPL statement must change nothing.

The CI budget is small; DDX_FUZZ_EXAMPLES scales it (see README, "Two commands")."""

from __future__ import annotations

import json
import os
import re
import shlex

from exprgen import exprs, to_text
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SCALE = int(os.environ.get("DDX_FUZZ_EXAMPLES", "0"))


def budget(n: int):
    """``n`` examples in CI, DDX_FUZZ_EXAMPLES for a large run; reproducible unless it is large."""
    return settings(max_examples=SCALE or n, deadline=None, derandomize=not SCALE,
                    suppress_health_check=list(HealthCheck), database=None)


# ---------------------------------------------------------------------------------------- inputs

BINDINGS = ("a=1.5", "b=-0.5", "c=2")
# What an attacker or a careless paste puts in text: escapes, bidi controls, markup, odd Unicode.
NASTY = ["\x1b", "\x1b[31m", "\x1b]0;pwned\x07", "\x07", "\x08", "\r", "\x0b", "\x0c", "\x7f",
         "\x85", "\x9b", "\x9d", "\u202e", "\u202a", "\u2066", "\u2069", "\u200b", "\ufeff",
         "\u2028", "é", "λ", "𝑥", "ｘ", "[bold]", "[/]", "[x > 0]", "\\x1b", "\\", "'", '"', "#",
         "\n", "\t", " # \x1b]0;t\x07\n", "$", "%s", "{}", "\udcff"]
PUNCT = list("()[]+-*/^@,.=:;_ 0123456789abcxe") + ["**", "--", "1e308", "10^10", "nan", "inf"]
chars = st.one_of(st.sampled_from(NASTY), st.sampled_from(PUNCT),
                  st.characters(codec="utf-8", exclude_characters="\x00"))

FUNCS = ("sum", "mean", "log", "sqrt", "abs", "relu", "exp", "logsumexp", "max", "softmax")


def _wrap(children):
    """Forms beyond exprgen's: vectors, reductions, division, comments inside brackets."""
    return st.one_of(
        st.tuples(st.sampled_from(FUNCS), children).map(lambda t: f"{t[0]}({t[1]})"),
        st.lists(children, min_size=0, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.tuples(children, children).map(lambda t: f"({t[0]}) / ({t[1]})"),
        st.tuples(children, st.sampled_from(NASTY + ["note"]))
          .map(lambda t: f"({t[0]} # {t[1].replace(chr(10), '')}\n + 1)"),
        st.tuples(children, st.integers(-3, 3)).map(lambda t: f"({t[0]})^{t[1]}"),
    )


valid = st.one_of(exprs.map(lambda t: to_text(t, parens=False)),
                  st.recursive(exprs.map(lambda t: to_text(t, parens=True)), _wrap, max_leaves=4))


@st.composite
def mutated(draw, base=valid):
    """A valid text with a few characters inserted, deleted or replaced."""
    text = list(draw(base))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(("insert", "delete", "replace")))
        i = draw(st.integers(0, len(text)))
        if op == "insert":
            text.insert(i, draw(chars))
        elif text and i < len(text):
            if op == "delete":
                del text[i]
            else:
                text[i] = draw(chars)
    return "".join(text)


random_text = st.lists(chars, max_size=30).map("".join)
argv_text = st.one_of(valid, mutated(), random_text).map(lambda s: s.replace("\x00", ""))

# ------------------------------------------------------------------------------------- the checks

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x80-\x9f\u202a-\u202e\u2066-\u2069]")


def check_output(code: int, out: str, err: str, what) -> None:
    assert code in (0, 1, 2), (code, what, out, err)
    for name, stream in (("stdout", out), ("stderr", err)):
        assert "Traceback" not in stream, (name, what, stream)
        assert "internal error" not in stream.lower(), (name, what, stream)
        raw = CONTROL.search(stream)
        assert raw is None, (name, repr(raw.group()), what, stream)


def _strict(token):
    raise ValueError(f"not JSON: {token}")


def one_json_object(out: str, what, extra: frozenset = frozenset()) -> dict:
    doc = json.loads(out, parse_constant=_strict)  # raises on anything but one JSON value
    assert isinstance(doc, dict), (what, out)
    if "error" in doc:
        assert set(doc) - extra == {"error"} and isinstance(doc["error"], dict), (what, out)
        assert {"type", "message"} <= set(doc["error"]), (what, out)
    return doc


# ------------------------------------------------------------------------------------ one-liner

MODES = ((), ("--explain",), ("--hessian",), ("--check",), ("--jacobian",), ("--forward",),
         ("--symbolic",), ("--retain-grad",), ("--wrt", "a"))


@budget(100)
@given(argv_text, st.sampled_from(MODES), st.booleans(), st.booleans())
def test_one_liner_holds_its_promises(run, text, mode, as_json, bound):
    args = [text, *(BINDINGS if bound else ()), *mode, *(("--json",) if as_json else ())]
    code, out, err = run(*args)
    check_output(code, out, err, args)
    if as_json and text != "--":  # `ddx -- --json`: after `--`, "--json" is the expression
        doc = one_json_object(out, args)
        assert ("error" in doc) == (code != 0) or code == 1, (code, args, out)


@budget(100)
@given(st.lists(st.sampled_from(NASTY + ["a=1", "a=[1,2]", "=1", "a=", "1a=2", "a=x", "--wrt",
                                         "--dtype", "int64", "--grad-output", "--graph", "-x",
                                         "--json", "--no-grad", "a", "a=nan", "a=1e400"]),
                min_size=1, max_size=6),
       st.booleans())
def test_one_liner_with_hostile_arguments(run, args, as_json):
    args = ["a*2", *(("--json",) if as_json else ()), *args]  # first, so no option takes it
    code, out, err = run(*args)
    check_output(code, out, err, args)
    if as_json:
        one_json_object(out, args)


# ---------------------------------------------------------------------------------------- batch

JSON_JOBS = ['{"expr": "a*b", "bindings": {"a": 1, "b": 2}}', '{"expr": "a", "bindings": {"a": {}}}',
             '{"expr": "a", "bindings": {"a": [[1], [1, 2]]}}', '{"expr": "a", "wrt": 5}',
             '{"expr": 5}', '{}', '[]', '{"expr": "a", "bindings": {"a": "1"}, "wrt": ["a"]}',
             '{"expr": "a\\u001b]0;x\\u0007"}']


def _job(text: str, extra: tuple[str, ...]) -> bytes:
    return _bytes(" ".join([shlex.quote(text), *BINDINGS, *extra]))


def _bytes(text: str) -> bytes:
    """One line's bytes: a lone surrogate becomes the undecodable byte it stands for."""
    return text.replace("\n", " ").encode("utf-8", "surrogateescape")


job_line = st.one_of(
    st.tuples(argv_text, st.sampled_from(MODES)).map(lambda t: _job(*t)),
    st.sampled_from(JSON_JOBS).map(_bytes),
    mutated(st.sampled_from(JSON_JOBS)).map(_bytes),
    random_text.map(_bytes),
    st.binary(max_size=40).map(lambda b: b.replace(b"\n", b" ")),
    st.sampled_from([b"", b"   ", b"# comment", b"  # indented", b"\r", b"#\x1b[31m", b"\t"]),
)


def expected_job_lines(data: bytes) -> list[int]:
    """SPEC §6: every non-empty, non-# line is a job (lines end at b"\\n"; bad UTF-8 is a job)."""
    numbers = []
    for number, raw in enumerate(data.split(b"\n"), 1):
        try:
            stripped = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            stripped = "bad"
        if stripped and not stripped.startswith("#"):
            numbers.append(number)
    return numbers


@budget(100)
@given(st.lists(job_line, min_size=0, max_size=8), st.sampled_from([b"\n", b"\r\n"]),
       st.booleans())
def test_batch_answers_every_job_line_once_in_order(run, lines, sep, trailing):
    data = sep.join(lines) + (sep if trailing else b"")
    code, out, err = run("batch", "-", input=data)
    check_output(code, out, err, data)
    assert out == "" or out.endswith("\n"), out
    docs = [one_json_object(line, data, frozenset({"line"})) for line in out.splitlines()]
    assert len(docs) == len(out.split("\n")) - 1, (data, out)  # no stray line breaks
    assert [d.get("line") for d in docs] == expected_job_lines(data), (data, out)
    assert code == (1 if any("error" in d for d in docs) else 0), (code, data, out, err)


# ------------------------------------------------------------------------------------ ddx run -

@budget(80)
@given(st.lists(st.one_of(valid, mutated(), random_text), max_size=6))
def test_run_survives_any_script(run, statements):
    script = "\n".join(s.replace("\x00", "") for s in statements)
    code, out, err = run("run", "-", input=script.encode("utf-8", "surrogateescape"))
    check_output(code, out, err, script)


# Statements of a script over leaves a, b, c; their printed values go to stdout.
run_stmt = st.one_of(
    exprs.map(lambda t: f"s = {to_text(t, parens=False)}"),
    exprs.map(lambda t: to_text(t, parens=False)),
    st.sampled_from(["s", "a.grad", "b.grad", "c.grad", "s.backward()", "print(a, b, c)",
                     "s.backward(retain_graph=True)", "a.grad.zero_()", "a = 2.0", "a", "b",
                     "b = a * 3", "with no_grad: c.data.mul_(2)", "s.grad_fn", "s.requires_grad",
                     "c = tensor([1.0, 2.0], requires_grad=True)", "s.sum().backward()"]),
)
# Each of these fails whatever the state is, and prints nothing on stdout before failing.
FAILING = ["a = a + undefined_zz", "s = a +* b", "s.backward() + 1", "a = zeros(-1)",
           "b = b * tensor([1.0, 2.0, 3.0]) * tensor([1.0, 2.0])", "a.grad = tensor([1.0, 2.0, 3.0])",
           "s = s.backward() + undefined_zz", "a = ones(1e300)", "b = tensor(2.0).size(0) + a",
           "c = c.data.zero_() + undefined_zz", "a = 2.0 + undefined_zz",
           "b = logsumexp(a, undefined_zz)", "a = ((((((((((((((((((((a)))))))))))))))))))) + *"]


@budget(80)
@given(st.lists(run_stmt, min_size=1, max_size=8), st.data())
def test_a_failing_statement_changes_nothing(run, body, data):
    head = ["a = 1.5", "b = -0.5", "c = 2.0", "s = a * b + c"]
    at = data.draw(st.integers(0, len(body)))
    bad = data.draw(st.sampled_from(FAILING))
    good = "\n".join(head + body) + "\n"
    worse = "\n".join(head + body[:at] + [bad] + body[at:]) + "\n"
    code, out, err = run("run", "-", input=good)
    check_output(code, out, err, good)
    code2, out2, err2 = run("run", "-", input=worse)
    check_output(code2, out2, err2, worse)
    assert code2 == 1, (worse, out2, err2)
    assert out2 == out, (bad, worse, out, out2, err2)
