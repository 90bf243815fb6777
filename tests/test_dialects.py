"""The seed chapter's listings as written (issue 15, item 4): its Scala-like and Java forms
run in `ddx run` and print PyTorch's reprs. The Scala parts are checked against PyTorch itself
(their Python reading run by Python with torch); the Java parts print the same values in
Java's words (true/false, null), as listed here."""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import torch_or_skip

from ddx.app import dialects

LISTINGS = Path(__file__).parent / "seed_listings"
ADDR = re.compile(r"0x[0-9a-f]+")


def ddx_run(path: Path) -> list[str]:
    proc = subprocess.run([sys.executable, "-m", "ddx", "run", str(path)], capture_output=True,
                          text=True, timeout=60)
    assert proc.stderr == "", proc.stderr
    return [ADDR.sub("0x", line) for line in proc.stdout.splitlines()]


def scala_part(text: str) -> str:
    """The listing's Scala-like lines (up to its Java twin)."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if dialects.detect(line) == dialects.JAVA:
            return "\n".join(lines[:i])
    return text


def pytorch(text: str) -> list[str]:
    torch = torch_or_skip()
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            python = dialects.to_python(text, dialects.SCALA).replace("true", "True") \
                .replace("false", "False")
            exec(compile(python, "<listing>", "exec"), {"torch": torch})  # noqa: S102
    finally:
        torch.set_default_dtype(before)
    return [ADDR.sub("0x", line) for line in out.getvalue().splitlines()]


JAVA_HALVES = {
    "listing01": ["Result z: 7.0"],  # (the chapter's own output: a 0-d tensor's number)
    "listing02": ["", "Tensor x: tensor([1., 2., 3.])", "x.requires_grad: false", "",
                  "Tensor y: tensor([4., 5., 6.])", "y.requires_grad: false"],
    "listing03": ["", "Tensor w: tensor([ 0.5000, -1.0000], requires_grad=True)",
                  "w2.requires_grad: true"],
    "listing04": ["", "对整数张量设置requires_grad时出错: Only Tensors of floating point and "
                      "complex dtype can require gradients", "", "已创建requires_grad=True的浮点张量: true"],
    "listing06": ["", "Gradient for x before backward: null", "Gradient for w before backward: null",
                  "Gradient for b before backward: null", "",
                  "Gradient for x after backward: 42.0",
                  "Gradient for w after backward: 28.0",
                  "Gradient for b after backward: 14.0"],
}


@pytest.mark.parametrize("name", sorted(p.stem for p in LISTINGS.glob("*.txt")))
def test_each_listing_runs_as_written_with_pytorchs_output(name):
    path = LISTINGS / f"{name}.txt"
    text = path.read_text()
    ours = ddx_run(path)
    theirs = pytorch(scala_part(text))
    assert ours[:len(theirs)] == theirs
    if name in JAVA_HALVES:
        assert ours[len(theirs):] == JAVA_HALVES[name]


@pytest.mark.parametrize("line, python", [
    ("val x = torch.tensor(2.0, requires_grad=true)", "x = torch.tensor(2.0, requires_grad=true)"),
    ("var n: Int = 3  // count", "n = 3  # count"),
    ('println(s"x is $x and ${x + 1}")', 'print(f"x is {x} and {x + 1}")'),
    ("catch (e: RuntimeError) =>", "except RuntimeError as e:"),
    ("import torch.*", "import torch"),
    ("a = 7 // 2", "a = 7 // 2"),  # (a Python line: // is floor division there)
])
def test_scala_lines(line, python):
    assert dialects.to_python(line, dialects.detect(line)) == python


@pytest.mark.parametrize("java, python", [
    ("Tensor x = tensor(new DoublePointer(2.0), requires_grad(true));",
     "x = tensor(2.0, requires_grad=True)"),
    ("Tensor v = tensor(new DoublePointer(1.0, 2.0));", "v = tensor([1.0, 2.0])"),
    ("Tensor z = y.add(b);  // result", "z = y.add(b)  # result"),
    ('System.out.printf("x: %b%n", x.requires_grad());', 'printf("x: %b%n", x.requires_grad)'),
    ("try {\n    f(1);\n} catch (RuntimeException e) {\n    g(e.getMessage());\n}",
     "try:\n    f(1)\nexcept RuntimeError as e:\n    g(str(e))\n"),
    ("Tensor r = t.mul(new Scalar(2.0));", "r = t.mul(2.0)"),
])
def test_java_lines(java, python):
    assert dialects.to_python(java, dialects.JAVA) == python


def test_a_python_script_is_never_rewritten():
    text = "x = 7 // 2  # floor\nval = 3\nprint(val)"
    assert dialects.detect(text, "script.py") == dialects.PYTHON
    assert dialects.to_python(text, dialects.PYTHON) == text


def test_errors_point_at_the_users_line():
    proc = subprocess.run([sys.executable, "-m", "ddx", "run", "-"], capture_output=True,
                          text=True, timeout=60,
                          input="val x = torch.tensor(2.0)\nval y = x * nope\nprintln(y)\n")
    assert proc.stderr.splitlines()[:2] == ["error: unknown name 'nope'",
                                            "  2 | y = x * nope"]
