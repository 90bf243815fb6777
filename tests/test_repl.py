"""The REPL language and `ddx run`: PyTorch's state rules, each as its own test, and the seed script."""

from __future__ import annotations

import code
import contextlib
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import session_run, torch_or_skip

from ddx.app.session import Session, chunks

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "examples" / "seed.ddx"


def test_tensor_defaults_and_repr():
    assert session_run("x = tensor([1.0, 2.0, 3.0])\nx\nx.requires_grad") == [
        "tensor([1., 2., 3.])", "False"]
    assert session_run("tensor(2.5, requires_grad=true)") == ["tensor(2.5000, requires_grad=True)"]
    assert session_run("tensor([1, 2])\ntensor([1, 2]).dtype") == ["tensor([1, 2])", "torch.int64"]
    # the REPL's default dtype is PyTorch's, float32: the repr names the others
    assert session_run("tensor([1.5], dtype=float32)") == ["tensor([1.5000])"]
    assert session_run("tensor([1.5], dtype=float64)\ntensor(1.5).dtype") == [
        "tensor([1.5000], dtype=torch.float64)", "torch.float32"]
    assert session_run("torch.set_default_dtype(torch.float64)\ntensor([1.5])\n"
                       "torch.get_default_dtype()\ntensor([1.5], dtype=float32)") == [
        "tensor([1.5000])", "torch.float64", "tensor([1.5000], dtype=torch.float32)"]


def test_bare_assignment_of_a_number_is_a_leaf_that_requires_grad():
    assert session_run("x = 2.0\nx\nx.is_leaf") == ["tensor(2., requires_grad=True)", "True"]


def test_gradients_accumulate_across_backward_calls():
    out = session_run("x = tensor(3.0, requires_grad=true)\n(x*x).backward()\nx.grad\n"
                      "(x*x).backward()\nx.grad")
    assert out == ["tensor(6.)", "tensor(12.)"]


def test_second_backward_through_freed_graph_fails_unless_retained():
    out = session_run("x = tensor(3.0, requires_grad=true)\ny = x * x\ny.backward()\n"
                      "y.backward()\nx.grad")
    assert out[0].startswith("error: Trying to backward through the graph a second time (or "
                             "directly access saved tensors after they have already been freed).")
    assert out[1] == "tensor(6.)"  # the failed call changed nothing
    out = session_run("x = tensor(3.0, requires_grad=true)\ny = x * x\n"
                      "y.backward(retain_graph=true)\ny.backward()\nx.grad")
    assert out == ["tensor(12.)"]


def test_graph_without_saved_tensors_can_be_walked_twice():
    # AddBackward0 saves nothing, so PyTorch allows this too
    out = session_run("x = tensor(3.0, requires_grad=true)\ny = x + 1\ny.backward()\n"
                      "y.backward()\nx.grad")
    assert out == ["tensor(2.)"]


def test_zero_grad_and_grad_zero_():
    out = session_run("x = tensor(3.0, requires_grad=true)\n(x*2).backward()\nzero_grad()\n"
                      "x.grad\n(x*2).backward()\nx.grad.zero_()\nx.grad")
    assert out == ["tensor(0.)", "tensor(0.)"]  # (the first x.grad is None: nothing printed)


def test_no_grad_block_and_one_line_form():
    script = ("w = tensor(2.0, requires_grad=true)\nwith no_grad:\n    a = w * 2\n    b = a + 1\n"
              "b.requires_grad\nb.grad_fn\nwith no_grad: c = w * 3\nc.requires_grad\n"
              "d = w * 3\nd.requires_grad")
    assert session_run(script) == ["False", "False", "True"]  # (None prints nothing)


def test_retain_grad_and_the_non_leaf_warning():
    errors: list[str] = []
    out: list[str] = []
    s = Session(out.append, errors.append)
    s.run_script("x = tensor(2.0, requires_grad=true)\ny = x * x\nz = y * 3\nz.backward()\ny.grad")
    assert out == []  # (y.grad is None: a bare None prints nothing, with the warning)
    assert errors == ["warning: The .grad attribute of a Tensor that is not a leaf Tensor is being "
                      "accessed. Its .grad attribute won't be populated during autograd.backward()."
                      " If you indeed want the .grad field to be populated for a non-leaf Tensor, "
                      "use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor"
                      " by mistake, make sure you access the leaf Tensor instead. See "
                      "github.com/pytorch/pytorch/pull/30531 for more information."]
    assert session_run("x = tensor(2.0, requires_grad=true)\ny = x * x\ny.retain_grad()\n"
                       "z = y * 3\nz.backward()\ny.grad") == ["tensor(3.)"]


def test_detach_and_requires_grad_():
    out = session_run("x = tensor(2.0, requires_grad=true)\nd = (x * 2).detach()\nd\n"
                      "d.requires_grad\nb = tensor([0.1])\nb.requires_grad_(true)\nb.is_leaf")
    assert out == ["tensor(4.)", "False", "tensor([0.1000], requires_grad=True)", "True"]


