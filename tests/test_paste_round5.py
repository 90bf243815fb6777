"""Everyday PyTorch pasted into `ddx run` (issue 15, round 5): the examples of PyTorch's own
documentation for torch/optim/lr_scheduler.py and optimizer.py (param groups),
torch/nn/modules/container.py and module.py (containers, buffers, state_dict, apply),
torch/nn/init.py, torch/autograd/graph.py (saved_tensors_hooks) and the shrink activations,
with torch.manual_seed(0) and the results printed. Each script in tests/pyscripts/doc5_*.py
runs through ddx and through Python with PyTorch; the outputs must be equal line for line."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ddx_and_python, ddx_run, torch_or_skip

SCRIPTS = sorted((Path(__file__).parent / "pyscripts").glob("doc5_*.py"))


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_doc5_example_prints_as_pytorch(path, tmp_path):
    torch_or_skip()
    ours, theirs = ddx_and_python(path.read_text(), tmp_path)
    assert ours == theirs


def test_narrowing_a_tensor_that_requires_grad_is_one_clear_line(tmp_path):
    """x.double() records ToCopyBackward0; float64 -> float32 with grad has no row (the
    table's finite differences cannot check a rounding function): one line says so."""
    got = ddx_run(tmp_path, "import torch\nx = torch.tensor([1.0], dtype=torch.float64, "
                             "requires_grad=True)\ny = x.float()\n")
    assert got.stderr.splitlines()[0] == ("error: ddx converts a tensor that requires grad from "
                                          "float32 to float64 only, not from float64 to float32")
    assert "Traceback" not in got.stderr


def test_trunc_normal_with_a_narrow_interval_is_one_clear_line(tmp_path):
    got = ddx_run(tmp_path, "import torch\nimport torch.nn as nn\n"
                             "nn.init.trunc_normal_(torch.empty(3), a=2.0, b=3.0)\n")
    assert got.stderr.splitlines()[0].startswith(
        "error: trunc_normal_ where [a, b] holds at most 30% of the normal distribution")
    assert "Traceback" not in got.stderr


def test_softshrink_keeps_the_sign_of_zero_as_aten(tmp_path):
    """ATen's softshrink is x * 0 inside [-lambd, lambd]: -0.0 for a negative x, bit for bit."""
    torch = torch_or_skip()
    import numpy as np

    import ddx

    x = np.array([-0.3, -0.0, 0.0, 0.2, -2.0, 2.0], dtype=np.float32)
    ours = ddx.trace("softshrink(x, lambd=0.5)", x=x, dtype="float32").output.value
    theirs = torch.nn.functional.softshrink(torch.tensor(x), 0.5).numpy()
    assert ours.tobytes() == theirs.tobytes()
