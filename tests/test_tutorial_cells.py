"""The published tutorials' cells, every statement, as a learner pastes them (issue 15):
tests/pyscripts/cells/*.py hold them verbatim, including the statements that fail in PyTorch
itself (a name the cell never imports, `None[0]` after zero_grad, a float assigned to .grad).

PyTorch's side runs each file's top-level statements one by one in one namespace, as `ddx run`
does: a failing statement is reported and the next one runs. `ddx run FILE` must print the
same lines, fail on as many statements (one `error:` report each), and warn as often (ddx's
own notes of a node's inf or nan, SPEC §3, aside).

KNOWN_FAILING: the files where ddx differs, each with why (strict xfail: a file that starts
passing fails the suite until its row is removed)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import torch_or_skip

CELLS = sorted((Path(__file__).parent / "pyscripts" / "cells").glob("*.py"))

KNOWN_FAILING = {
    "polynomial_autograd_accelerator":
        "the loop fails in its first step (`a.grad, ... = 0., ...`, PyTorch's TypeError too), "
        "and a failing statement changes nothing in ddx (SPEC §5), so a, b, c, d keep their "
        "initial values; in Python the step's updates before the error stay, and the last "
        "line prints them",
}

ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
# ddx's own notes where a node's value becomes inf or nan (SPEC §3), which PyTorch does not give
FP_WARNING = re.compile(r" gives .*(inf|nan)")

# One process imports torch once; each file's statements run in a fresh namespace.
RUNNER = """
import ast, contextlib, io, json, sys, warnings
import torch
results = {}
for path in sys.argv[1:]:
    out, err = io.StringIO(), io.StringIO()
    failed = []
    ns = {"__name__": "__main__"}
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \\
            warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = lambda m, c, f, n, file=None, line=None: print(
            f"{c.__name__}: {m}", file=sys.stderr)
        with open(path) as f:
            source = f.read()
        for stmt in ast.parse(source).body:
            code = compile(ast.Module(body=[stmt], type_ignores=[]), path, "exec")
            try:
                exec(code, ns)
            except Exception as exc:
                failed.append([stmt.lineno, type(exc).__name__, str(exc)])
    results[path] = {"stdout": out.getvalue(), "stderr": err.getvalue(), "failed": failed}
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def pytorch_runs():
    torch_or_skip()
    done = subprocess.run([sys.executable, "-c", RUNNER, *map(str, CELLS)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _lines(text: str) -> list[str]:
    return [ADDRESS.sub(" at 0x?", line) for line in text.splitlines()]


def test_every_known_failure_names_a_cells_file():
    assert set(KNOWN_FAILING) <= {c.stem for c in CELLS}


def test_the_cells_files_are_there():
    assert {"autograd_notes", "introyt_autograd", "blitz_gentle"} <= {c.stem for c in CELLS}


@pytest.mark.parametrize("script", [
    pytest.param(c, id=c.stem, marks=[pytest.mark.xfail(reason=KNOWN_FAILING[c.stem],
                                                        strict=True)]
                 if c.stem in KNOWN_FAILING else [])
    for c in CELLS])
def test_every_statement_prints_and_fails_as_in_pytorch(script, pytorch_runs):
    theirs = pytorch_runs[str(script)]
    ours = subprocess.run([sys.executable, "-m", "ddx", "run", str(script)],
                          capture_output=True, text=True, timeout=300)
    assert _lines(ours.stdout) == _lines(theirs["stdout"])
    errors = [line for line in ours.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == len(theirs["failed"]), (errors, theirs["failed"])
    assert ours.returncode == (1 if theirs["failed"] else 0), ours.stderr
    warned = sum(line.startswith("warning: ") and not FP_WARNING.search(line)
                 for line in ours.stderr.splitlines())
    assert warned == sum("Warning: " in line for line in theirs["stderr"].splitlines())
