"""The REPL's Python (SPEC §5, issue 15): scripts written as PyTorch users write them run in
`ddx run` and print exactly what Python with PyTorch 2.13 prints; and nothing outside what
ddx provides is reachable."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import session_run, torch_or_skip

SCRIPTS = sorted(s for s in (Path(__file__).parent / "pyscripts").glob("*.py")
                 if not s.name.startswith("tutorial_"))  # tests/test_tutorials.py runs these


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_scripts_print_what_python_and_pytorch_print(script):
    torch_or_skip()
    theirs = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120)
    assert theirs.returncode == 0, theirs.stderr
    ours = subprocess.run([sys.executable, "-m", "ddx", "run", str(script)],
                          capture_output=True, text=True, timeout=120)
    assert ours.stderr == ""
    assert ours.stdout.splitlines() == theirs.stdout.splitlines()


@pytest.mark.parametrize("source, message", [
    ("import os", "error: No module named 'os'"),
    ("import subprocess as s", "error: No module named 'subprocess'"),
    ("from os import path", "error: No module named 'os'"),
    ("open('/etc/passwd')", "error: unknown function 'open'"),
    ("eval('1+1')", "error: unknown function 'eval'"),
    ("exec('x=1')", "error: unknown function 'exec'"),
    ("__import__('os')", "error: unknown function '__import__'"),
    ("compile('1', 'f', 'eval')", "error: 'compile' is not supported by ddx"),
    ("getattr(torch, 'load')", "error: 'torch.load' is not supported by ddx"),
    ("getattr(torch.ones(2), '__dict__')",
     "error: '__dict__' is not available in ddx (no dunder attributes)"),
    ("getattr(torch, '__builtins__')",
     "error: '__builtins__' is not available in ddx (no dunder attributes)"),
    ("getattr(getattr, '__self__')",
     "error: '__self__' is not available in ddx (no dunder attributes)"),
    ("getattr(math, 'sys')", "error: module 'math' has no attribute 'sys'"),
    ("().__class__.__bases__", "error: 'tuple' attribute '__class__' is not available in ddx"),
    ("type(torch.ones(2)).__mro__", "error: 'str' attribute '__mro__' is not available in ddx"),
    ("[].__class__.__subclasses__()",
     "error: 'list' attribute '__class__' is not available in ddx"),
    ("setattr(torch, 'x', 1)", "error: ddx cannot set attribute 'x' of a module"),
    ("setattr(print, '__call__', 1)", "error: '__call__' is not available in ddx (no dunder "
                                      "attributes)"),
    ("delattr(torch, 'tensor')", "error: ddx cannot delete attribute 'tensor' of a module"),
    ("class C:\n    pass\nc = C()\ndel c.__dict__",
     "error: '__dict__' is not available in ddx (no dunder attributes)"),
    ("import threading\nthreading._start_new_thread",
     "error: module 'threading' has no attribute '_start_new_thread'"),
    ("globals()", "error: unknown function 'globals'"),
    ("breakpoint()", "error: unknown function 'breakpoint'"),
    ("input()", "error: unknown function 'input'"),
    ("import sys", "error: No module named 'sys'"),
    ("torch.save(torch.ones(2), 'f.pt')", "error: 'torch.save' is not supported by ddx"),
    ("np = __import__('numpy')", "error: unknown function '__import__'"),
    ("f = lambda: 0\nf.__globals__", "error: 'function' attribute '__globals__' is not "
                                     "available in ddx"),
    ("(1).__class__", "error: a number has no attribute '__class__'"),
    ("[].__class__", "error: 'list' attribute '__class__' is not available in ddx"),
    ("'a'.__class__.__mro__", "error: 'str' attribute '__class__' is not available in ddx"),
    ("torch.load('model.pt')", "error: 'torch.load' is not supported by ddx"),
    ("math.__dict__", "error: 'PyModule' attribute '__dict__' is not available in ddx"),
    ("import math\nmath.os", "error: module 'math' has no attribute 'os'"),
])
def test_nothing_outside_ddx_is_reachable(source, message):
    assert session_run("import torch\nimport math\n" + source)[-1] == message


@pytest.mark.parametrize("source, lines", [
    ("def f():\n    return g()\ndef g():\n    return f()\nf()",
     ["error: maximum recursion depth exceeded"]),
    ("break", ["error: 'break' outside loop"]),
    ("return 1", ["error: 'return' outside function"]),
    ("def f(a):\n    return a\nf()", ["error: f() missing 1 required positional argument: 'a'"]),
    ("def f(a):\n    return a\nf(1, 2)", ["error: f() takes 1 positional argument but 2 were "
                                           "given"]),
    ("def f(a):\n    return a\nf(b=1)", ["error: f() got an unexpected keyword argument 'b'"]),
    ("raise RuntimeError('stop')", ["error: stop"]),
    ("assert 1 == 2, 'no'", ["error: no"]),
    ("x = tensor([1., 2.], requires_grad=True)\nx += 1",
     ["error: a leaf Variable that requires grad is being used in an in-place operation."]),
    ("x = tensor([1., 2.])\nif x:\n    pass",
     ["error: Boolean value of Tensor with more than one value is ambiguous"]),
    ("[1, 2][5]", ["error: list index out of range"]),
    ("{'a': 1}['b']", ["error: KeyError: 'b'"]),
    ("try:\n    [1][3]\nexcept IndexError as e:\n    print('index', e)", ["index list index out "
                                                                         "of range"]),
    ("try:\n    nope\nexcept NameError:\n    print('name')", ["name"]),
    ("try:\n    tensor([1.]) @ tensor([1., 2.])\nexcept ValueError:\n    print('no')\n"
     "except RuntimeError:\n    print('runtime')", ["runtime"]),
])
def test_python_errors_in_pythons_words(source, lines):
    assert session_run(source) == lines


def test_a_failed_statement_in_a_loop_leaves_the_rest_of_the_script_running():
    out = session_run("total = 0\nfor i in range(3):\n    total += i\nprint(total)\n"
                      "for i in range(3):\n    total += nope\nprint(total)")
    assert out == ["3", "error: unknown name 'nope'", "3"]


def test_in_place_updates_under_no_grad_change_the_tensor_every_name_sees():
    out = session_run("w = tensor([1., 2.], requires_grad=True)\nparams = [w]\n"
                      "(w * w).sum().backward()\nwith torch.no_grad():\n"
                      "    for p in params:\n        p -= 0.5 * p.grad\nprint(w)")
    assert out == ["tensor([0., 0.], requires_grad=True)"]


def test_a_py_file_prints_what_python_prints_and_other_scripts_echo(tmp_path):
    text = "import torch\ntorch.manual_seed(0)\nx = torch.tensor(2.0)\nx * 3\nprint(x)\n"
    for name, want in (("s.py", ["tensor(2.)"]),
                       ("s.ddx", ["<torch._C.Generator object at 0x7f00000e0000>",
                                  "tensor(6.)", "tensor(2.)"])):
        path = tmp_path / name
        path.write_text(text)
        proc = subprocess.run([sys.executable, "-m", "ddx", "run", str(path)],
                              capture_output=True, text=True, timeout=60)
        assert proc.stdout.splitlines() == want, name


def test_in_place_on_a_view_of_a_leaf_is_refused_as_pytorch_refuses_it():
    out = session_run("x = tensor([[1., 2.], [3., 4.]], requires_grad=True)\nx[0].zero_()\n"
                      "x.view(4).zero_()\nv = x[1]\nv += 1\ny = x * 2\nprint(y[0].zero_())\n"
                      "with torch.no_grad():\n    x[0].zero_()\nprint(x)")
    view_error = ("error: a view of a leaf Variable that requires grad is being used in an "
                  "in-place operation.")
    assert out == [view_error, view_error, view_error,
                   "tensor([0., 0.], grad_fn=<SelectBackward0>)",
                   "tensor([[0., 0.],", "        [3., 4.]], requires_grad=True)"]


@pytest.mark.parametrize("name, fix", [("nn", "from torch import nn"),
                                       ("np", "import numpy as np"), ("math", "import math"),
                                       ("optim", "from torch import optim")])
def test_a_module_used_before_its_import_names_the_import(name, fix):
    """`nn.Linear(2, 3)` with no import: ddx says which import is missing (it suggested the
    constant 'nan' for 'nn'); caught, the error is Python's NameError with Python's words."""
    assert session_run(f"{name}.x") == [f"error: unknown name '{name}'; did you forget '{fix}'?"]
    assert session_run(f"try:\n    {name}.x\nexcept NameError as e:\n    print(e)\n") == \
        [f"name '{name}' is not defined"]
