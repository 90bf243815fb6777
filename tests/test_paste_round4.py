"""Everyday PyTorch pasted into `ddx run` (issue 15, round 4): the `>>>` examples of PyTorch's
own API documentation (torch/nn/modules/loss.py, activation.py, linear.py, torch/autograd/
functional.py, function.py, grad_mode.py, _tensor_docs.py, _torch_docs.py), with
torch.manual_seed(0) and the echoed values printed. Each script in tests/pyscripts/doc_*.py runs
through ddx and through Python with PyTorch; the outputs must be equal line for line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ddx_and_python, torch_or_skip

SCRIPTS = sorted((Path(__file__).parent / "pyscripts").glob("doc_*.py"))


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_doc_example_prints_as_pytorch(path, tmp_path):
    torch_or_skip()
    ours, theirs = ddx_and_python(path.read_text(), tmp_path)
    assert ours == theirs


def test_third_derivative_through_functional_is_one_clear_line(tmp_path):
    """hessian(create_graph=True) prints PyTorch's grad_fn, but differentiating it again is a
    third derivative, which ddx does not compute: one line saying so, no traceback."""
    script = tmp_path / "s.py"
    script.write_text("import torch\nfrom torch.autograd.functional import hessian\n"
                      "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                      "H = hessian(lambda t: t.pow(3).sum(), x, create_graph=True)\n"
                      "print(H)\nH.sum().backward()\n")
    got = subprocess.run([sys.executable, "-m", "ddx", "run", str(script)], capture_output=True,
                         text=True, timeout=120)
    assert got.stdout == "tensor([[ 6.,  0.],\n        [ 0., 12.]], grad_fn=<ViewBackward0>)\n"
    assert got.stderr.splitlines()[0] == (
        "error: the hessian made with create_graph=True is a second derivative; differentiating "
        "it again (a third derivative) is not supported by ddx")
    assert "Traceback" not in got.stderr
