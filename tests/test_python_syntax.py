"""Python's compile-time refusals in `ddx run FILE.py`: a file with a syntax error that
Python refuses anywhere runs none of its statements (python prints nothing but the
SyntaxError): 'return' outside a def, 'break'/'continue' outside a loop (also in the REPL's
chunks), and a call's arguments out of Python's order (nothing positional after k=v or **kw).
Syntax ddx does not speak yet stops only its own statement."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import session_run


def _run(tmp_path, text: str):
    path = tmp_path / "script.py"
    path.write_text(text)
    return subprocess.run([sys.executable, "-m", "ddx", "run", str(path)], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("bad, message", [
    ("return 1", "'return' outside function"),
    ("break", "'break' outside loop"),
    ("if True:\n    continue", "'continue' not properly in loop"),
    ("for i in range(2):\n    def h():\n        break", "'break' outside loop"),
    ("while True:\n    pass\nelse:\n    break", "'break' outside loop"),
    ("class A:\n    return 2", "'return' outside function"),
    ('print(sep="-", 1)', "positional argument follows keyword argument"),
    ('print(**{"sep": "-"}, 1)', "positional argument follows keyword argument unpacking"),
    ('print(**{"sep": "-"}, *[1])',
     "iterable argument unpacking follows keyword argument unpacking"),
])
def test_a_syntax_error_anywhere_runs_nothing_of_the_file(tmp_path, bad, message):
    done = _run(tmp_path, f'print("before")\nx = 1\n{bad}\nprint("after")\n')
    assert done.stdout == ""
    assert done.stderr.splitlines()[0] == f"error: {message}"
    assert done.returncode == 1


def test_syntax_ddx_does_not_speak_stops_only_its_statement(tmp_path):
    done = _run(tmp_path, 'print("before")\ndef g():\n    yield 1\nprint("after")\n')
    assert done.stdout == "before\nafter\n"  # (yield is Python ddx does not speak yet)
    assert done.stderr.startswith("error: unexpected '1'")
    assert done.returncode == 1


def test_statements_where_python_allows_them_run(tmp_path):
    done = _run(tmp_path, "def f(n):\n    for i in range(n):\n        if i == 1:\n"
                          "            continue\n        if i == 3:\n            break\n"
                          "    else:\n        return -1\n    while True:\n        try:\n"
                          "            break\n        finally:\n            pass\n    return i\n"
                          "print(f(5), f(2))\nprint(*[1, 2], sep='-', **{'end': '!\\n'})\n")
    assert (done.stdout, done.stderr, done.returncode) == ("3 -1\n1-2!\n", "", 0)


def test_the_repl_refuses_a_misplaced_return_before_running_its_chunk():
    assert session_run('print("a"); return 1') == ["error: 'return' outside function"]