def test_integer_tensors_cannot_require_grad():
    assert session_run("tensor([1, 2], dtype=int64, requires_grad=true)") == [
        "error: Only Tensors of floating point and complex dtype can require gradients"]
    assert session_run("t = tensor([1, 2])\nt.requires_grad_(true)") == [
        "error: only Tensors of floating point dtype can require gradients"]
    assert session_run("t = tensor([1, 2])\nt.requires_grad = true") == [
        "error: only Tensors of floating point and complex dtype can require gradients"]


def test_next_functions_and_names():
    out = session_run("w = tensor(3.0, requires_grad=true)\nx = tensor(2.0, requires_grad=true)\n"
                      "b = tensor(1.0, requires_grad=true)\ny = (w*x + b)^2\ny\n"
                      "y.grad_fn.next_functions\ny.grad_fn.next_functions[0][0].next_functions\n"
                      "(w*2).grad_fn.next_functions\ny.grad_fn.name()\n"
                      "y.grad_fn.next_functions[0][0].next_functions[1][0].variable")
    strip = [re.sub(r"0x[0-9a-f]+", "0x", line) for line in out]
    assert strip == [
        "tensor(49., grad_fn=<PowBackward0>)",
        "((<AddBackward0 object at 0x>, 0),)",
        "((<MulBackward0 object at 0x>, 0), (<AccumulateGrad object at 0x>, 0))",
        "((<AccumulateGrad object at 0x>, 0), (None, 0))",
        "'PowBackward0'",
        "tensor(1., requires_grad=True)",
    ]


def test_failed_statement_assigns_nothing():
    out = session_run("x = tensor(1.0)\nx = sin(x, x)\nx")
    assert out == ["error: sin() takes 1 argument (2 given)", "tensor(1.)"]


def test_chunks_group_with_blocks_and_brackets():
    text = "a = 1\nwith no_grad:\n    b = a\n\n    c = b\nd = [1,\n  2]\n# note\ne = 3"
    assert [first for first, _ in chunks(text)] == [0, 1, 5, 8]


def test_seed_script_output_is_exactly_the_expected_file():
    proc = subprocess.run([sys.executable, "-m", "ddx", "run", str(SEED)], capture_output=True,
                          text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 1  # the listings show three errors on purpose
    expected = (ROOT / "examples" / "seed.out").read_text()
    assert proc.stdout == expected
    assert proc.stderr.count("error: ") == 3


def test_run_interleaves_errors_on_one_pipe_and_bails():
    script = "x = tensor(2.0, requires_grad=true)\nx\nundefined\nx * 2\n"
    proc = subprocess.run([sys.executable, "-m", "ddx", "run", "-"], input=script,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 1
    assert lines[0] == "tensor(2., requires_grad=True)"
    assert lines[1] == "error: unknown name 'undefined'"
    assert lines[-1] == "tensor(4., grad_fn=<MulBackward0>)"
    proc = subprocess.run([sys.executable, "-m", "ddx", "run", "--bail", "-"], input=script,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "MulBackward0" not in proc.stdout


# --- PyTorch as the oracle for the whole seed script -------------------------------------

def to_python(chunk: str) -> str:
    """The REPL language to Python + torch, for the oracle only (our own example file)."""
    text = re.sub(r"\btrue\b", "True", chunk)
    text = re.sub(r"\bfalse\b", "False", text)
    text = re.sub(r"(?<![.\w])(tensor|ones_like|zeros_like)\(", r"torch.\1(", text)
    text = text.replace("dtype=int64", "dtype=torch.int64").replace("with no_grad:",
                                                                     "with torch.no_grad():")
    return text.replace("^", "**")


def torch_transcript(text: str, torch) -> list[str]:
    lines: list[str] = []
    ns = {"torch": torch, "__name__": "__console__"}

    def zero_grad():
        for v in list(ns.values()):
            if isinstance(v, torch.Tensor) and v.is_leaf:
                v.grad = None

    ns["zero_grad"] = zero_grad
    interp = code.InteractiveInterpreter(ns)
    errors: list[str] = []
    interp.write = errors.append
    current = [""]

    def show(value):
        # a bare None prints nothing, in Python's REPL and in ddx (SPEC §5)
        if value is None:
            return
        print(repr(value))

    for _, chunk in chunks(text):
        current[0] = chunk
        buf = io.StringIO()
        errors.clear()
        saved, sys.displayhook = sys.displayhook, show
        try:
            with contextlib.redirect_stdout(buf):
                interp.runcode(compile(to_python(chunk) + "\n", "<seed>", "single"))
        finally:
            sys.displayhook = saved
        lines.extend(buf.getvalue().splitlines())
        last = "".join(errors).strip().splitlines()
        if last:
            lines.append("error: " + last[-1].split(": ", 1)[1])
    return lines


def test_seed_script_matches_pytorch_line_by_line():
    torch = torch_or_skip()
    text = SEED.read_text()
    ours = session_run(text)
    theirs = torch_transcript(text, torch)
    norm = lambda lines: [re.sub(r"0x[0-9a-f]+", "0x", line) for line in lines]  # noqa: E731
    assert norm(ours) == norm(theirs)


@pytest.mark.parametrize("line", ["val x = 1"])
def test_scala_style_val_gets_a_hint(line):
    err: list[str] = []
    Session(lambda t: None, err.append).run(line)
    assert "hint: drop the 'val': write x = ..." in err[0]
