"""Everyday PyTorch pasted into `ddx run` (issue 15, round 4): the `>>>` examples of PyTorch's
own API documentation (torch/nn/modules/loss.py, activation.py, linear.py, torch/autograd/
functional.py, function.py, grad_mode.py, _tensor_docs.py, _torch_docs.py), with
torch.manual_seed(0) and the echoed values printed. Each script in tests/pyscripts/doc_*.py runs
through ddx and through Python with PyTorch; the outputs must be equal line for line."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ddx_and_python, torch_or_skip

SCRIPTS = sorted((Path(__file__).parent / "pyscripts").glob("doc_*.py"))


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_doc_example_prints_as_pytorch(path, tmp_path):
    torch_or_skip()
    ours, theirs = ddx_and_python(path.read_text(), tmp_path)
    assert ours == theirs
