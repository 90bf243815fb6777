"""Dropout and bernoulli_ with PyTorch's CPU numbers (ddx/graph/create_dropout.py): the mask of
one random64 draw per element from the seeded generator, 1 where its 53-bit uniform is below
1 - p; F.dropout, torch.dropout, nn.Dropout (train and eval), in a Sequential after a Linear,
and their gradients, through ddx run and python with torch 2.13."""

from __future__ import annotations

import numpy as np
from conftest import ddx_and_python, torch_or_skip

SCRIPT = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(4, 10, requires_grad=True)
y = F.dropout(x, 0.3)
print(y)
y.sum().backward()
print(x.grad)
print(F.dropout(x, 0.0) is x, F.dropout(x, 0.5, training=False) is x, torch.dropout(x, 0.2, False) is x)
m = nn.Dropout(p=0.25)
print(m)
print(m(torch.ones(8)))
m.eval()
print(m(torch.ones(3)), m.training)
net = nn.Sequential(nn.Linear(10, 5), nn.ReLU(), nn.Dropout(0.5), nn.Linear(5, 1))
print(net)
print(net[2](torch.ones(6)), torch.rand(1).item())  # (the generator where torch's is)
print(torch.empty(2, 5).bernoulli_(0.3), torch.dropout(torch.ones(6), 0.5, True))
print(F.dropout(torch.ones(3), 1.0))
"""


def test_dropout_draws_and_scales_as_pytorch(tmp_path):
    torch_or_skip()
    ours, theirs = ddx_and_python(SCRIPT, tmp_path)
    assert len(ours) == 30 and ours == theirs


def test_a_bernoulli_mask_is_one_uniform_double_per_element(tmp_path):
    """The mask drawn by hand from ddx's generator (mt19937 seeded as torch seeds it): one
    random64 per element, 1 where its 53 bits over 2**53 are below p."""
    import subprocess
    import sys

    from ddx.ops.rng import Generator

    g = Generator()
    g.manual_seed(3)
    u = (g.words64(12) & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0 ** -53
    script = tmp_path / "mask.py"
    script.write_text("import torch\ntorch.manual_seed(3)\n"
                      "print(torch.ones(12).bernoulli_(0.6).tolist())\n")
    out = subprocess.run([sys.executable, "-m", "ddx", "run", str(script)], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str([float(v) for v in (u < 0.6)])
