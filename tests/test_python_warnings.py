"""PyTorch's warnings that fire once in a process (TORCH_WARN_ONCE), as `ddx run` gives them:
the same count as python+torch prints, the same text (without ATen's "Triggered internally"
place)."""

from __future__ import annotations

import subprocess
import sys

from conftest import torch_or_skip

CROSS = """import torch
print(torch.cross(torch.tensor([1., 0, 0]), torch.tensor([0., 1, 0])))
print(torch.ones(3).cross(torch.ones(3)), torch.linalg.cross(torch.ones(3), torch.ones(3)))
print(torch.cross(torch.ones(2, 3), torch.ones(2, 3), dim=1))
"""


def test_torch_cross_without_dim_warns_once_as_pytorch(tmp_path):
    torch_or_skip()
    script = tmp_path / "cross.py"
    script.write_text(CROSS)
    ours = subprocess.run([sys.executable, "-m", "ddx", "run", str(script)],
                          capture_output=True, text=True, timeout=120)
    theirs = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120)
    assert ours.stdout == theirs.stdout
    text = "Using torch.cross without specifying the dim arg is deprecated."
    assert ours.stderr.count(f"warning: {text}") == 1 == theirs.stderr.count(text)
    assert "Please either pass the dim explicitly or simply use torch.linalg.cross." in \
        ours.stderr
