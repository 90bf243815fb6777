"""Everyday PyTorch pasted into `ddx run` (issue 15, round 6): the examples of PyTorch's own
documentation for torch.nn's modules and losses, torch.nn.functional, the optimizers and the
lr schedulers, with torch.manual_seed(0) and the results printed. Each script in
tests/pyscripts/doc6_*.py runs through ddx and through Python with PyTorch; the outputs must
be equal line for line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ddx_and_python, torch_or_skip

SCRIPTS = sorted((Path(__file__).parent / "pyscripts").glob("doc6_*.py"))


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_doc6_example_prints_as_pytorch(path, tmp_path):
    torch_or_skip()
    ours, theirs = ddx_and_python(path.read_text(), tmp_path)
    assert ours == theirs


def _ddx_run(tmp_path, text: str) -> subprocess.CompletedProcess:
    script = tmp_path / "s.py"
    script.write_text(text)
    return subprocess.run([sys.executable, "-m", "ddx", "run", str(script)], capture_output=True,
                          text=True, timeout=120)
